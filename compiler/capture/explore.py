"""``explore``: compile a function or module on example inputs and record it all."""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any

from compiler import _compat
from compiler.capture.recording import describe_target, recording
from compiler.errors import CompileError, ExploreError, InputError, OptionError, TargetError
from compiler.model import CallTiming, Exploration, Options, as_jsonable


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
    reset: bool = True,
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
        reset: reset Dynamo first (``torch.compiler.reset()``) so that every
            compile is recorded, numbered from ``0/0``, rather than served from
            code compiled earlier in the process.
        decompile: decompile Dynamo's transformed bytecode (best effort), when the
            decompiled source is first read.
        triton_stages: keep each Triton kernel's TTIR/TTGIR/LLVM IR/PTX/SASS (default:
            when CUDA is available).
        measure: on CUDA, run the compiled target again (3 warm-up calls, then 20
            profiled ones) and record each Triton kernel's median device time, the
            bytes it moves and the bandwidth it achieved against the device's
            measured copy bandwidth (library calls too, FLOPs for matmuls and
            convolutions), and fill ``Exploration.call_timing``: eager against compiled
            time per call, device and host time, CUDA graph replays, recordings,
            warm-ups and input copies per call, with notes on what explains a slow call.
            Off by default: it re-runs the target (46 compiled and 23 eager calls).
        **kwargs: keyword arguments for ``target``.

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
    import torch

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
    _check_options(backend, mode, options, wrap)
    opts = Options(
        backend=backend if isinstance(backend, str) else describe_target(backend),
        mode=mode,
        dynamic=dynamic,
        fullgraph=fullgraph,
        options={k: as_jsonable(v) for k, v in (options or {}).items()},
        keep_caches=keep_caches,
        wrapped=wrap,
    )
    if reset:
        torch.compiler.reset()
    run = target
    if wrap:
        run = torch.compile(target, backend=backend, mode=mode, dynamic=dynamic,
                            fullgraph=fullgraph, options=options)  # fmt: skip
    rec_failure: BaseException | None = None
    with recording(
        keep_caches=keep_caches, decompile=decompile, triton_stages=triton_stages
    ) as rec:
        rec.target = describe_target(target)
        rec.options = opts
        rec.device = _input_device(example_inputs, kwargs)
        try:
            run(*example_inputs, **kwargs)
        except Exception as exc:
            rec_failure = exc
    exploration = rec.exploration()
    if rec_failure is not None:
        rerun = None
        if opts.wrapped:

            def rerun() -> object:
                with torch.no_grad():
                    return target(*example_inputs, **kwargs)

        error = classify_failure(
            rec_failure,
            target=describe_target(target),
            options=opts,
            exploration=exploration,
            rerun_eagerly=rerun,
        )
        internal = not (
            _compat.is_graph_break_error(rec_failure) or _compat.is_backend_failure(rec_failure)
        )
        if wrap and wrap_defaulted and internal and isinstance(error, CompileError):
            # Compiling a callable that compiles code itself is the usual cause of an
            # internal Dynamo error here: name the way out.
            error.args = (
                f"{str(error).rstrip('.')}. If {describe_target(target)} calls torch.compile or "
                "compiled code itself, pass wrap=False to record the compiles it triggers instead.",
            )
        raise error from rec_failure
    if measure:
        exploration = _measured(exploration, lambda: run(*example_inputs, **kwargs))
    return exploration


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

    from compiler.gpu.kernel_timing import (
        REPEATS,
        copy_peak_gbps,
        matmul_peak_tflops,
        measure,
        timing,
    )
    from compiler.model import StageError

    if not torch.cuda.is_available():
        note = StageError(stage="timing", message="per-kernel timing needs a CUDA device.")
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
        exploration, compiles=tuple(compiles), environment=environment, call_timing=call
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
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def call_timing(run: Callable[[], Any], profiled: Any, graph_events: list[Any]) -> CallTiming:
    """Eager against compiled time per call, and what the compiled call spent it on."""
    import torch

    from compiler.gpu.kernel_timing import REPEATS

    runs = REPEATS
    with torch.compiler.set_stance("force_eager"):
        eager, _ = _timed(run, runs)
    before = len(graph_events)
    compiled, host = _timed(run, runs)
    during_timing = graph_events[before:]
    # every compiled call since the events started: the profiled runs and these timed
    # runs, each after 3 warm-up calls
    per_call = 2 * (runs + 3)
    recordings = sum(1 for e in graph_events if e.metadata.get("what") == "recording")
    warmups = sum(1 for e in graph_events if e.metadata.get("what") == "warmup")
    device_ms = profiled.device_us / runs / 1e3
    timing = CallTiming(
        runs=runs,
        eager_ms=statistics.median(eager),
        compiled_ms=statistics.median(compiled),
        eager_spread_ms=(min(eager), max(eager)),
        compiled_spread_ms=(min(compiled), max(compiled)),
        device_ms=device_ms,
        cpu_ms=statistics.median(host),
        cudagraph_replays=profiled.graph_launches / runs,
        cudagraph_recordings=recordings / per_call,
        cudagraph_warmups=warmups / per_call,
        input_copy_bytes=_input_copy_bytes(profiled.graph_launches / runs),
    )
    notes = _call_notes(timing, profiled, len(during_timing))
    return dataclasses.replace(timing, notes=tuple(notes))


