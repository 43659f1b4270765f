"""Where the ranks of one run compiled differently (``compiler.divergence``).

Ranks of a data-parallel run execute the same program, so they should compile the same
frames, under the same compile ids, with the same guards, graphs and kernels, and issue
the same collectives in the same order with the same sizes. Where one rank recompiles and
another does not, the other waits in its next collective: the run hangs or times out.
Each difference becomes one ``DivergenceItem`` linked to the panes that show it on every
rank concerned. Ranks that compiled the same but not equally fast are a difference too
(``compiler.ranks.skew``): a rank whose compiles took much longer (``compile_time``), and
a compile one rank served from a cache that another compiled cold (``caches``): the
others wait for it in their next collective.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from compiler.link.ids import CompileKey, PaneId, compile_pane, key_of, output_code_pane
from compiler.model import Compile, Exploration
from compiler.ranks import collectives, fingerprint
from compiler.ranks.skew import CompileTimes, Skew, cache_state, skew

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}

# the kinds of difference, in the order a user should look at them
KINDS = (
    "compiles", "recompile_reasons", "guards", "graphs", "kernels", "collectives",
    "compile_time", "caches",
)  # fmt: skip


@dataclass(**_FROZEN)
class RankLink:
    """One rank's side of a difference: the compile (``Compile.key``) and the pane that
    shows it, both made by ``compiler.link.ids``; ``text`` what that rank has there."""

    rank: int | None
    text: str
    compile: CompileKey | None = None
    stage: PaneId | None = None


@dataclass(**_FROZEN)
class DivergenceItem:
    """One place where ranks differ: ``kind`` (one of ``KINDS``), the compile id it is
    about (``0/1``; "" for the whole run), a sentence, and each rank's side."""

    kind: str
    compile_id: str
    text: str
    ranks: tuple[RankLink, ...] = ()


@dataclass(**_FROZEN)
class Divergence:
    """Where the ranks of an exploration differ; ``items`` is empty when they agree."""

    ranks: tuple[int | None, ...]
    items: tuple[DivergenceItem, ...] = ()

    @property
    def summary(self) -> str:
        """One line: how many ranks, and where they differ first."""
        n = len(self.ranks)
        if n < 2:
            return "one rank: nothing to compare"
        if not self.items:
            return f"{n} ranks compiled the same: same compile ids, guards, graphs and kernels"
        kinds = sorted({i.kind for i in self.items}, key=KINDS.index)
        first = self.items[0]
        return (
            f"{n} ranks diverge in {len(self.items)} place{'s' * (len(self.items) != 1)} "
            f"({', '.join(kinds)}); first: {first.text}"
        )

    def __bool__(self) -> bool:
        return bool(self.items)


def divergence(exp: Exploration) -> Divergence:
    """Compare every rank of ``exp`` with the others.

    Example:
        >>> exp = compiler.load_trace("/tmp/ddp_trace")  # doctest: +SKIP
        >>> print(compiler.divergence(exp).summary)  # doctest: +SKIP
        2 ranks diverge in 1 place (compiles); first: compile 0/1 (forward) ran on rank 1 only
    """
    # the advisor and the ranks pane ask in turn: computed once, in the exploration's cache
    found: Divergence = exp.derived.named("divergence", lambda: _divergence(exp)).get()
    return found


def _divergence(exp: Exploration) -> Divergence:
    ranks = tuple(sorted(exp.ranks, key=lambda r: -1 if r is None else r))
    if len(ranks) < 2:
        return Divergence(ranks=ranks)
    by_id: dict[str, dict[int | None, Compile]] = {}
    for c in exp.compiles:
        by_id.setdefault(str(c.compile_id), {})[c.rank] = c
    items: list[DivergenceItem] = []
    for cid, on in by_id.items():
        missing = [r for r in ranks if r not in on]
        if missing:
            items.append(_presence(cid, on, missing))
        if len(on) > 1:
            items.extend(_same_id(cid, on))
    items.extend(_collectives(exp, ranks))
    items.extend(_skewed(skew(exp), by_id))
    items.sort(key=lambda i: KINDS.index(i.kind))
    return Divergence(ranks=ranks, items=tuple(items))


