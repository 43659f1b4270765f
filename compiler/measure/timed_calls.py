"""The one loop that times calls: warm-up calls, then timed calls, each started after the
device is synchronised and stopped after it is synchronised again.

Capture (``explore(measure=True)``: eager against compiled, and the profiled pass of
kernel timing), ``compare`` and ``try_fixes`` all time through it, so a millisecond means
the same thing in the call pane, the comparison table and a tried fix's before and after.
``CallTimes`` keeps every timed call, so each caller reads the figure it shows (median,
spread, mean, host time) from the same numbers; ``CallTimes.of`` wraps times recorded
elsewhere (calls the user made) in the same shape, and ``time_call`` is one timed call
for a caller that makes the calls itself.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Sync = Callable[[], None]


def _no_sync() -> None:
    """Nothing to wait for: on the CPU a call has finished when it returns."""


def synchroniser(cuda: bool) -> Sync:
    """What waits for the device: ``torch.cuda.synchronize`` on CUDA, nothing elsewhere.

    >>> synchroniser(False)()
    """
    if not cuda:
        return _no_sync
    import torch

    return torch.cuda.synchronize


@dataclass(frozen=True, slots=True)
class TimedCall:
    """One call: wall time until the device finished (``ms``) and until the call returned
    on the host (``host_ms``), both in milliseconds, and what the call returned."""

    ms: float
    host_ms: float
    result: Any = field(default=None, repr=False, compare=False)


def time_call(call: Callable[[], Any], sync: Sync = _no_sync) -> TimedCall:
    """Time one call, the device synchronised before the clock starts and before it stops
    (so the call's own queued work is in it, and earlier calls' work is not).

    >>> t = time_call(lambda: sum(range(1000)))
    >>> t.result, t.ms >= t.host_ms >= 0
    (499500, True)
    """
    sync()
    start = time.perf_counter()
    result = call()
    returned = time.perf_counter()
    sync()
    end = time.perf_counter()
    return TimedCall(ms=(end - start) * 1e3, host_ms=(returned - start) * 1e3, result=result)


@dataclass(frozen=True, slots=True)
class CallTimes:
    """Milliseconds of each timed call, in order (``calls_ms``, wall time until the device
    finished; ``host_ms``, until the call returned), and the first call's time (compile
    included) with what it returned, where the first call was timed.

    >>> t = CallTimes.of([3.0, 1.0, 2.0])
    >>> t.median_ms, t.spread_ms, t.mean_ms
    (2.0, (1.0, 3.0), 2.0)
    """

    calls_ms: tuple[float, ...]
    host_ms: tuple[float, ...] = ()
    first_ms: float | None = None
    first_result: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, calls_ms: Iterable[float]) -> CallTimes:
        """Times already taken (milliseconds per call), in the shape the loop returns."""
        return cls(calls_ms=tuple(calls_ms))

    @property
    def median_ms(self) -> float:
        return statistics.median(self.calls_ms)

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.calls_ms)

    @property
    def spread_ms(self) -> tuple[float, float]:
        """(fastest, slowest) call."""
        return (min(self.calls_ms), max(self.calls_ms))

    @property
    def host_median_ms(self) -> float:
        return statistics.median(self.host_ms)


def time_calls(
    call: Callable[[], Any],
    *,
    warmup: int,
    runs: int,
    sync: Sync = _no_sync,
    first: bool = False,
    before: Callable[[str, int], None] | None = None,
    around: contextlib.AbstractContextManager[Any] | None = None,
) -> CallTimes:
    """Call ``call`` ``warmup`` times untimed, then ``runs`` times timed (``time_call``).

    Args:
        call: what to time, with its arguments bound.
        warmup: untimed calls first (caches filled, CUDA graphs recorded, clocks up).
        runs: timed calls.
        sync: waits for the device (``synchroniser``); nothing on the CPU.
        first: time the first call as well, before the warm-ups (``first_ms``; what it
            returned is ``first_result``).
        before: told ``("first call", 0)``, ``("warm-up", i)`` or ``("timing", i)`` just
            before each call (progress, or marking what a call logs).
        around: a context entered around the timed calls only (a profiler).

    >>> calls = []
    >>> t = time_calls(lambda: calls.append(1), warmup=2, runs=3,
    ...                before=lambda phase, i: calls.append(phase))
    >>> len(t.calls_ms), len(t.host_ms), t.first_ms
    (3, 3, None)
    >>> calls.count("warm-up"), calls.count("timing"), calls.count(1)
    (2, 3, 5)
    """
    tell = before or (lambda _phase, _i: None)
    first_ms, first_result = None, None
    if first:
        tell("first call", 0)
        once = time_call(call, sync)
        first_ms, first_result = once.ms, once.result
    for i in range(warmup):
        tell("warm-up", i)
        call()
    timed: list[TimedCall] = []
    with around if around is not None else contextlib.nullcontext():
        for i in range(runs):
            tell("timing", i)
            timed.append(time_call(call, sync))
    return CallTimes(
        calls_ms=tuple(t.ms for t in timed),
        host_ms=tuple(t.host_ms for t in timed),
        first_ms=first_ms,
        first_result=first_result,
    )
