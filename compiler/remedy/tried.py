"""``try_fixes``: compile the user's target again with each fix the advisor proposes, in a
fresh compile beside the target as it was, and keep both runs' figures.

Only a live capture can be re-run: the target and its inputs are the user's objects in
this process. A loaded recording or trace keeps whatever fixes were tried when it was
captured, and the advisor says that nothing more can be tried from it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from compiler import _compat
from compiler.advise.findings import fix_reach
from compiler.capture.explore import record_run
from compiler.capture.observe import Boundary, observe
from compiler.capture.spec import CompileSpec, describe_target
from compiler.capture.state import compiled_reachable, recompile_user_code
from compiler.errors import OptionError
from compiler.measure.timed_calls import synchroniser, time_calls
from compiler.model import Exploration, Fix, Options, RunFigures, TriedFix
from compiler.remedy.apply import applied, compile_args

# warm calls before the timed ones: CUDA graphs record on the first calls after a compile
_WARMUP = 3


def try_fixes(
    exp: Exploration,
    target: Callable[..., Any],
    *example_inputs: Any,
    runs: int = 10,
    **kwargs: Any,
) -> Exploration:
    """``exp`` with ``tried_fixes``: each fix its findings propose, applied to ``target``.

    The target runs as ``exp`` was captured (``exp.options``) and once per fix, each a
    fresh compile recorded like ``explore`` records, then ``runs`` warm calls timed
    (synchronised on CUDA). The findings of the returned Exploration show each fix's
    before and after. Each run is one observation (``compiler.capture.observe``), and no
    process-wide reset: every compiled call of a run (the target wrapped, or the compiled
    functions and modules a target that compiles itself calls) compiles with a backend of
    the run's own and those cache entries are dropped after the run, so what the user
    compiled keeps its cache untouched and does not compile again; torch's eager mark
    after a failed compile is lifted from the target's code for the run and put back, and
    Dynamo's record of seen sizes is set aside. The state the runs can change
    (``compiler.capture.state``) is saved before every run and restored after it. A
    failure of the explorer's own work is kept in the returned Exploration's errors
    (stage ``try_fixes``, with the traceback), never raised.

    Args:
        exp: a live capture of ``target`` (``compiler.explore``).
        target, example_inputs, kwargs: what ``exp`` was captured from.
        runs: timed calls per run, after 3 warm-ups.

    Raises:
        OptionError: ``exp`` was not captured live, so nothing can be re-run.

    Example:
        >>> import torch, compiler
        >>> def f(x):
        ...     return x * x.sum().item()
        >>> exp = compiler.explore(f, torch.randn(8), backend="eager")  # doctest: +SKIP
        >>> tried = try_fixes(exp, f, torch.randn(8))  # doctest: +SKIP
        >>> tried.findings()[0].tried.after.graph_breaks  # doctest: +SKIP
        0
    """
    if exp.source != "live":
        msg = (
            f"This exploration was loaded from a {exp.source} file, so the explorer cannot "
            "run its program again to try a fix. Capture it with compiler.explore() first."
        )
        raise OptionError(msg)
    # a fix that cannot reach the target's own torch.compile is not tried: its finding says so
    proposed = dict.fromkeys(f.fix for f in exp.findings() if f.fix is not None)
    fixes = [fix for fix in proposed if fix_reach(fix, exp.options)[0]]
    if not fixes:
        return exp
    opts = exp.options or Options()
    boundary = Boundary()
    tried = []
    with boundary.guard("try_fixes"):  # the target as captured fails to run again: ours
        before = _run(target, example_inputs, kwargs, opts, None, runs, boundary)
        for fix in fixes:
            try:
                after = _run(target, example_inputs, kwargs, opts, fix, runs, boundary)
                tried.append(
                    TriedFix(fix=fix, before=before, after=after, device=exp.environment.device)
                )
            except Exception as exc:  # the fixed run failed: say so in the finding
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                tried.append(
                    TriedFix(fix=fix, before=before, after=RunFigures(), error=first[:300])
                )
    if not opts.wrapped and not _compat.owns_compiles():
        # an older torch: the last fix's compile must not stay in the user's functions
        with boundary.guard("restore"):
            recompile_user_code(compiled_reachable(target, *example_inputs))
    return dataclasses.replace(
        exp, tried_fixes=(*exp.tried_fixes, *tried), errors=(*exp.errors, *boundary.take())
    )


def _run(
    target: Callable[..., Any],
    inputs: tuple[Any, ...],
    kwargs: dict[str, Any],
    opts: Options,
    fix: Fix | None,
    runs: int,
    boundary: Boundary,
) -> RunFigures:

    # the stored options are text, not the values torch.compile took: they stay out
    spec = CompileSpec(backend=opts.backend or "inductor", mode=opts.mode, dynamic=opts.dynamic,
                       fullgraph=opts.fullgraph)  # fmt: skip
    if fix is not None:
        if not opts.wrapped and fix.kind == "backend":
            msg = "the target calls torch.compile itself, so the explorer cannot change its backend"
            raise OptionError(msg)
        spec = compile_args(fix, spec).check()
    fixed = applied(fix, wrapped=opts.wrapped) if fix is not None else contextlib.nullcontext()
    # the run's compiles (the fix's) beside the user's, dropped after the run, and the
    # state its calls change put back
    observed = observe(target, inputs, kwargs, wrap=opts.wrapped, boundary=boundary)
    with observed as obs, obs.extra_calls(), fixed:
        run = obs.compiled(spec, target) if opts.wrapped else target
        exp = record_run(
            lambda: run(*inputs, **kwargs),
            target=describe_target(target),
            options=opts,
            decompile=False,
            boundary=obs.boundary,
        )
        sync = synchroniser(_on_cuda(inputs, kwargs))
        times = time_calls(lambda: run(*inputs, **kwargs), warmup=_WARMUP, runs=runs, sync=sync)
    return RunFigures(
        graph_breaks=len(exp.graph_breaks),
        graphs=sum(1 for c in exp.compiles if "dynamo_output_graph" in c.graphs),
        compiles=len(exp.compiles),
        recompiles=len(exp.recompiles),
        ms=times.median_ms,
    )


def _on_cuda(inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    import torch

    return any(isinstance(v, torch.Tensor) and v.is_cuda for v in (*inputs, *kwargs.values()))

