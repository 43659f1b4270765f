"""Ranks that compiled differently, and ranks that compiled the same but not equally fast:
one finding each, the divergence's places as evidence (``compiler.ranks.divergence``,
``compiler.ranks.skew``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler.advise._common import Ranked, cause_key, finding, plural
from compiler.advise.findings import Evidence
from compiler.model import Exploration
from compiler.ranks.skew import SLOW_RATIO, SLOW_SECONDS, skew

if TYPE_CHECKING:
    from compiler.ranks.divergence import DivergenceItem

# evidence shown per finding: the first places, each rank's side linked
_SHOWN = 4
# what compiled differently; the rest (compile_time, caches) is skew
_SKEW_KINDS = frozenset({"compile_time", "caches"})


def findings(exp: Exploration) -> list[Ranked]:
    """A problem when the ranks diverge, a warning when their compiles are skewed;
    nothing for one rank or ranks that agree."""
    if len(exp.ranks) < 2:
        return []
    # a log of one process, the common case, needs none of the comparison's modules
    from compiler.ranks.divergence import divergence

    div = divergence(exp)
    differ = [i for i in div.items if i.kind not in _SKEW_KINDS]
    skewed = [i for i in div.items if i.kind in _SKEW_KINDS]
    out = []
    if differ:
        out.append(_diverged(differ))
    if skewed:
        out.append(_skewed(exp, skewed))
    return out


def _evidence(items: list[DivergenceItem]) -> list[Evidence]:
    return [
        Evidence(
            text=f"{item.text} — rank {side.rank}: {side.text}",
            compile=side.compile,
            stage=side.stage,
        )
        for item in items[:_SHOWN]
        for side in item.ranks
        if side.compile is not None
    ]


def _diverged(items: list[DivergenceItem]) -> Ranked:
    kinds = {i.kind for i in items}
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
    return finding(
        "ranks.divergence",
        "problem",
        f"Ranks compiled differently: {items[0].text}",
        _evidence(items),
        f"{why}\n{fix}",
        impact=f"{plural(len(items), 'place')} where ranks differ",
        score=float(len(items)) * 10.0,
        cause=cause_key("ranks", "divergence"),
    )


def _skewed(exp: Exploration, items: list[DivergenceItem]) -> Ranked:
    found = skew(exp)
    caches = [i for i in items if i.kind == "caches"]
    slow = next((i for i in items if i.kind == "compile_time"), None)
    if slow is not None:
        title = f"Ranks compile at different speeds: {slow.text}"
    else:
        title = (
            f"Some ranks hit the compile caches where others compiled cold "
            f"({plural(len(caches), 'compile')}; the faster ranks wait about "
            f"{found.wait:.1f} s)"
        )
    why = (
        "Ranks compile the same frames between the same collectives, so the rank that "
        "compiles longest sets the pace: every other rank waits for it in its next "
        "collective. NCCL's watchdog aborts a collective that waits longer than the process "
        "group's timeout (10 minutes by default for NCCL, "
        "`torch.distributed.constants.default_pg_nccl_timeout`; 30 for other backends), "
        "and the run dies with a timeout that no rank's own log explains. A warm cache on "
        "some ranks only (one rank ran before, a per-node cache folder, a cache on a "
        "shared file system that one rank filled first) is the usual cause; a large model "
        "with max-autotune turns the seconds here into minutes.\n"
        f"(Flagged: a rank whose compiles took {SLOW_RATIO:g}x the fastest rank's and "
        f"{SLOW_SECONDS:g} s more, or a compile one rank served from a cache that another "
        "compiled cold.)"
    )
    fix = (
        "Warm the caches on every rank alike: point every rank at the same filled "
        "`TORCHINDUCTOR_CACHE_DIR`, or empty it on all of them. Precompile: after one "
        "warm run, `artifacts = torch.compiler.save_cache_artifacts()` and, on every rank "
        "before its first step, `torch.compiler.load_cache_artifacts(artifacts[0])`. Give "
        "the first steps room: `dist.init_process_group(\"nccl\", "
        "timeout=datetime.timedelta(minutes=30))`."
    )
    return finding(
        "ranks.compile_skew",
        "warning",
        title,
        _evidence(([slow] if slow else []) + caches),
        f"{why}\n{fix}",
        impact=f"the faster ranks wait about {found.wait:.1f} s in a collective",
        score=found.wait,
        cause=cause_key("ranks", "compile_skew"),
    )
