"""The ranks pane: every rank of a multi-rank run side by side, divergences marked.

Rows are compile ids, columns ranks; a cell links to that rank's compile. What differs
comes from ``compiler.divergence`` (computed there, once); this module only lays it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Compile, CompileId, Exploration
from compiler.link import ids
from compiler.model.stages import DYNAMO_GRAPH
from compiler.ranks.skew import skew

from .labels import default_pane, group_of, label_of
from .types import _FROZEN, EvidenceLink, PaneHead


@dataclass(**_FROZEN)
class RankCell:
    """One rank's compile under one compile id: ``compile`` its key (None where the rank
    has no such compile), ``stage`` the pane a click opens, ``text`` what it is there, and
    ``diverges`` whether this rank's side differs from another's; ``seconds`` its compile
    time and ``cache`` its cache state (``compiler.ranks.skew``: hit, miss, bypass, "")."""

    compile: str | None
    stage: str | None
    text: str
    diverges: bool
    seconds: float | None = None
    cache: str = ""


@dataclass(**_FROZEN)
class RankRow:
    """One compile id across the ranks: ``cells`` in the order of ``RanksPane.ranks``;
    ``kinds`` the kinds of difference found under it (empty where the ranks agree)."""

    compile_id: str
    name: str
    kinds: tuple[str, ...]
    cells: tuple[RankCell, ...]


@dataclass(**_FROZEN)
class DivergenceEntry:
    """One place the ranks differ (``compiler.DivergenceItem``), each rank's side a link."""

    kind: str
    compile_id: str
    text: str
    sides: tuple[EvidenceLink, ...]


@dataclass(**_FROZEN)
class RanksPane(PaneHead):
    """Every rank side by side: one row per compile id, one column per rank, the places
    where ranks differ marked and listed first (``compiler.divergence``); each rank's
    compile seconds over the compile ids every rank made (``totals``), the ranks flagged
    slow, and the longest compile of any cell (the bars' scale)."""

    kind: str = "ranks"
    ranks: tuple[str, ...] = ()
    summary: str = ""
    divergences: tuple[DivergenceEntry, ...] = ()
    rows: tuple[RankRow, ...] = ()
    totals: tuple[float, ...] = ()
    slow: tuple[bool, ...] = ()
    longest: float = 0.0


_MARKS = (("graph_breaks", "graph break"), ("recompile_reasons", "recompile"))


def build_ranks(exp: Exploration, compile_key: str | None, pane_id: str) -> RanksPane:
    """The side-by-side view of every rank of ``exp``."""
    # imported here: a log of one process has no ranks pane and needs no comparison
    from compiler import divergence

    div = divergence(exp)
    times = skew(exp)
    timed = {t.compile_id: t for t in times.compiles}
    ranks = div.ranks
    by_id: dict[str, dict[int | None, Compile]] = {}
    order: dict[str, CompileId] = {}
    for c in exp.compiles:
        cid = str(c.compile_id)
        by_id.setdefault(cid, {})[c.rank] = c
        order.setdefault(cid, c.compile_id)
    # each rank's side of each divergence, by compile id
    sides: dict[tuple[str, int | None], str] = {}
    kinds: dict[str, list[str]] = {}
    for item in div.items:
        kinds.setdefault(item.compile_id, []).append(item.kind)
        for side in item.ranks:
            sides.setdefault((item.compile_id, side.rank), side.stage or "")
    rows = []
    for cid in sorted(by_id, key=lambda k: _order(order[k])):
        on = by_id[cid]
        first = next(iter(on.values()))
        row_times = timed.get(cid)
        seconds = row_times.seconds if row_times is not None else {}
        caches = row_times.cache if row_times is not None else {}
        cells = []
        for r in ranks:
            here = on.get(r)
            stage = sides.get((cid, r)) or (_first_pane(here) if here is not None else None)
            cells.append(
                RankCell(
                    compile=here.key if here is not None else None,
                    stage=stage or None,
                    text=_cell_text(here),
                    diverges=(cid, r) in sides,
                    seconds=round(seconds[r], 3) if r in seconds else None,
                    cache=caches.get(r, ""),
                )
            )
        rows.append(
            RankRow(
                compile_id=cid,
                name=first.code_name,
                kinds=tuple(dict.fromkeys(kinds.get(cid, ()))),
                cells=tuple(cells),
            )
        )
    return RanksPane(
        id=ids.RANKS,
        stage="ranks",
        label=label_of("ranks"),
        group=group_of("ranks"),
        ranks=tuple("single process" if r is None else f"rank {r}" for r in ranks),
        summary=div.summary,
        divergences=tuple(
            DivergenceEntry(
                kind=i.kind,
                compile_id=i.compile_id,
                text=i.text,
                sides=tuple(
                    EvidenceLink(
                        text=f"rank {s.rank}: {s.text}",
                        compile=s.compile,
                        stage=s.stage,
                        src=None,
                        node=None,
                        kernel=None,
                    )
                    for s in i.ranks
                ),
            )
            for i in div.items
        ),
        rows=tuple(rows),
        totals=tuple(round((times.totals or {}).get(r, 0.0), 3) for r in ranks),
        slow=tuple(r in times.slow for r in ranks),
        longest=max((s for t in times.compiles for s in t.seconds.values()), default=0.0),
    )


def _order(cid: CompileId) -> tuple[int, int, int]:
    return (cid.compiled_autograd_id or 0, cid.frame_id or 0, cid.frame_compile_id or 0)


def _first_pane(c: Compile) -> str | None:
    # the compile's default among its own stages (a cell links to a stage, not the advisor)
    return default_pane([r.id for r in ids.stage_refs(c)])


def _cell_text(c: Compile | None) -> str:
    if c is None:
        return "—"
    marks = [word for attr, word in _MARKS if getattr(c, attr)]
    if c.status == "failed":
        marks.append("failed")
    graphs = "graph" if DYNAMO_GRAPH in c.graphs else "no graph"
    return ", ".join([graphs, *marks])