def _input_copy_bytes(replays_per_call: float) -> float:
    """Bytes copied into CUDA graph inputs per call: each replay of a recorded graph
    first copies its non-static inputs into the graph's buffers. With several graphs,
    their replays are taken as equally frequent."""
    sizes = _compat.cudagraph_input_copy_bytes()
    if not sizes or replays_per_call <= 0:
        return 0.0
    return replays_per_call * sum(sizes) / len(sizes)


def _timed(run: Callable[[], Any], runs: int) -> tuple[list[float], list[float]]:
    """Per call: synchronised wall time and host time (until the call returned), ms."""
    import time

    import torch

    for _ in range(3):
        run()
    torch.cuda.synchronize()
    total, host = [], []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        returned = time.perf_counter()
        torch.cuda.synchronize()
        end = time.perf_counter()
        total.append((end - start) * 1e3)
        host.append((returned - start) * 1e3)
    return total, host


def _call_notes(t: CallTiming, profiled: Any, graph_events_timed: int) -> list[str]:
    notes = []
    if t.compiled_ms > t.eager_ms:
        notes.append(
            f"compiled is slower than eager: {t.compiled_ms:.3f} ms against "
            f"{t.eager_ms:.3f} ms per call ({t.speedup:.2f}x)."
        )
    device = t.device_ms or 0.0
    remedy = (
        "CUDA graphs already replay the kernels: what is left is the call's own host work "
        "(guards, copying inputs into the graph), which larger inputs amortise."
        if t.cudagraph_replays > 0
        else "larger inputs or mode='reduce-overhead' (CUDA graphs) amortise it."
    )
    if t.cpu_ms is not None and t.compiled_ms > 0 and device < 0.5 * t.compiled_ms:
        notes.append(
            f"the compiled call is host-bound: its kernels take {device:.3f} ms on the device "
            f"while the host spends {t.cpu_ms:.3f} ms in the call (guards, the wrapper, "
            f"launches); {remedy}"
        )
    if t.cudagraph_recordings > 0 or t.cudagraph_warmups > 0 or graph_events_timed:
        notes.append(
            f"CUDA graphs were warmed up {t.cudagraph_warmups:.2f} and recorded "
            f"{t.cudagraph_recordings:.2f} times per call after warm-up: every new recording "
            "re-runs the function eagerly and captures it again. Inputs that change address, "
            "shape or identity between calls (or a new graph per call) cause this."
        )
    if t.input_copy_bytes > 0:
        notes.append(
            f"{t.input_copy_bytes / 1e6:.2f} MB per call were copied into the CUDA graph's "
            "static input buffers before replaying it."
        )
    rest = sorted(profiled.unattributed_us.items(), key=lambda kv: -kv[1])
    if rest:
        listed = ", ".join(f"{name} {us / t.runs / 1e3:.3f} ms" for name, us in rest[:5])
        notes.append(f"device time outside the output code's kernels, per call: {listed}.")
    return notes


def _check_options(
    backend: Any, mode: str | None, options: dict[str, Any] | None, wrap: bool
) -> None:
    import torch

    if not wrap:
        given = [n for n, v in (("mode", mode), ("options", options)) if v]
        if given or backend != "inductor":
            msg = (
                f"{', '.join(given) or 'backend'} only applies when explore() compiles the "
                "target itself, but the target is already compiled (or wrap=False). Pass the "
                "options to your own torch.compile call, or pass the uncompiled function."
            )
            raise OptionError(msg)
        return
    if isinstance(backend, str):
        known = set(torch.compiler.list_backends(exclude_tags=()))
        if backend not in known:
            msg = f"unknown backend {backend!r}. Known backends: {', '.join(sorted(known))}."
            raise OptionError(msg)
    elif not callable(backend):
        raise OptionError(f"backend must be a name or a callable, not {type(backend).__name__}.")
    if mode is not None:
        modes = _compat.inductor_mode_names()
        if mode not in modes:
            msg = f"unknown mode {mode!r}. Known modes: {', '.join(sorted(modes))}."
            raise OptionError(msg)
        if options:
            raise OptionError("torch.compile takes mode or options, not both: pass one of them.")
    if options:
        names = _compat.inductor_option_names()
        unknown = sorted(k for k in options if k not in names)
        if unknown:
            plural = "s" * (len(unknown) > 1)
            msg = (
                f"unknown Inductor option{plural} {', '.join(map(repr, unknown))}; "
                "see torch._inductor.list_options() for the names torch.compile accepts."
            )
            raise OptionError(msg)