def _presence(cid: str, on: dict[int | None, Compile], missing: list[int | None]) -> DivergenceItem:
    c = next(iter(on.values()))
    what = f"{cid} ({c.code_name})" if c.code_name else cid
    why = f": {c.recompile_reasons[0].reason}" if c.recompile_reasons else ""
    present = _rank_list(list(on))
    return DivergenceItem(
        kind="compiles",
        compile_id=cid,
        text=f"compile {what} ran on {present} only, not on {_rank_list(missing)}{why}",
        ranks=tuple(
            RankLink(rank=r, text="compiled here", compile=key_of(x), stage=_main_pane(x))
            for r, x in on.items()
        )
        + tuple(RankLink(rank=r, text="no such compile") for r in missing),
    )


def _same_id(cid: str, on: dict[int | None, Compile]) -> list[DivergenceItem]:
    """Differences between the ranks' compiles of one compile id."""
    out = []
    reasons = _split(on, fingerprint.reasons_of)
    if reasons:
        out.append(
            _item("recompile_reasons", cid, "different recompile reasons", on, reasons,
                  lambda c: compile_pane("recompile_reasons") if c.recompile_reasons else None,
                  lambda c: "; ".join(r.reason for r in c.recompile_reasons) or "no reason")
        )  # fmt: skip
    guards = _split(on, fingerprint.guards_of)
    if guards:
        out.append(
            _item("guards", cid, "different guards", on, guards,
                  lambda c: compile_pane("dynamo_cpp_guards_str") if c.guards else None,
                  _guard_lines)
        )  # fmt: skip
    graphs = {r: fingerprint.graphs_of(c) for r, c in on.items()}
    # in the order the compiler ran them (dict order), so the first that differs is named
    for stage in dict.fromkeys(s for g in graphs.values() for s in g):
        # a cache hit skips the stages it serves (the joint graph, the graph before
        # post-grad passes): their absence there is the ``caches`` difference, not this
        having = {r: c for r, c in on.items()
                  if stage in graphs[r] or cache_state(c) != "hit"}  # fmt: skip
        groups = _split(having, lambda c: graphs[c.rank].get(stage, ""))  # noqa: B023
        if groups:
            out.append(_graph_item(cid, stage, on, groups, graphs))
            break  # the first stage that differs; later stages follow from it
    kernels = _split(on, fingerprint.kernels_of)
    if kernels:
        out.append(
            _item("kernels", cid, "different kernels", on, kernels,
                  lambda c: next((output_code_pane(oc) for oc in c.output_code if oc.text), None),
                  lambda c: f"{len(c.kernels())} kernels")
        )  # fmt: skip
    return out


def _graph_item(
    cid: str,
    stage: PaneId,
    on: dict[int | None, Compile],
    groups: list[list[int | None]],
    graphs: dict[int | None, dict[PaneId, str]],
) -> DivergenceItem:
    def pane(c: Compile) -> PaneId | None:
        return stage if graphs[c.rank].get(stage) else None

    def says(c: Compile) -> str:
        return "this graph" if graphs[c.rank].get(stage) else "no such graph"

    return _item("graphs", cid, f"different {stage}", on, groups, pane, says)


def _guard_lines(c: Compile) -> str:
    return f"{c.guards.tree.count(chr(10)) + 1} guard lines" if c.guards else "no guards"


def _split(
    on: dict[int | None, Compile], key: Callable[[Compile], Hashable]
) -> list[list[int | None]]:
    """The ranks grouped by ``key`` of their compile; [] when all agree."""
    groups: dict[Hashable, list[int | None]] = {}
    for r, c in on.items():
        groups.setdefault(key(c), []).append(r)
    return list(groups.values()) if len(groups) > 1 else []


def _item(
    kind: str,
    cid: str,
    what: str,
    on: dict[int | None, Compile],
    groups: list[list[int | None]],
    pane: Callable[[Compile], PaneId | None],
    says: Callable[[Compile], str],
) -> DivergenceItem:
    sides = " vs ".join(_rank_list(g) for g in groups)
    return DivergenceItem(
        kind=kind,
        compile_id=cid,
        text=f"compile {cid}: {what} ({sides})",
        ranks=tuple(
            RankLink(rank=r, text=says(c), compile=key_of(c), stage=pane(c)) for r, c in on.items()
        ),
    )


