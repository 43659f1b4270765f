"""Why a compile exists: the graph breaks that split its frame and the failed guards that
made it compile again. Only a compile that has them shows these panes, so their classes
are here, beside their builders, imported with the first such pane
(``explorer.panes.kinds``).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Exploration
from compiler.link import ids

from ..frame import find_compile
from ..labels import group_of, label_of
from ..types import _FROZEN, PaneHead


@dataclass(**_FROZEN)
class StackFrame:
    """One frame of a graph break's user stack; ``src`` only for the user's own code."""

    src: str | None
    text: str


@dataclass(**_FROZEN)
class GraphBreakItem:
    """One graph break: why, where, and torch's hints."""

    summary: str
    reason: str
    src: str | None
    location: str
    code: str
    hints: tuple[str, ...]
    user_stack: tuple[StackFrame, ...]
    documentation: str


@dataclass(**_FROZEN)
class GraphBreaksPane(PaneHead):
    """The graph breaks of one compile."""

    kind: str = "graph_breaks"
    items: tuple[GraphBreakItem, ...] = ()


@dataclass(**_FROZEN)
class RecompileItem:
    """A failed guard that caused this recompile."""

    previous: str
    reason: str
    text: str


@dataclass(**_FROZEN)
class RecompileReasonsPane(PaneHead):
    """Why this compile happened again."""

    kind: str = "recompile_reasons"
    items: tuple[RecompileItem, ...] = ()


def build_graph_breaks(exp: Exploration, compile_key: str, pane_id: str) -> GraphBreaksPane:
    """The graph breaks of one compile, each linked to its user source line."""
    c = find_compile(exp, compile_key)
    items = []
    for gb in c.graph_breaks:
        # a file without ``user_frames`` (written before it existed) links no frame
        mine = (*gb.user_frames, *(False,) * (len(gb.user_stack) - len(gb.user_frames)))
        stack = tuple(
            StackFrame(src=ids.loc_key(loc) if user else None, text=f"{loc} in {loc.function}")
            for loc, user in zip(gb.user_stack, mine, strict=False)
        )
        items.append(
            GraphBreakItem(
                summary=gb.summary,
                reason=gb.reason,
                src=ids.loc_key(gb.location),
                location=str(gb.location) if gb.location else "",
                code=gb.location.code if gb.location else "",
                hints=gb.hints,
                user_stack=stack,
                documentation=gb.documentation,
            )
        )
    stage = "dynamo_graph_break_reason"
    return GraphBreaksPane(
        id=pane_id, stage=stage, label=label_of(stage), group=group_of(stage), items=tuple(items)
    )


def build_recompile_reasons(
    exp: Exploration, compile_key: str, pane_id: str
) -> RecompileReasonsPane:
    """The failed guards that made this compile happen."""
    c = find_compile(exp, compile_key)
    stage = "recompile_reasons"
    items = tuple(
        RecompileItem(previous=r.previous, reason=r.reason, text=r.text)
        for r in c.recompile_reasons
    )
    return RecompileReasonsPane(
        id=pane_id, stage=stage, label=label_of(stage), group=group_of(stage), items=items
    )
