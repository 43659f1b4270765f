"""Compile-time and cache skew between ranks: who compiled for how long, and who hit a
cache the others missed.

Ranks of one program compile the same frames between the same collectives. A rank that
compiles longer (a cold cache where another rank's was warm, a slower file system for
the cache, CPU contention) arrives late at the next collective, and every other rank
waits there. NCCL's watchdog aborts a collective that waits past the process group's
timeout (``torch.distributed``'s default for NCCL: 10 minutes), so a skew of minutes
between ranks' compiles is a hang or a crash that no rank's own log explains.

The figures are torch's own: each compile's ``compilation_metrics``
(``entire_frame_compile_time_s``; the backward's ``inductor_compile_time_s`` from
``bwd_compilation_metrics``) and the FX-graph and AOTAutograd cache events of each rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from compiler.model import Compile, Exploration

# a rank is flagged slow when its compiles (those of every compile id all ranks made)
# took at least SLOW_RATIO times the fastest rank's and SLOW_SECONDS more: the fastest
# rank waits about the difference in its next collective. A ratio alone flags
# milliseconds; seconds alone flag a large model's ordinary spread.
SLOW_RATIO = 2.0
SLOW_SECONDS = 5.0

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}


def compile_seconds(c: Compile) -> float:
    """What ``c`` cost its rank in compile time: the frame's compile and, where it had
    one, its backward's (compiled at the first backward, before that step's collectives).

    Example:
        >>> from compiler.model import CompileId, CompileMetrics
        >>> m = CompileMetrics(entire_frame_seconds=2.0, backward_seconds=0.5)
        >>> compile_seconds(Compile(compile_id=CompileId.from_string("0/0"), metrics=m))
        2.5
    """
    m = c.metrics
    return (m.entire_frame_seconds or 0.0) + (m.backward_seconds or 0.0)


def cache_state(c: Compile) -> str:
    """``miss`` when any of the compile's FX-graph or AOTAutograd lookups missed (that
    part was compiled cold), ``hit`` when lookups hit and none missed, ``bypass`` when the
    only lookups were bypassed, "" without any lookup (Dynamo-only frames, the eager
    backend). (A rank's second identical graph hits what its first just wrote: such a
    compile is still a ``miss``.)"""
    events = c.metrics.cache_events
    if c.metrics.fx_cache_misses or c.metrics.aot_cache_misses or any(
        e.endswith("_miss") for e in events
    ):
        return "miss"
    if any(e.endswith("_hit") for e in events) or c.metrics.fx_cache_hits:
        return "hit"
    return "bypass" if any(e.endswith("_bypass") for e in events) else ""


@dataclass(**_FROZEN)
class CompileTimes:
    """One compile id on every rank that made it: seconds and cache state per rank."""

    compile_id: str
    code_name: str
    seconds: dict[int | None, float]
    cache: dict[int | None, str]

    @property
    def cache_split(self) -> bool:
        """Some rank hit a cache where another missed."""
        states = set(self.cache.values())
        return "hit" in states and "miss" in states


@dataclass(**_FROZEN)
class Skew:
    """Compile time per rank and per compile id, and the ranks that stand out.

    ``totals``: each rank's seconds over the compile ids every rank made (a compile only
    one rank made is a divergence of its own); ``slow``: ranks past the threshold
    (``SLOW_RATIO``, ``SLOW_SECONDS``), slowest first; ``wait``: about how long the
    fastest rank waits in its collectives for the slowest."""

    ranks: tuple[int | None, ...]
    compiles: tuple[CompileTimes, ...] = ()
    totals: dict[int | None, float] | None = None
    slow: tuple[int | None, ...] = ()

    @property
    def wait(self) -> float:
        """Slowest total minus fastest, in seconds (0 for one rank)."""
        if not self.totals:
            return 0.0
        return max(self.totals.values()) - min(self.totals.values())

    @property
    def cache_split(self) -> tuple[CompileTimes, ...]:
        """The compile ids where some rank hit a cache another rank missed."""
        return tuple(c for c in self.compiles if c.cache_split)

    def median_total(self) -> float:
        """The median of the ranks' totals."""
        return median(self.totals.values()) if self.totals else 0.0


def skew(exp: Exploration) -> Skew:
    """Compile time and cache state of every compile id on every rank of ``exp``.

    Example:
        >>> import compiler  # a DDP run on 2 x H200, rank 0's caches warm
        >>> exp = compiler.load_trace("tests/data/traces/nccl/ddp_skew")
        >>> s = skew(exp); s.slow, round(s.wait), [c.compile_id for c in s.cache_split]
        ((1,), 12, ['5/0', '7/0'])
    """
    found: Skew = exp.derived.named("rank_skew", lambda: _skew(exp)).get()
    return found


def _skew(exp: Exploration) -> Skew:
    ranks = tuple(sorted(exp.ranks, key=lambda r: -1 if r is None else r))
    by_id: dict[str, dict[int | None, Compile]] = {}
    for c in exp.compiles:
        by_id.setdefault(str(c.compile_id), {})[c.rank] = c
    rows = tuple(
        CompileTimes(
            compile_id=cid,
            code_name=next(iter(on.values())).code_name,
            seconds={r: compile_seconds(c) for r, c in on.items()},
            cache={r: cache_state(c) for r, c in on.items()},
        )
        for cid, on in by_id.items()
    )
    if len(ranks) < 2:
        return Skew(ranks=ranks, compiles=rows)
    shared = [row for row in rows if len(row.seconds) == len(ranks)]
    totals = {r: sum(row.seconds[r] for row in shared) for r in ranks}
    fastest = min(totals.values())
    slow = tuple(
        sorted(
            (r for r, t in totals.items()
             if t >= SLOW_RATIO * fastest and t - fastest >= SLOW_SECONDS),
            key=lambda r: -totals[r],
        )
    )  # fmt: skip
    return Skew(ranks=ranks, compiles=rows, totals=totals, slow=slow)
