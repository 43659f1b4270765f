"""Per-kernel device time on CUDA, and the bandwidth each kernel achieved.

``explore(..., measure=True)`` times kernels from the target's own run where it calls its
compiled code more than once (``compiler.profile.own_run``); ``measure`` here re-runs the
compiled program for a target that calls it once. The profiler gives each kernel launch's
device duration; the device's peak is measured here too, as the bandwidth of a large
device-to-device copy.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.gpu.kernel_work import kernel_bytes, kernel_flops
from compiler.measure.timed_calls import synchroniser, time_calls
from compiler.model import Kernel, KernelTiming, OutputCode
from compiler.parse.words.names import library_aten_name

REPEATS = 20


@dataclass
class Profiled:
    """What the profiler saw over ``runs`` calls of the compiled program."""

    durations: dict[str, list[float]]
    graph_launches: int
    device_us: float
    unattributed_us: dict[str, float]


def measure(
    run: Callable[[], Any], names: set[str], *, warmup: int = 3, repeats: int = REPEATS
) -> Profiled:
    """Device durations (microseconds) of each named kernel over ``repeats`` calls, how
    many CUDA graphs were launched (replays, under reduce-overhead), the device time of
    every kernel and copy, and the device time outside the named kernels."""
    from torch.profiler import ProfilerActivity, profile

    # CPU activity too: library calls are found through their aten op's CPU event,
    # whose kernels are those of the library (cuBLAS, cuDNN, attention). Each call is
    # synchronised like every timed call; a kernel's device time does not depend on it.
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    prof: Any = profile(activities=activities, record_shapes=True)
    time_calls(run, warmup=warmup, runs=repeats, sync=synchroniser(True), around=prof)
    aten = {a: n for n in names if (a := library_aten_name(n)) is not None}
    durations: dict[str, list[float]] = {}
    unattributed: dict[str, float] = {}
    graph_launches = 0
    device_us = 0.0
    attributed_ids: set[int] = set()
    events = list(prof.events())
    # record_function ranges (the compiled graph's "## Call CompiledFxGraph ##", the
    # optimizer's step) are mirrored on the device timeline and span its kernels:
    # they are not device work of their own.
    ranges = {e.name for e in events if not str(e.device_type).endswith("CUDA")}
    for event in events:
        if event.name == "cudaGraphLaunch":
            graph_launches += 1
        annotation = getattr(event, "is_user_annotation", False) or (
            event.name in ranges and event.name not in names
        )
        if str(event.device_type).endswith("CUDA") and not annotation:
            device_us += float(event.time_range.elapsed_us())
            if event.name in names:
                durations.setdefault(event.name, []).append(float(event.time_range.elapsed_us()))
                attributed_ids.add(id(event))
        elif event.name in aten and _outermost(event, aten):
            total = _kernels_below(event)
            if total > 0:
                durations.setdefault(aten[event.name], []).append(total)
    attributed = sum(sum(v) for v in durations.values())
    rest = device_us - attributed
    if rest > 0:
        for event in events:
            if not str(event.device_type).endswith("CUDA") and event.kernels:
                top = _top_op(event)
                if top in aten:
                    continue
                us = sum(float(k.duration) for k in event.kernels if k.name not in names)
                if us <= 0:
                    continue
                unattributed[top] = unattributed.get(top, 0.0) + us
    return Profiled(
        durations=durations,
        graph_launches=graph_launches,
        device_us=device_us,
        unattributed_us=unattributed,
    )


def _outermost(event: Any, aten: dict[str, str]) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in aten:
            return False
        parent = parent.cpu_parent
    return True


def _kernels_below(event: Any) -> float:
    total = sum(float(k.duration) for k in event.kernels)
    return total + sum(_kernels_below(child) for child in event.cpu_children)


def _top_op(event: Any) -> str:
    while event.cpu_parent is not None and str(event.cpu_parent.name).startswith("aten::"):
        event = event.cpu_parent
    return str(event.name)


def matmul_peak_tflops(n: int = 8192, repeats: int = 5) -> float:
    """Throughput of a large fp32 matrix product (torch's default precision), TFLOP/s."""
    import torch

    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    return float(2 * n**3 / _device_seconds(lambda: a @ b, repeats) / 1e12)


def copy_peak_gbps(nbytes: int = 1 << 30, repeats: int = 10) -> float:
    """Bandwidth of a large device-to-device copy (read + write), in GB/s."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return float(2 * nbytes / _device_seconds(lambda: dst.copy_(src), repeats) / 1e9)


def _device_seconds(op: Callable[[], Any], repeats: int) -> float:
    """The median device time of ``op`` over ``repeats`` runs after one warm-up, each
    between two CUDA events: the one probe both peaks are measured with."""
    import torch

    op()
    times: list[float] = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        start.record()
        op()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return float(statistics.median(times))


def timing(
    kernel: Kernel, out: OutputCode, durations: list[float], peak: float | None, runs: int
) -> KernelTiming:
    """A KernelTiming from the durations measured for ``kernel`` over ``runs`` runs."""
    median = statistics.median(durations)
    nbytes = kernel_bytes(out, kernel)
    gbps = nbytes / (median * 1e-6) / 1e9 if nbytes and median > 0 else None
    flops = kernel_flops(out, kernel)
    per_run_s = sum(durations) / runs * 1e-6 if runs else 0.0
    return KernelTiming(
        calls=len(durations),
        median_us=median,
        min_us=min(durations),
        bytes=nbytes,
        achieved_gbps=gbps,
        peak_gbps=peak,
        flops=flops,
        achieved_tflops=flops / per_run_s / 1e12 if flops and per_run_s > 0 else None,
    )
