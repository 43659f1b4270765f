"""``explore``: compile a function or module on example inputs and record it all."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any

from compiler import _compat
from compiler.capture.failures import classify_failure
from compiler.capture.observe import Boundary, Observation, observe
from compiler.capture.recording import Recording, recording
from compiler.capture.spec import CompileSpec, describe_target
from compiler.errors import CompileError, ExploreError, OptionError, TargetError
from compiler.measure.call_timing import call_timing
from compiler.measure.kernel_timing import REPEATS
from compiler.model import Exploration, Options
from compiler.profile.calls import calls_again, frame_calls, untimed_note
from compiler.profile.events import region_calls
from compiler.profile.own_run import OwnRun, own_measured, own_times


def explore(
    target: Callable[..., Any],
    *example_inputs: Any,
    mode: str | None = None,
    backend: str | Callable[..., Any] = "inductor",
    dynamic: bool | None = None,
    fullgraph: bool = False,
    options: dict[str, Any] | None = None,
    keep_caches: bool = False,
    wrap: bool | None = None,
    reset: bool = False,
    decompile: bool = True,
    triton_stages: bool | None = None,
    measure: bool = False,
    **kwargs: Any,
) -> Exploration:
    """Run ``target`` under torch.compile and return every stage it went through.

    Args:
        target: a function, an ``nn.Module``, or a callable that itself calls
            compiled code (a training step, a loop over shapes).
        *example_inputs: positional arguments for ``target``.
        mode, backend, dynamic, fullgraph, options: as in ``torch.compile``.
        keep_caches: keep the FX graph and AOTAutograd caches on (stages that a
            cache hit skips are then missing, and the Exploration says so).
        wrap: compile ``target`` with torch.compile (True), or run it as it is and
            record the compiles it triggers itself (False). By default, targets
            already returned by ``torch.compile``, and functions whose code calls
            ``torch.compile`` or reads a compiled function or module (a training step,
            ``lambda: run(torch.compile(f))``), run as they are; others are wrapped.
        reset: reset Dynamo for the whole process first (``torch.compiler.reset()``):
            everything compiled earlier is thrown away and compiles again on its next
            call, and ids are numbered from ``0/0``. Off by default: capture compiles
            beside what the process compiled before (a backend of its own for every
            compiled call, in a recompile region of its own), so every compile is
            recorded and nothing of the user's is reused, dropped or rebuilt; ids are
            numbered from ``0/0`` all the same (the notes give torch's own ids where
            they differ).
        decompile: decompile Dynamo's transformed bytecode (best effort), when the
            decompiled source is first read.
        triton_stages: keep each Triton kernel's TTIR/TTGIR/LLVM IR/PTX/SASS (default:
            when CUDA is available).
        measure: time each kernel from the target's own run. The run is profiled with
            ``torch.profiler`` (device kernels on CUDA; on a CPU, Inductor's C++ kernels,
            generated with ``cpp.enable_kernel_profile`` on for the run), its kernel
            events are linked to the explored kernels and split by compiled-region call,
            and each kernel's median time is taken over the calls after its code's warm-up
            (the first call; on CUDA graphs, every call before the first replay): a
            training loop of 12 steps is timed from steps 2..12 and nothing calls it
            again. The profiled run becomes ``Exploration.profile``; on CUDA the bytes
            each kernel moves and its bandwidth against the device's measured copy
            bandwidth (FLOPs for matmuls) come with it. Eager against compiled call time
            and peak memory are not measured then (they need extra calls). Only where
            the run called each compiled frame once, counted over its recompiles (one
            step; ``compiler.profile.calls.calls_again``), and on CUDA only, the
            target is called again: 3 warm-up calls and 20 profiled ones for the kernels,
            as many eager and compiled calls for ``Exploration.call_timing`` (eager
            against compiled time per call, device and host time, CUDA graph replays,
            recordings, warm-ups and input copies), and peak memory; the state those
            calls can change is saved first and restored after
            (``compiler.capture.state``). The notes say which of the two happened.
        **kwargs: keyword arguments for ``target``.

    What capture does to the process, and what it restores (``reset=False``): for the
    duration it adds log handlers, sets a few Inductor and AOTAutograd config flags
    (provenance tracking on, the FX graph and AOTAutograd caches off; with
    ``measure=True`` also ``cpp.enable_kernel_profile``, and ``torch.profiler`` around
    the run), a bytecode hook,
    and swaps Dynamo's per-call callback choice (``eval_frame._callback_from_stance``) so
    that every compiled call of the run, whichever ``torch.compile`` result it goes
    through (the wrapped target, a function or module compiled in an earlier cell, a
    second module of the same class), compiles with a backend of the capture's own that
    calls the user's compiler with the user's settings; all of it is restored after, also
    when the target raises. The user's cache entries are neither used, dropped nor
    rebuilt: afterwards the capture's own entries are dropped and everything compiled
    before runs from its own entries without compiling again. torch marks a code to run
    eagerly once a compile of it failed or was skipped; the mark is lifted from the
    captured code (the target, or the compiled functions and modules a ``wrap=False``
    target names) for the capture and put back after it, and marks the capture's own
    compiles leave are taken back. Not restored: Dynamo's frame counter (torch's own
    compile ids go on), its record of the shapes a code was called with (a later
    recompile of the user's may come out dynamic a call earlier), and the one-time
    setup torch does on a first compile. The target runs once (``measure=True`` on a target
    that calls its compiled code once aside).
    What extra calls (``measure=True``, or classifying a failure) may change and capture
    cannot put back: iterators and generators (a data loader's position), files, and
    objects the target does not reach through its closure, globals, bound object or inputs.
    All of it is one observation (``compiler.capture.observe``), which is also where the
    explorer's own failures stop (a recording hook, a parser, linking the profile, timing,
    putting state back): each is in ``Exploration.errors`` with its stage and traceback,
    and the target's run ends as a plain run would.

    Returns:
        The Exploration: one ``Compile`` per compile id, recompiles and resume
        functions included.

    Raises:
        TargetError: ``target`` is not callable.
        OptionError: unknown backend, mode or Inductor option.
        InputError: the target fails on these inputs even without torch.compile.
        CompileError: torch.compile failed (e.g. a graph break with fullgraph=True).
        Each carries ``.exploration`` with what was recorded before the failure.

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore(lambda x: x.sin() + 1, torch.randn(8), backend="aot_eager")
        >>> sorted(exp.compiles[0].graphs)[:2]
        ['aot_inference_graph', 'dynamo_output_graph']
    """
    if not callable(target):
        msg = (
            f"explore() needs a function or an nn.Module to run, but got a "
            f"{type(target).__name__} ({target!r:.60}). Pass the callable itself, not its result."
        )
        raise TargetError(msg)
    wrap_defaulted = wrap is None
    if wrap is None:
        calls_compiled = not _compat.is_compiled(target) and _calls_compiled_code(target)
        wrap = not (_compat.is_compiled(target) or calls_compiled)
        if calls_compiled and (mode or options or backend != "inductor"):
            msg = (
                f"{describe_target(target)} calls compiled code itself (torch.compile or a "
                "compiled function or module), so explore() would run it as it is and the "
                "backend, mode and options given here would not apply. Pass wrap=False and give "
                "them to your own torch.compile call, or wrap=True to compile the whole callable."
            )
            raise OptionError(msg)
    spec = CompileSpec(backend=backend, mode=mode, dynamic=dynamic, fullgraph=fullgraph,
                       options={} if options is None else options,
                       keep_caches=keep_caches).check(wrap=wrap)  # fmt: skip
    opts = spec.record(wrapped=wrap)
    recorded: list[Exploration] = []
    notes: list[str] = []
    with observe(target, example_inputs, kwargs, wrap=wrap, reset=reset) as obs:
        run = obs.compiled(spec, target) if wrap else target
        try:
            exploration = _explore(run, target, example_inputs, kwargs, spec, opts, notes,
                                   wrap=wrap, wrap_defaulted=wrap_defaulted, measure=measure,
                                   decompile=decompile, triton_stages=triton_stages,
                                   own=obs.own is not None and obs.own.active, obs=obs,
                                   recorded=recorded)  # fmt: skip
        except ExploreError:
            raise  # what the user's run raised, classified (documented)
        except Exception as exc:
            if not recorded:
                raise
            # the user's run is over: what failed is the explorer's own work after it
            obs.boundary.caught("measure", exc)
            exploration = dataclasses.replace(recorded[-1], notes=(*recorded[-1].notes, *notes))
    return obs.finish(exploration)


def _explore(
    run: Callable[..., Any],
    target: Callable[..., Any],
    example_inputs: tuple[Any, ...],
    kwargs: dict[str, Any],
    spec: CompileSpec,
    opts: Options,
    notes: list[str],
    *,
    wrap: bool,
    wrap_defaulted: bool,
    measure: bool,
    decompile: bool,
    triton_stages: bool | None,
    own: bool = False,
    obs: Observation,
    recorded: list[Exploration],
) -> Exploration:
    import torch

    keep_caches = spec.keep_caches
    rerun = None
    if wrap:

        def rerun() -> object:
            # a failure is classified by running the target eagerly: an extra call
            with obs.extra_calls(), torch.no_grad():
                return target(*example_inputs, **kwargs)

    own_run = OwnRun(cuda=torch.cuda.is_available()) if measure else None
    torch_ids: dict[str, str] = {}

    def call() -> object:
        if own_run is None:
            return _kept(run(*example_inputs, **kwargs))
        with obs.boundary.around("profile", own_run.profiling()):
            return _kept(run(*example_inputs, **kwargs))

    try:
        exploration = record_run(
            call,
            target=describe_target(target),
            options=opts,
            keep_caches=keep_caches,
            decompile=decompile,
            triton_stages=triton_stages,
            device=_input_device(example_inputs, kwargs),
            rerun_eagerly=rerun,
            torch_ids=torch_ids,
            boundary=obs.boundary,
        )
        recorded.append(exploration)
    except CompileError as error:
        cause = error.__cause__
        internal = cause is not None and not (
            _compat.is_graph_break_error(cause) or _compat.is_backend_failure(cause)
        )
        if wrap and wrap_defaulted and internal:
            # Compiling a callable that compiles code itself is the usual cause of an
            # internal Dynamo error here: name the way out.
            error.args = (
                f"{str(error).rstrip('.')}. If {describe_target(target)} calls torch.compile or "
                "compiled code itself, pass wrap=False to record the compiles it triggers instead.",
            )
        raise
    if not exploration.compiles and spec.backend is not None:
        # torch marks a code object to run eagerly once a compile of it failed or was skipped,
        # whatever the backend; the capture lifts it only where it can tell (own_compiles)
        cached = (
            "no compiled code ran"
            if own
            else "the code the target ran was already compiled in this process (its cache "
            "entries still hold)"
        )
        notes.append(
            f"Dynamo compiled nothing in this capture: {cached}, or an earlier compile of it "
            "failed and torch now runs it eagerly (the capture lifts that mark only from a code "
            "with no cache entry that the target names). explore(..., reset=True) records from "
            "a fresh start (and drops every other compile of the process)."
        )
    if own_run is not None:
        # the profile room decides from the run's calls per compiled frame (calls_again)
        frames = frame_calls(region_calls(own_run.spans), torch_ids)
        times = own_times(exploration, own_run, torch_ids)
        if times.durations:
            exploration = own_measured(exploration, times)
            notes.append(times.note())
            # frames timed from nothing: every call of theirs compiled first (a recompile
            # per call, as a scheduled lr's optimizer step until the recompile limit)
            untimed = {k: f for k, f in frames.items() if len(f.warm_ups) == len(f.calls)}
            if untimed:
                notes.append(untimed_note(untimed))
        else:
            if times.profile.kernel_events or times.profile.regions:
                # the calls of each compiled code, also where no kernel ran (eager backends)
                exploration = dataclasses.replace(exploration, profile=times.profile)
            if own_run.skipped:
                notes.append(f"Your run was not profiled: {own_run.skipped}; nor called again.")
            elif calls_again(frames):
                with obs.extra_calls() as saved:
                    exploration = _measured(exploration, lambda: run(*example_inputs, **kwargs))
                if exploration.call_timing is not None and saved is not None:
                    notes.append(
                        f"Timed from {REPEATS} extra calls after 3 warm-ups (your run called "
                        "each compiled frame once), and eager against compiled from as many "
                        f"more: the target's state was {saved.describe()}"
                    )
            elif frames:
                notes.append(untimed_note(frames))
        if own_run.printed:
            notes.append(own_run.printed_note())
    if notes:
        exploration = dataclasses.replace(exploration, notes=(*exploration.notes, *notes))
    return exploration


def record_run(
    run: Callable[[], object],
    *,
    target: str,
    options: Options,
    keep_caches: bool = False,
    decompile: bool = True,
    triton_stages: bool | None = None,
    device: str = "",
    rerun_eagerly: Callable[[], object] | None = None,
    cell: str = "",
    torch_ids: dict[str, str] | None = None,
    boundary: Boundary | None = None,
) -> Exploration:
    """Call ``run`` with every compile it triggers recorded; the one place that turns a
    failure of the user's code into an ``ExploreError`` (``classify_failure``), for
    ``explore`` and ``explore_cell`` alike. A failure of the recording's own work never
    reaches ``run``: it is kept in ``boundary`` (by default one of its own, whose failures
    go in the Exploration's errors), and ``run`` runs even where recording cannot start.

    Args:
        run: calls the compiled code.
        target: the name of what is compiled, for the Exploration and the messages.
        options: how it is compiled, as the Exploration records it.
        keep_caches, decompile, triton_stages: as in ``explore``.
        device: the inputs' device type ("" to take the trace's).
        rerun_eagerly, cell: as in ``classify_failure``.
        torch_ids: filled with torch's own compile ids -> the Exploration's, where they
            differ (the profiler's regions name torch's).
        boundary: where the explorer's own failures are kept (an ``Observation``'s).

    Raises:
        ExploreError: what ``run`` raised, classified, from the original exception;
            an ``ExploreError`` raised by ``run`` itself passes through as it is, and
            where classifying fails, the original exception is raised as it is.

    Example:
        >>> import torch
        >>> f = torch.compile(torch.cos, backend="eager")
        >>> exp = record_run(lambda: f(torch.ones(2)), target="cos", options=Options())
        >>> len(exp.compiles)
        1
    """
    failure: Exception | None = None
    guard = boundary or Boundary()
    recorder = recording(keep_caches=keep_caches, decompile=decompile,
                         triton_stages=triton_stages, boundary=guard)  # fmt: skip
    rec: Recording | None
    with guard.around("recording", recorder) as rec:
        if rec is not None:
            rec.target, rec.options, rec.device = target, options, device
        try:
            run()
        except ExploreError:
            raise
        except Exception as exc:
            failure = exc
    if rec is None:  # recording could not start: the run ran unrecorded
        rec = Recording(target=target, options=options, device=device, boundary=guard,
                        reports=boundary is None)  # fmt: skip
    exploration = rec.exploration()
    if torch_ids is not None:
        torch_ids.update(rec.torch_ids)
    if failure is None:
        return exploration
    error = None
    if boundary is not None:  # the error's Exploration holds what the explorer's work kept
        exploration = dataclasses.replace(exploration, errors=(*exploration.errors, *guard.kept()))
    with guard.guard("classify"):  # where ours fails, the user's exception goes on as it was
        error = classify_failure(failure, target=target, options=options, exploration=exploration,
                                 rerun_eagerly=rerun_eagerly, cell=cell)  # fmt: skip
    if error is None:
        raise failure
    raise error from failure


_RESULTS: contextvars.ContextVar[list[object] | None] = contextvars.ContextVar(
    "explore_results", default=None
)


@contextlib.contextmanager
def kept_results() -> Iterator[list[object]]:
    """What the target returned in each ``explore`` run inside the block, in order: the
    objects themselves, not copies (``compiler.numerics`` compares the compiled run's
    result with an eager rerun's).

    Example:
        >>> import torch
        >>> with kept_results() as results:
        ...     _ = explore(torch.cos, torch.zeros(2), backend="eager")
        >>> results[0].tolist()
        [1.0, 1.0]
    """
    results: list[object] = []
    token = _RESULTS.set(results)
    try:
        yield results
    finally:
        _RESULTS.reset(token)


def _kept(result: object) -> object:
    results = _RESULTS.get()
    if results is not None:
        results.append(result)
    return result


def _calls_compiled_code(target: Callable[..., Any]) -> bool:
    """Whether a plain function's code calls ``torch.compile`` or reads a compiled object.

    Looks at the names its code (and the code of functions nested in it) uses, and at
    the global and closure values those names hold; nothing is called. Modules and
    other callables are never treated this way.
    """
    code = getattr(target, "__code__", None)
    if not isinstance(code, CodeType):
        return False
    names: set[str] = set()
    pending = [code]
    while pending:
        current = pending.pop()
        names.update(current.co_names)
        names.update(current.co_freevars)
        pending.extend(c for c in current.co_consts if isinstance(c, CodeType))
    if {"torch", "compile"} <= names:  # torch.compile(...) somewhere in its code
        return True
    values: list[Any] = []
    globals_ = getattr(target, "__globals__", {}) or {}
    values.extend(globals_[n] for n in names if n in globals_)
    for cell in getattr(target, "__closure__", None) or ():
        with contextlib.suppress(ValueError):  # an empty cell
            values.append(cell.cell_contents)
    return any(_compat.is_compiled(v) for v in values if callable(v))


def _measured(exploration: Exploration, run: Callable[[], Any]) -> Exploration:
    import torch

    from compiler.measure.kernel_timing import (
        copy_peak_gbps,
        matmul_peak_tflops,
        measure,
        timing,
    )
    from compiler.model import StageError

    if not torch.cuda.is_available():
        note = StageError(
            stage="timing",
            message="your run called each compiled frame once, so its kernels could only be "
            "timed by calling the target again, which capture does on CUDA only.",
        )
        return dataclasses.replace(exploration, errors=(*exploration.errors, note))
    names = {
        k.name
        for c in exploration.compiles
        for k in c.kernels()
        if k.language in ("triton", "extern")
    }
    with _cudagraph_events() as graph_events:
        profiled = measure(run, names)
    durations = profiled.durations
    call = call_timing(run, profiled, graph_events)
    from compiler.measure.memory_peak import as_counters, call_peaks  # issue 35: peak memory

    counters = {**exploration.counters, **as_counters(call_peaks(run))}
    peak = copy_peak_gbps()
    peak_tflops = matmul_peak_tflops()
    compiles = []
    for c in exploration.compiles:
        outputs = tuple(
            dataclasses.replace(
                out,
                kernels=tuple(
                    dataclasses.replace(k, timing=timing(k, out, durations[k.name], peak, REPEATS))
                    if durations.get(k.name)
                    else k
                    for k in out.kernels
                ),
            )
            for out in c.output_code
        )
        compiles.append(dataclasses.replace(c, output_code=outputs))
    environment = dataclasses.replace(
        exploration.environment,
        peak_copy_gbps=peak,
        peak_matmul_tflops=peak_tflops,
        cudagraph_replays_per_run=profiled.graph_launches / REPEATS,
    )
    return dataclasses.replace(
        exploration, compiles=tuple(compiles), environment=environment, call_timing=call,
        counters=counters,
    )


@contextlib.contextmanager
def _cudagraph_events() -> Iterator[list[Any]]:
    """CUDA graph warm-ups and recordings that happen inside the block (from Inductor's
    cudagraph trees log), with the logger restored afterwards."""
    import logging

    from compiler.capture.recording import _CudagraphHandler

    sink: list[Any] = []
    log = _compat.cudagraph_trees_logger()
    handler = _CudagraphHandler(sink)
    level, propagate = log.level, log.propagate
    if not log.isEnabledFor(logging.INFO):
        log.propagate = False
    log.setLevel(logging.DEBUG)
    log.addHandler(handler)
    try:
        yield sink
    finally:
        handler.finish()
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def _input_device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    import torch

    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device.type
    return ""
