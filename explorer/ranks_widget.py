"""``RanksWidget``: a production-size multi-rank log, opened rank by rank.

The first paint shows the outline of every rank (``compiler.ranks.scan.scan_ranks``:
compile ids, recompile reasons, graph breaks, fingerprints; no graph parsed) with the
ranks pane and the advisor judging that outline. Opening a pane of rank ``r`` reads
``r``'s log in full (``compiler.load_trace``) and shows its compiles in full in the
tree; one rank is held at a time, so memory stays near one rank's worth whatever the
number of ranks.
"""

from __future__ import annotations

from typing import Any

from compiler import Exploration, load_trace
from compiler.link.ids import EXPLORATION_PANES
from compiler.ranks.scan import Outline

from .panes import Index, build_index, build_pane, no_gc, pane_json
from .widget import ExplorationWidget


class RanksWidget(ExplorationWidget):
    """The explorer on the outline of many ranks, loading a rank when it is opened.

    Example:
        >>> from compiler.ranks.scan import scan_ranks
        >>> w = RanksWidget(scan_ranks("/work/traces-ranks/gpt2_8ranks"))  # doctest: +SKIP
    """

    def __init__(self, outline: Outline, **kwargs: Any) -> None:
        self._outline = outline
        self._open_rank: int | None = None
        self._rank_panes: dict[tuple[str, str], Any] = {}
        super().__init__(outline.exploration, **kwargs)

    @property
    def outline(self) -> Outline:
        """Every rank in outline, and each rank's log file."""
        return self._outline

    @property
    def open_rank(self) -> int | None:
        """The rank whose compiles are loaded in full (None before any is opened)."""
        return self._open_rank

    def _index(self, exploration: Exploration) -> Index:
        with no_gc():
            return build_index(exploration, whole=self._outline.exploration)

    def pane(self, compile_key: str | None, pane_id: str) -> Any:
        """A pane: the whole run's (findings, ranks) from the outline; a compile's from its
        rank's log, which is read first if it is not the open rank."""
        if pane_id in EXPLORATION_PANES:
            key = ("", pane_id)
            if key not in self._rank_panes:
                with no_gc():
                    whole = self._outline.exploration
                    self._rank_panes[key] = pane_json(build_pane(whole, compile_key, pane_id))
            return self._rank_panes[key]
        rank = next(
            (c.rank for c in self._outline.exploration.compiles if c.key == compile_key), None
        )
        if rank is not None and rank != self._open_rank:
            self._open(rank)
        return super().pane(compile_key, pane_id)

    def _open(self, rank: int) -> None:
        """Read ``rank``'s log in full and show its compiles so; the rank open before goes
        back to its outline (its memory is released)."""
        loaded = load_trace(self._outline.file_of(rank).path)
        compiles = tuple(c for c in self._outline.exploration.compiles if c.rank != rank) + tuple(
            c for c in loaded.compiles if c.rank == rank
        )
        order = {c.key: i for i, c in enumerate(self._outline.exploration.compiles)}
        compiles = tuple(sorted(compiles, key=lambda c: order.get(c.key, len(order))))
        whole = self._outline.exploration
        mixed = Exploration(
            source=whole.source,
            target=whole.target,
            environment=loaded.environment,
            compiles=compiles,
            errors=whole.errors + loaded.errors,
            notes=whole.notes,
        )
        self._open_rank = rank
        self.update(mixed)
