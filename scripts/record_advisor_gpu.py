"""GPU recordings for the advisor's corpus: `python scripts/record_advisor_gpu.py [OUT_DIR]`.

Runs on a CUDA machine and writes, into ``tests/advisor_corpus/recordings/`` (or OUT_DIR):

- ``advisor_cudagraph_skipped.json``: ``mode="reduce-overhead"`` on a function that
  mutates its input, so Inductor skips CUDA graphs and says why.
- ``advisor_slower_than_eager.json``: two tiny ops around a data-dependent branch on a
  small tensor, where guards and two graph launches cost more than eager's two kernels;
  ``call_timing`` is measured here (wall clock of CUDA-synchronised calls, medians of
  200; ``device_ms`` is the measured kernels' time per call, ``cpu_ms`` the rest).
- ``advisor_gather.json``: a random gather from a large tensor, a kernel that moves
  far less than the copy bandwidth.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_recording import ROOT, write_recording  # puts the repository on the import path

# tests/advisor_corpus checks each recording's finding at its planted line of this script:
# moving those lines means recording again on the GPU machine
import compiler

PROFILED_RUNS = 20  # explore(measure=True) profiles this many calls


def mutates(x):
    x.add_(1)
    return x.sin() * 2


def small_break(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y.tan()


def gather(x, idx):
    return x[idx] * 2


def _ms(fn: Callable[[], Any], runs: int = 200) -> list[float]:
    for _ in range(10):
        fn()
    times = []
    for _ in range(runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def with_call_timing(exp: compiler.Exploration, fn: Any, *args: Any) -> compiler.Exploration:
    compiled = torch.compile(fn)
    eager = _ms(lambda: fn(*args))
    comp = _ms(lambda: compiled(*args))
    device_us = sum(
        k.timing.median_us * k.timing.calls / PROFILED_RUNS
        for c in exp.compiles
        for k in c.kernels()
        if k.timing is not None
    )
    compiled_ms = statistics.median(comp)
    timing = compiler.CallTiming(
        runs=len(comp),
        eager_ms=statistics.median(eager),
        compiled_ms=compiled_ms,
        eager_spread_ms=(min(eager), max(eager)),
        compiled_spread_ms=(min(comp), max(comp)),
        device_ms=device_us / 1000,
        cpu_ms=max(compiled_ms - device_us / 1000, 0.0),
        notes=("measured by scripts/record_advisor_gpu.py: wall clock of synchronised calls",),
    )
    return dataclasses.replace(exp, call_timing=timing)


def main() -> None:
    out = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "advisor_corpus" / "recordings"
    )
    out.mkdir(parents=True, exist_ok=True)
    dev = "cuda"
    opts = {"measure": True, "triton_stages": False}
    x = torch.randn(256, device=dev)
    big = torch.randn(1 << 25, device=dev)
    idx = torch.randint(0, 1 << 25, (1 << 24,), device=dev)
    jobs: dict[str, Callable[[], compiler.Exploration]] = {
        "advisor_cudagraph_skipped": lambda: compiler.explore(
            mutates, torch.randn(4096, device=dev), mode="reduce-overhead", **opts
        ),
        "advisor_slower_than_eager": lambda: with_call_timing(
            compiler.explore(small_break, x, **opts), small_break, x
        ),
        "advisor_gather": lambda: compiler.explore(gather, big, idx, **opts),
    }
    for name, job in jobs.items():
        t0 = time.perf_counter()
        exp = job()
        write_recording(out / f"{name}.json", exp)
        kinds = [f"{f.severity}:{f.kind}" for f in exp.findings()]
        print(f"{name}: {len(exp.compiles)} compiles, {time.perf_counter() - t0:.1f} s, {kinds}")
        if exp.call_timing is not None:
            print(f"  {exp.call_timing}")


if __name__ == "__main__":
    main()
