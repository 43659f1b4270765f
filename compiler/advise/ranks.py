"""Ranks that compiled differently: one problem finding, the divergence's places as its
evidence (``compiler.ranks.divergence``)."""

from __future__ import annotations

from compiler.advise._common import Ranked, finding, plural
from compiler.advise.findings import Evidence
from compiler.model import Exploration
from compiler.ranks.divergence import divergence

# evidence shown per finding: the first places, each rank's side linked
_SHOWN = 4


def findings(exp: Exploration) -> list[Ranked]:
    """A problem when the ranks diverge; nothing for one rank or ranks that agree."""
    if len(exp.ranks) < 2:
        return []
    div = divergence(exp)
    if not div.items:
        return []
    evidence = [
        Evidence(
            text=f"{item.text} — rank {side.rank}: {side.text}",
            compile=side.compile,
            stage=side.stage,
        )
        for item in div.items[:_SHOWN]
        for side in item.ranks
        if side.compile is not None
    ]
    kinds = {i.kind for i in div.items}
    why = (
        "A rank that compiles a frame the others do not (or compiles it differently) runs "
        "different graphs: its next collective waits for ranks that are elsewhere, and the "
        "run hangs or times out (NCCL watchdog) or its numbers drift apart."
    )
    fix = (
        "Make every rank see the same shapes and the same Python state: pad or bucket "
        "batches to fixed sizes (drop_last=True, the same sequence length on every rank), "
        "or mark the varying dimension dynamic up front "
        "(`torch._dynamo.mark_dynamic(x, 0)`) so no rank recompiles on its own."
    )
    if "collectives" in kinds and len(kinds) == 1:
        fix = (
            "Issue the same collectives with the same sizes on every rank: sizes that "
            "depend on a rank's own data must be padded to a common size first."
        )
    return [
        finding(
            "ranks.divergence",
            "problem",
            f"Ranks compiled differently: {div.items[0].text}",
            evidence,
            f"{why}\n{fix}",
            impact=f"{plural(len(div.items), 'place')} where ranks differ",
            score=float(len(div.items)) * 10.0,
        )
    ]
