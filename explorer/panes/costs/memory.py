"""The memory pane.

Every figure is ``compiler.memory``'s: per compile the tensors AOTAutograd's partitioner
saved for the backward, and on CUDA the peaks measured at capture, eager against
compiled. Advice rows are the advisor's own memory findings. The graph panes' marks of
the same saved tensors are ``saved.saved_marks``.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Compile, Exploration, memory
from compiler.costs.memory import CompileMemory
from compiler.link import ids

from ..findings import build_findings
from ..labels import group_of, label_of
from ..types import FindingItem, PaneHead
from .saved import MIB, size_text

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}
_FORWARD = ids.compile_pane("aot_forward_graph")


@dataclass(**_FROZEN)
class SavedRow:
    """One tensor saved for backward: ``node`` a forward graph node (``stage`` its pane),
    ``src`` the user's line it came from (the browser labels it), ``size`` its bytes as
    text."""

    node: str
    stage: str | None
    kind: str
    shape: str
    dtype: str
    bytes: int | None
    size: str
    src: str | None
    module: str


@dataclass(**_FROZEN)
class CompileSaved:
    """One compile's saved-for-backward table and its total (``title``)."""

    compile: str
    compile_id: str
    title: str
    rows: tuple[SavedRow, ...]


@dataclass(**_FROZEN)
class PeakRow:
    """One measured run's peaks: forward, backward, held for backward, CUDA graph pool."""

    label: str
    cells: tuple[str, ...]
    above_eager: bool = False


@dataclass(**_FROZEN)
class MemoryPane(PaneHead):
    """Where memory went (``compiler.memory``) and the advisor's memory findings."""

    kind: str = "memory"
    summary: str = ""
    compiles: tuple[CompileSaved, ...] = ()
    peaks: tuple[PeakRow, ...] = ()
    advice: tuple[FindingItem, ...] = ()


def _mib(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n / MIB:.1f} MiB" if n >= MIB // 10 else f"{n / 1024:.1f} KiB"


def _compile(c: Compile, cm: CompileMemory) -> CompileSaved:
    stages = {r.id for r in ids.stage_refs(c)}
    rows = tuple(
        SavedRow(
            node=s.node,
            stage=_FORWARD if _FORWARD in stages else None,
            kind=s.kind,
            shape=f"[{', '.join(s.shape)}]" if s.shape else "",
            dtype=s.dtype,
            bytes=s.bytes,
            size=size_text(s.bytes, s.size) if s.kind != "symint" else "",
            src=ids.loc_key(s.source),
            module=s.module,
        )
        for s in cm.saved
    )
    more = f" + {len(cm.symbolic)} of symbolic size" if cm.symbolic else ""
    title = (
        f"{c.code_name}: {len(cm.saved)} saved for backward, {_mib(cm.total_bytes)}{more}, "
        f"of which activations {_mib(cm.activation_bytes)}"
    )
    return CompileSaved(compile=c.key, compile_id=cm.compile_id, title=title, rows=rows)


def build_memory(exp: Exploration, compile_key: str | None, pane_id: str) -> MemoryPane:
    """Saved for backward per compile, peaks eager against compiled, memory advice.

    Example:
        >>> import compiler
        >>> build_memory(compiler.Exploration(source="live"), None, "memory").summary
        'No compile saved tensors for backward, and no peak was measured.'
    """
    mem = memory(exp)
    by_key = {c.key: c for c in exp.compiles}
    compiles = tuple(_compile(by_key[cm.compile], cm) for cm in mem.compiles
                     if cm.saved and cm.compile in by_key)
    eager = mem.peak("eager")
    peaks = tuple(
        PeakRow(
            label=p.label,
            cells=tuple(map(_mib, (p.forward_bytes, p.backward_bytes, p.held_bytes, p.pool_bytes))),
            above_eager=eager is not None and p is not eager and p.peak_bytes > eager.peak_bytes,
        )
        for p in mem.peaks
    )
    saved = sum(cm.total_bytes for cm in mem.compiles)
    parts = []
    if compiles:
        parts.append(f"{_mib(saved)} saved for backward over {len(compiles)} "
                     f"compile{'' if len(compiles) == 1 else 's'}")
    compiled = mem.peak("compiled")
    if eager is not None and compiled is not None:
        parts.append(f"peak {_mib(compiled.peak_bytes)} compiled against "
                     f"{_mib(eager.peak_bytes)} eager")
    findings = build_findings(exp, None, ids.FINDINGS).items
    return MemoryPane(
        id=ids.MEMORY,
        stage="memory",
        label=label_of("memory"),
        group=group_of("memory"),
        summary="; ".join(parts)[:1].upper() + "; ".join(parts)[1:]
        if parts
        else "No compile saved tensors for backward, and no peak was measured.",
        compiles=compiles,
        peaks=peaks,
        advice=tuple(f for f in findings if f.kind.startswith("memory.")),
    )
