"""The collectives a rank's compiled graphs issue, in order, with their sizes.

Two sources, as torch records them: Inductor's ``inductor_collective_schedule`` artifact
(the collective kernels in the order the scheduler placed them), and the graphs
themselves, whose nodes call ``_c10d_functional`` ops (or the functional-collective
wrappers Dynamo traces) with the shapes of what they move. A rank whose sequence differs
from another's in order or in size waits forever in a real run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from compiler.link.ids import PaneId, compile_pane, key_of, output_code_pane
from compiler.model import Compile, Exploration
from compiler.model.stages import DYNAMO_GRAPH

SCHEDULE_ARTIFACT = "inductor_collective_schedule"
# graphs to read collectives from, the most lowered first: one source per compile
_GRAPH_STAGES = ("aot_forward_graph", "aot_inference_graph", DYNAMO_GRAPH)
_COLLECTIVE_OPS = (
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce_",
    "scatter", "gather", "send", "recv", "barrier",
)  # fmt: skip
_COLLECTIVE_MODULES = ("c10d", "_functional_collectives", "torch.distributed")


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective call: the op, the shapes it moves (``f32[8, 16]``), and where
    it was seen (the compile's key and the pane that shows it)."""

    op: str
    sizes: str
    compile: str
    stage: PaneId


def is_collective(target: str) -> bool:
    """Whether a graph node's target is a collective op.

    Example:
        >>> is_collective("torch.ops._c10d_functional.all_reduce.default")
        True
        >>> is_collective("torch.ops.aten.add.Tensor")
        False
    """
    low = target.lower()
    return any(m in low for m in _COLLECTIVE_MODULES) and any(op in low for op in _COLLECTIVE_OPS)


def of_compile(c: Compile) -> tuple[Collective, ...]:
    """The collectives of one compile, in program order."""
    key = key_of(c)
    schedule = c.artifacts.get(SCHEDULE_ARTIFACT)
    if schedule:
        try:
            names = json.loads(schedule)
        except json.JSONDecodeError:
            names = []
        if isinstance(names, list) and names:
            shown = _output_code_stage(c)
            return tuple(Collective(str(n), "", key, shown) for n in names)
    for stage in _GRAPH_STAGES:
        graph = c.graphs.get(stage)
        # a cheap test on the text before parsing nodes: most graphs hold no collective
        if graph is None or not any(m in graph.text for m in _COLLECTIVE_MODULES):
            continue
        found = tuple(
            Collective(_op(n.target), _sizes(n.meta), key, compile_pane(stage))
            for n in graph.nodes
            if n.op == "call_function" and is_collective(n.target)
        )
        if found:
            return found
    return ()


def by_rank(exp: Exploration) -> dict[int | None, tuple[Collective, ...]]:
    """Each rank's collectives over all its compiles, in compile order."""
    out: dict[int | None, list[Collective]] = {}
    for c in exp.compiles:
        out.setdefault(c.rank, []).extend(of_compile(c))
    return {rank: tuple(seq) for rank, seq in out.items()}


def _op(target: str) -> str:
    """``torch.ops._c10d_functional.all_reduce.default`` -> ``all_reduce``."""
    parts = [p for p in target.split(".") if p not in ("default", "Tensor", "")]
    return parts[-1] if parts else target


def _sizes(meta: tuple[object, ...]) -> str:
    return ", ".join(
        f"{getattr(m, 'dtype', '')}[{', '.join(getattr(m, 'shape', ()))}]" for m in meta
    )


def _output_code_stage(c: Compile) -> PaneId:
    for oc in c.output_code:
        if oc.text:
            return output_code_pane(oc)
    return compile_pane("compilation_metrics")
