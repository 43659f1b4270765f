"""The CUDA-graph pane: what ``compiler.cudagraphs`` says, per compiled call site.

Per compile: recorded, partitioned or skipped; torch's reason and the ops it kept out,
each a link to the Dynamo graph's node and the user's source line the compiler matched;
one row per distinct symint key with its trees, warm-ups, recordings, the input sizes
torch recorded for and the timed calls at that size; then the calls of the run with the
CUDA graph pool after each, and what torch said about the whole run (pending backwards,
an output overwritten by a later run). The compiler made every id; this only lays out.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Exploration
from compiler.costs.cudagraphs import (
    CudaGraphs,
    ShapeRecordings,
    SiteGraphs,
    cudagraphs,
    user_frame,
)
from compiler.link import ids
from compiler.parse.words.cudagraphs import UserFrame

from ..labels import group_of, label_of
from ..types import _FROZEN, EvidenceLink, PaneHead

STAGE = "cudagraphs"


@dataclass(**_FROZEN)
class CudagraphShape:
    """One distinct symint key of a call site: what it cost (``calls_ms``: the calls a
    script timed at that size, in order: warm-up, recording, replays)."""

    key: str
    trees: int
    warmups: int
    recordings: int
    sizes: tuple[str, ...]
    calls_ms: tuple[float, ...]


@dataclass(**_FROZEN)
class CudagraphSite:
    """One compiled call site: ``status`` is ``recorded``, ``partitioned`` or
    ``skipped``; ``reason`` torch's skip reason linked to its node and line; ``kept_out``
    each op torch kept out of CUDA graphs, linked the same way."""

    compile: str
    label: str
    status: str
    summary: str
    reason: EvidenceLink | None
    kept_out: tuple[EvidenceLink, ...]
    shapes: tuple[CudagraphShape, ...]
    rerecords: tuple[str, ...]


@dataclass(**_FROZEN)
class CudagraphCall:
    """One call a script timed: its batch, time and the CUDA graph pool after it."""

    batch: int
    ms: float
    pool_mib: float


@dataclass(**_FROZEN)
class CudagraphsPane(PaneHead):
    """What CUDA graphs did in the whole exploration, per compiled call site."""

    kind: str = "cudagraphs"
    summary: str = ""
    sites: tuple[CudagraphSite, ...] = ()
    calls: tuple[CudagraphCall, ...] = ()
    pool_mib: float = 0.0
    problems: tuple[EvidenceLink, ...] = ()


def build_cudagraphs(exp: Exploration, compile_key: str | None, pane_id: str) -> CudagraphsPane:
    """The CUDA-graph pane of ``exp`` (one for the whole exploration)."""
    g = cudagraphs(exp)
    keys = {str(c.compile_id): c.key for c in exp.compiles}
    sites = tuple(_site(s, keys.get(s.compile_id, s.compile_id)) for s in g.sites)
    shapes = sum(len(s.shapes) for s in sites)
    counts = ", ".join(
        f"{sum(1 for s in g.sites if s.status == st)} {st}"
        for st in ("recorded", "partitioned", "skipped")
        if any(s.status == st for s in g.sites)
    )
    summary = (
        f"{len(sites)} compiled call site{'s' if len(sites) != 1 else ''} said something "
        f"about CUDA graphs ({counts or 'none'})"
        + (f"; {shapes} distinct shape{'s' if shapes != 1 else ''} recorded" if shapes else "")
        + (f"; CUDA graph pool {g.pool_bytes / 2**20:.1f} MiB" if g.pool_bytes else "")
    )
    return CudagraphsPane(
        id=ids.CUDAGRAPHS,
        stage=STAGE,
        label=label_of(STAGE),
        group=group_of(STAGE),
        summary=summary,
        sites=sites,
        calls=tuple(CudagraphCall(batch=b, ms=ms, pool_mib=p / 2**20) for b, ms, p in g.calls),
        pool_mib=g.pool_bytes / 2**20,
        problems=_problems(g, keys),
    )


def _site(s: SiteGraphs, key: str) -> CudagraphSite:
    graph = ids.compile_pane("dynamo_output_graph")
    reason = None
    if s.skip is not None:
        user = user_frame(s.skip.frames)
        reason = _link(f"{s.skip.reason}{_at(user)}", key, graph, user, s.nodes[-1:])
    kept = []
    for op, on in zip(s.kept_out, s.op_nodes, strict=False):
        user = user_frame(op.frames) or (op.frames[-1] if op.frames else None)
        kept.append(_link(f"{op.buffer}: {op.reason}{_at(user)}", key, graph, user, on[:1]))
    parts = [f"{len(s.keys)} distinct symint key{'s' if len(s.keys) != 1 else ''}"] if any(
        s.keys
    ) else []
    parts.append(f"{s.warmups} warm-ups, {s.recordings} recordings")
    if s.partitions:
        n, ok, no = s.partitions[-1]
        parts.append(f"{n} graph partitions: {ok} cudagraphable, {no} not")
    return CudagraphSite(
        compile=key,
        label=f"compile {s.compile_id}",
        status=s.status,
        summary="; ".join(parts),
        reason=reason,
        kept_out=tuple(kept),
        shapes=tuple(_shape(sh) for sh in s.shapes),
        rerecords=s.rerecords,
    )


def _shape(sh: ShapeRecordings) -> CudagraphShape:
    return CudagraphShape(
        key=sh.key or "(no symints)",
        trees=sh.trees,
        warmups=sh.warmups,
        recordings=sh.recordings,
        sizes=sh.sizes,
        calls_ms=sh.calls_ms,
    )


def _problems(g: CudaGraphs, keys: dict[str, str]) -> tuple[EvidenceLink, ...]:
    out = []
    if g.overwritten is not None:
        f = g.overwritten.frame
        cid, node = g.overwritten_nodes[-1] if g.overwritten_nodes else ("", "")
        text = "torch: accessing tensor output of CUDAGraphs that has been overwritten by a "
        text += f"subsequent run{_at(f)}. {g.overwritten.advice}".rstrip(". ") + "."
        graph = ids.compile_pane("dynamo_output_graph") if node else None
        out.append(_link(text, keys.get(cid), graph, f, (node,) if node else ()))
    if g.pending_backwards:
        text = f"{g.pending_backwards} calls could not take the fast path: pending backwards"
        out.append(_link(text, None, None, None, ()))
    return tuple(out)


def _link(
    text: str, key: str | None, graph: str | None, f: UserFrame | None, nodes: tuple[str, ...]
) -> EvidenceLink:
    return EvidenceLink(
        text=text,
        compile=key,
        stage=graph if nodes else None,
        src=ids.src_key(f.filename, f.line) if f is not None else None,
        node=nodes[-1] if nodes else None,
        kernel=None,
    )


def _at(f: UserFrame | None) -> str:
    if f is None:
        return ""
    where = f"{f.filename.rsplit('/', 1)[-1]}:{f.line}"
    return f" at `{f.code}` ({where})" if f.code else f" at {where}"