def _input_device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    import torch

    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device.type
    return ""


def classify_failure(
    exc: BaseException,
    *,
    target: str,
    options: Options,
    exploration: Exploration,
    rerun_eagerly: Callable[[], object] | None = None,
) -> ExploreError:
    """What an exception raised while compiled code ran means, as an ``ExploreError``.

    ``CompileError`` when torch.compile itself failed: a graph break under
    ``fullgraph`` (``stage="dynamo"``), a dimension marked dynamic that the code
    specialised (``"dynamic"``), the backend (``"backend"``), or Dynamo on code
    that runs eagerly (``"run"``); ``InputError`` when the user's code raised
    (``"run"``) or, checked with ``rerun_eagerly`` when given, fails without
    torch.compile too (``"inputs"``). The error's ``exploration`` is ``exploration``
    with the message recorded as a ``StageError``.

    Args:
        exc: what the compiled call raised.
        target: the name to show for what was compiled (``describe_target``).
        options: how it was compiled (``fullgraph``, ``backend``, ``wrapped``).
        exploration: what was recorded before the failure.
        rerun_eagerly: runs the target without torch.compile; omit it where running
            the code again would repeat its side effects.

    Example:
        >>> err = classify_failure(ValueError("boom"), target="f", options=Options(),
        ...                        exploration=Exploration(source="live"))
        >>> type(err).__name__, err.stage
        ('InputError', 'run')
    """
    where = ""
    if exploration.graph_breaks and exploration.graph_breaks[-1].location is not None:
        where = f" at {exploration.graph_breaks[-1].location}"
    first_line = str(exc).strip().split("\n", 1)[0]

    def error(kind: type[ExploreError], stage: str, msg: str) -> ExploreError:
        return kind(msg, exploration=_with_error(exploration, stage, msg), stage=stage)

    if options.fullgraph and _compat.is_graph_break_error(exc):
        msg = (
            f"fullgraph=True, but Dynamo hit a graph break{where}: {first_line}. "
            "Remove fullgraph=True to let torch.compile split the graph there, or change the "
            "code so Dynamo can trace it; the stages recorded so far are on .exploration."
        )
        return error(CompileError, "dynamo", msg)
    if _compat.is_backend_failure(exc):
        msg = (
            f"the {options.backend!r} backend failed while compiling {target}: "
            f"{first_line}. Try backend='aot_eager' to see whether the problem is in "
            "AOTAutograd or in the backend."
        )
        return error(CompileError, "backend", msg)
    if _compat.is_constraint_violation(exc):
        msg = (
            f"a dimension marked dynamic was specialised while compiling {target}: "
            f"{first_line.rstrip('.')}. The code branches on (or needs) that size, so it "
            "cannot stay symbolic: use torch._dynamo.maybe_mark_dynamic instead of "
            "mark_dynamic, or remove the mark."
        )
        return error(CompileError, "dynamic", msg)
    if not _compat.is_dynamo_error(exc):
        # torch.compile ran the user's code and it raised: report it as theirs, without
        # running it again (a second run would repeat its prints and side effects).
        msg = (
            f"{target} raised {type(exc).__name__}: {first_line}. The error "
            "comes from your code as torch.compile ran it; fix it and run again (the stages "
            "recorded before it are on .exploration)."
        )
        return error(InputError, "run", msg)
    if rerun_eagerly is not None:
        try:
            rerun_eagerly()
        except Exception as eager_exc:
            eager_text = str(eager_exc).strip()
            eager_first = eager_text.splitlines()[0] if eager_text else ""
            msg = (
                f"{target} fails on these inputs even without torch.compile: "
                f"{type(eager_exc).__name__}: {eager_first}. "
                "Fix the inputs or the code so that it runs eagerly first."
            )
            return error(InputError, "inputs", msg)
    eager_note = ". It runs eagerly, so the failure comes from torch.compile"
    msg = (
        f"{target} raised {type(exc).__name__} under torch.compile: {first_line}"
        f"{eager_note if rerun_eagerly is not None else ''}; "
        "the stages recorded before the failure are on .exploration."
    )
    return error(CompileError, "run", msg)


def _with_error(exploration: Exploration, stage: str, message: str) -> Exploration:
    from compiler.model import StageError

    return dataclasses.replace(
        exploration, errors=(*exploration.errors, StageError(stage=stage, message=message))
    )