def _collectives(exp: Exploration, ranks: tuple[int | None, ...]) -> list[DivergenceItem]:
    """The first position where the ranks' collective sequences part."""
    seqs = collectives.by_rank(exp)
    if not any(seqs.values()):
        return []
    longest = max(len(s) for s in seqs.values())
    for i in range(longest):
        at = {r: seqs.get(r, ())[i] if i < len(seqs.get(r, ())) else None for r in ranks}
        ops = {(a.op if a else None) for a in at.values()}
        sizes = {(a.op, a.sizes) if a else None for a in at.values()}
        if len(ops) == 1 and len(sizes) == 1:
            continue
        what = "a different collective" if len(ops) > 1 else "different sizes"
        return [
            DivergenceItem(
                kind="collectives",
                compile_id="",
                text=f"collective #{i + 1}: {what} across ranks",
                ranks=tuple(
                    RankLink(
                        rank=r,
                        text=f"{a.op} {a.sizes}".strip() if a else "no collective here",
                        compile=CompileKey(a.compile) if a else None,
                        stage=a.stage if a else None,
                    )
                    for r, a in at.items()
                ),
            )
        ]
    return []


def _skewed(found: Skew, by_id: dict[str, dict[int | None, Compile]]) -> list[DivergenceItem]:
    """A rank that compiled much longer than the fastest, and each compile id that some
    rank served from a cache while another compiled it cold."""
    items = []
    if found.slow and found.totals:
        totals = found.totals
        fastest = min(totals, key=lambda r: totals[r])
        slowest = found.slow[0]
        items.append(
            DivergenceItem(
                kind="compile_time",
                compile_id="",
                text=(
                    f"{_rank_list(list(found.slow))} compiled for {totals[slowest]:.1f} s, "
                    f"{_rank_list([fastest])} for {totals[fastest]:.1f} s: the faster ranks "
                    f"wait about {found.wait:.1f} s in their next collective"
                ),
                ranks=tuple(
                    RankLink(
                        rank=r,
                        text=f"{totals[r]:.1f} s compiling",
                        compile=key_of(c) if c is not None else None,
                        stage=compile_pane("compilation_metrics") if c is not None else None,
                    )
                    for r in found.ranks
                    for c in [_slowest_compile(found, by_id, r)]
                ),
            )
        )
    for row in found.cache_split:
        on = by_id[row.compile_id]
        hit = [r for r, state in row.cache.items() if state == "hit"]
        missed = [r for r, state in row.cache.items() if state == "miss"]
        items.append(
            DivergenceItem(
                kind="caches",
                compile_id=row.compile_id,
                text=(
                    f"compile {row.compile_id} ({row.code_name}): {_rank_list(hit)} hit the "
                    f"cache, {_rank_list(missed)} compiled it cold "
                    f"({_seconds(row, hit)} against {_seconds(row, missed)})"
                ),
                ranks=tuple(
                    RankLink(
                        rank=r,
                        text=f"{row.cache[r] or 'no cache lookup'}, {row.seconds[r]:.2f} s: "
                        + ", ".join(sorted(set(c.metrics.cache_events))),
                        compile=key_of(c),
                        stage=compile_pane("compilation_metrics"),
                    )
                    for r, c in on.items()
                ),
            )
        )
    return items


def _slowest_compile(
    found: Skew, by_id: dict[str, dict[int | None, Compile]], rank: int | None
) -> Compile | None:
    """The rank's longest compile among those every rank made: where to look first."""
    shared = [row for row in found.compiles if len(row.seconds) == len(found.ranks)]
    if not shared:
        return None
    row = max(shared, key=lambda x: x.seconds[rank])
    return by_id[row.compile_id][rank]


def _seconds(row: CompileTimes, ranks: list[int | None]) -> str:
    return ", ".join(f"{row.seconds[r]:.2f} s" for r in ranks)


def _main_pane(c: Compile) -> PaneId:
    if c.recompile_reasons:
        return compile_pane("recompile_reasons")
    if "dynamo_output_graph" in c.graphs:
        return compile_pane("dynamo_output_graph")
    if c.graph_breaks:
        return compile_pane("dynamo_graph_break_reason")
    return compile_pane("compilation_metrics")


def _rank_list(ranks: list[int | None]) -> str:
    names = ["the single process" if r is None else str(r) for r in ranks]
    return ("rank " if len(names) == 1 else "ranks ") + ", ".join(names)
