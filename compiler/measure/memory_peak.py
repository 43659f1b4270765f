"""Peak CUDA memory of one call, forward and backward apart, and the CUDA graph pools.

The peak is ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``, taken
around one call made after a warm call (so the compile, the autotuning and the first
CUDA graph recordings are not in it), minus what was allocated before the call: the
memory the call itself needed on top of the model and its inputs. Eager and compiled
are measured the same way, so the two figures compare.

CUDA graph trees allocate from private pools; their bytes are the segments of the
caching allocator's snapshot whose pool id is not the default one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PeakMemory:
    """One measured call: bytes above those allocated before it.

    ``backward_bytes`` is None where no backward ran; ``pool_bytes`` is the memory held
    by CUDA graph private pools after the call; ``held_bytes`` what the forward left
    allocated for the backward (saved activations and the outputs)."""

    label: str
    forward_bytes: int
    backward_bytes: int | None
    before_bytes: int
    pool_bytes: int = 0
    held_bytes: int | None = None  # still allocated between forward and backward

    @property
    def peak_bytes(self) -> int:
        """The larger of the two phases' peaks."""
        return max(self.forward_bytes, self.backward_bytes or 0)


def graph_pool_bytes(snapshot: list[dict[str, Any]] | None = None) -> int:
    """Bytes reserved by CUDA graph private memory pools (0 without CUDA).

    >>> graph_pool_bytes([{"segment_pool_id": (0, 1), "total_size": 2048},
    ...                   {"segment_pool_id": (0, 0), "total_size": 512}])
    2048
    """
    if snapshot is None:
        import torch

        if not torch.cuda.is_available():
            return 0
        snapshot = list(torch.cuda.memory_snapshot())  # type: ignore[no-untyped-call]
    return sum(
        int(s.get("total_size", 0))
        for s in snapshot
        if tuple(s.get("segment_pool_id", (0, 0))) != (0, 0)
    )


def peak_memory(
    forward: Callable[[], Any],
    backward: Callable[[Any], Any] | None = None,
    *,
    label: str = "",
    warm_calls: int = 1,
) -> PeakMemory:
    """Peak memory of ``forward()`` (and ``backward(result)``) after ``warm_calls`` calls.

    Each of forward and backward is measured apart: the peak counter is reset before it
    and read after it, as bytes above those allocated when it began.

    >>> peak_memory(lambda: None).label  # doctest: +SKIP
    ''
    """
    import torch

    if not torch.cuda.is_available():
        msg = "peak_memory() measures CUDA memory and needs a CUDA device."
        raise RuntimeError(msg)
    for _ in range(warm_calls):
        out = forward()
        if backward is not None:
            backward(out)
        del out
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = forward()
    torch.cuda.synchronize()
    fwd = torch.cuda.max_memory_allocated() - before
    bwd = held = None
    if backward is not None:
        mid = torch.cuda.memory_allocated()
        held = mid - before
        torch.cuda.reset_peak_memory_stats()
        backward(out)
        torch.cuda.synchronize()
        bwd = torch.cuda.max_memory_allocated() - mid
    del out
    return PeakMemory(label, fwd, bwd, before, graph_pool_bytes(), held)


# Measured peaks travel in ``Exploration.counters`` under these keys (bytes, ints), so a
# recording of any schema version holds them without a new field.
COUNTER_PREFIX = "memory."


def as_counters(peaks: list[PeakMemory]) -> dict[str, int]:
    """``Exploration.counters`` entries for measured peaks (``memory.<label>.<what>``).

    >>> as_counters([PeakMemory("eager", 10, 20, 5, 0, 7)])["memory.eager.backward_bytes"]
    20
    """
    out: dict[str, int] = {}
    for p in peaks:
        base = f"{COUNTER_PREFIX}{p.label}."
        out[base + "forward_bytes"] = p.forward_bytes
        if p.backward_bytes is not None:
            out[base + "backward_bytes"] = p.backward_bytes
        if p.held_bytes is not None:
            out[base + "held_bytes"] = p.held_bytes
        out[base + "before_bytes"] = p.before_bytes
        out[base + "pool_bytes"] = p.pool_bytes
    return out


def from_counters(counters: dict[str, int]) -> list[PeakMemory]:
    """The peaks ``as_counters`` stored, in label order.

    >>> from_counters(as_counters([PeakMemory("eager", 10, None, 5)]))[0].forward_bytes
    10
    """
    keys = [k[len(COUNTER_PREFIX) :] for k in counters if k.startswith(COUNTER_PREFIX)]
    labels = sorted({k.rsplit(".", 1)[0] for k in keys})
    out = []
    for label in labels:
        base = f"{COUNTER_PREFIX}{label}."
        if base + "forward_bytes" not in counters:
            continue
        out.append(
            PeakMemory(
                label,
                counters[base + "forward_bytes"],
                counters.get(base + "backward_bytes"),
                counters.get(base + "before_bytes", 0),
                counters.get(base + "pool_bytes", 0),
                counters.get(base + "held_bytes"),
            )
        )
    return out


def call_peaks(run: Callable[[], Any]) -> list[PeakMemory]:
    """Eager and compiled peak of one call of ``run`` (a compiled target), each after a
    warm call: eager under ``torch.compiler.set_stance("force_eager")``. The whole call
    is one phase here (a training step's backward included); ``peak_memory`` with a
    backward callable measures the two apart.

    >>> call_peaks(lambda: None)  # doctest: +SKIP
    [PeakMemory(label='eager', ...), PeakMemory(label='compiled', ...)]
    """
    import torch

    with torch.compiler.set_stance("force_eager"):
        eager = peak_memory(run, label="eager")
    return [eager, peak_memory(run, label="compiled")]
