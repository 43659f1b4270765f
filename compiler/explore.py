"""``explore``: compile a function or module on example inputs and record it all."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import _compat
from .capture import describe_target, recording
from .errors import CompileError, ExploreError, InputError, OptionError, TargetError
from .model import Exploration, Options, as_jsonable


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
            already returned by ``torch.compile`` run as they are, others are wrapped.
        reset: reset Dynamo first (``torch.compiler.reset()``) so that every
            compile is recorded, numbered from ``0/0``, rather than served from
            code compiled earlier in the process.
        decompile: decompile Dynamo's transformed bytecode (best effort).
        triton_stages: keep each Triton kernel's TTIR/TTGIR/LLVM IR/PTX/SASS (default:
            when CUDA is available).
        measure: on CUDA, run the compiled target again (3 warm-up calls, then 20
            profiled ones) and record each Triton kernel's median device time, the
            bytes it moves and the bandwidth it achieved against the device's
            measured copy bandwidth. Off by default: it re-runs the target.
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
    already_compiled = _compat.is_compiled(target)
    if wrap is None:
        wrap = not already_compiled
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

        raise classify_failure(
            rec_failure,
            target=describe_target(target),
            options=opts,
            exploration=exploration,
            rerun_eagerly=rerun,
        ) from rec_failure
    if measure:
        exploration = _measured(exploration, lambda: run(*example_inputs, **kwargs))
    return exploration


def _measured(exploration: Exploration, run: Callable[[], Any]) -> Exploration:
    import torch

    from .kernel_timing import REPEATS, copy_peak_gbps, matmul_peak_tflops, measure, timing
    from .model import StageError

    if not torch.cuda.is_available():
        note = StageError(stage="timing", message="per-kernel timing needs a CUDA device.")
        return dataclasses.replace(exploration, errors=(*exploration.errors, note))
    names = {
        k.name
        for c in exploration.compiles
        for k in c.kernels()
        if k.language in ("triton", "extern")
    }
    durations, graph_launches = measure(run, names)
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
        cudagraph_replays_per_run=graph_launches / REPEATS,
    )
    return dataclasses.replace(exploration, compiles=tuple(compiles), environment=environment)


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
    ``fullgraph`` (``stage="dynamo"``), the backend (``"backend"``), or Dynamo on code
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
    from .model import StageError

    return dataclasses.replace(
        exploration, errors=(*exploration.errors, StageError(stage=stage, message=message))
    )
