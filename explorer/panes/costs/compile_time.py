"""The compile-time pane: where a run's cold compile time went, biggest compile first.

Every figure is ``compiler.compile_time``'s (torch's ``chromium_event`` spans bucketed so
that a compile's buckets add up to its ``entire_frame_compile_time_s``); this module only
lays them out: a bar per compile split by phase, its frame, its graph, what a recompile
cost, and what a warm process would still pay. A bar selects its compile.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Compile, Exploration, compile_time
from compiler.advise.costs import time_phases as tp
from compiler.link import ids
from compiler.model.stages import DYNAMO_GRAPH

from ..labels import default_pane, group_of, label_of
from ..types import PaneHead

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}
# the buckets in pipeline order: a bar's segments run left to right in the compiler's order,
# each bucket in the same colour on every bar (its index here)
LAZY = "backward, compiled at the first backward call"
LEGEND = (
    tp.TRACING, tp.GUARDS, tp.KEYS, tp.LOAD, tp.AOT, tp.LOWERING, tp.AUTOTUNE, tp.CODEGEN,
    tp.BUILD, tp.OTHER, LAZY,
)  # fmt: skip
_SLOT = {name: i for i, name in enumerate(LEGEND)}
_METRICS = ids.compile_pane("compilation_metrics")


@dataclass(**_FROZEN)
class PhaseSeconds:
    """Seconds of one bucket; ``slot`` is its index in ``CompileTimePane.legend``."""

    name: str
    seconds: float
    slot: int


@dataclass(**_FROZEN)
class CompileTimeBar:
    """One compile's bar: ``compile`` its key and ``stage`` the pane a click opens (its own
    compile-time pane, else its default); ``graph`` its Dynamo graph's pane (None without
    one); ``src`` where its frame starts; ``phases`` in pipeline order; ``recompile`` what
    it cost as a recompile ("" for a first compile), with torch's reason."""

    compile: str
    stage: str | None
    graph: str | None
    compile_id: str
    name: str
    src: str | None
    seconds: float
    phases: tuple[PhaseSeconds, ...]
    recompile: str = ""


@dataclass(**_FROZEN)
class CompileTimePane(PaneHead):
    """Where the run's compile time went (``compiler.compile_time``)."""

    kind: str = "compile_time"
    summary: str = ""
    legend: tuple[str, ...] = ()
    totals: tuple[PhaseSeconds, ...] = ()  # the run's seconds per bucket, biggest first
    bars: tuple[CompileTimeBar, ...] = ()  # biggest compile first
    longest: float = 0.0
    recompiles: str = ""
    warm: str = ""


def _seconds(name: str, seconds: float) -> PhaseSeconds:
    return PhaseSeconds(name=name, seconds=round(seconds, 4), slot=_SLOT.get(name, _SLOT[tp.OTHER]))


def _bar(c: Compile, t: tp.CompileTime) -> CompileTimeBar:
    stages = [r.id for r in ids.stage_refs(c)]
    recompile = ""
    if c.is_recompile:
        why = c.recompile_reasons[0].reason if c.recompile_reasons else ""
        recompile = f"recompile: cost {t.seconds:.2f} s" + (f" ({why})" if why else "")
    # the lazy backward last: the frame's buckets add up to torch's entire-frame seconds
    pairs = (*t.phases, *(((LAZY, t.backward_seconds),) if t.backward_seconds else ()))
    return CompileTimeBar(
        compile=c.key,
        stage=_METRICS if _METRICS in stages else default_pane(stages),
        graph=DYNAMO_GRAPH if DYNAMO_GRAPH in stages else None,
        compile_id=ids.compile_title(c),
        name=c.code_name,
        src=ids.src_key(c.filename, c.first_line),
        seconds=round(t.seconds, 4),
        phases=tuple(sorted((_seconds(n, s) for n, s in pairs), key=lambda p: p.slot)),
        recompile=recompile,
    )


def build_compile_time(exp: Exploration, compile_key: str | None, pane_id: str) -> CompileTimePane:
    """The run's compile time, a bar per compile, biggest first.

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore(torch.sin, torch.randn(4))  # doctest: +SKIP
        >>> build_compile_time(exp, None, "compile_time").bars[0].compile  # doctest: +SKIP
        '0/0'
    """
    times = compile_time(exp)
    by_key = {c.key: c for c in exp.compiles}
    bars = tuple(
        _bar(by_key[t.compile], t)
        for t in times.compiles
        if t.compile in by_key
    )
    lazy = ((LAZY, times.backward_seconds),) if times.backward_seconds else ()
    totals = tuple(sorted((_seconds(n, s) for n, s in (*times.by_phase(), *lazy)),
                          key=lambda p: -p.seconds))  # fmt: skip
    n_re = sum(1 for t in times.compiles if t.is_recompile)
    top = ", ".join(f"{p.name} {p.seconds:.2f} s" for p in totals[:3])
    return CompileTimePane(
        id=ids.COMPILE_TIME,
        stage="compile_time",
        label=label_of("compile_time"),
        group=group_of("compile_time"),
        summary=f"{times.total:.2f} s of cold compile in {len(bars)} "
        f"compile{'' if len(bars) == 1 else 's'}"
        + (f", plus {times.backward_seconds:.2f} s of backward compiled lazily" if lazy else "")
        + (f"; most in {top}" if top else ""),
        legend=LEGEND,
        totals=totals,
        bars=bars,
        longest=max((sum(p.seconds for p in b.phases) for b in bars), default=0.0),
        recompiles=f"{n_re} recompile{'' if n_re == 1 else 's'} cost "
        f"{times.recompile_seconds:.2f} s"
        if n_re
        else "no recompiles",
        warm=f"a warm process would still pay {times.warm_seconds:.2f} s of "
        f"{times.total:.2f} s: Dynamo tracing, guards and cache keys run in every process; "
        "the rest becomes cache loads",
    )
