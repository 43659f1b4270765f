"""The UI labels, keyed by stage id (the trace keys, verbatim), and the compiler group
each stage belongs to: both read from the one stage table (``compiler.model.stages``)."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.model.stages import DYNAMO_GRAPH, GROUPS, STAGE, STAGES

# every stage's label, then the groups' (a stage with none shows its key)
STAGE_LABELS = {**{s.key: s.label for s in STAGES if s.label}, **dict(GROUPS)}


def label_of(stage: str, suffix: str = "") -> str:
    """``Output code · forward`` for stage ``inductor_output_code`` of ``forward``."""
    label = STAGE_LABELS.get(stage, stage)
    return f"{label} · {suffix}" if suffix else label


def group_of(stage: str) -> str:
    """The compiler group of a stage (``group_aot`` for graphs not listed)."""
    known = STAGE.get(stage)
    return "group_aot" if known is None else known.group


def kind_of(stage: str) -> str:
    """The pane kind that shows a stage (``graph`` for graphs not listed)."""
    known = STAGE.get(stage)
    return known.pane if known is not None and known.pane else "graph"


def default_pane(panes: Sequence[str]) -> str | None:
    """The pane a compile opens on when nothing asks for another: its Dynamo graph, else
    the first it lists. The one rule of the default stage: the index carries what it
    picks (``CompileEntry.default_stage``) and the browser only reads it.

    Example:
        >>> default_pane(["bytecode", "dynamo_output_graph"]), default_pane(["bytecode"])
        ('dynamo_output_graph', 'bytecode')
    """
    return DYNAMO_GRAPH if DYNAMO_GRAPH in panes else next(iter(panes), None)
