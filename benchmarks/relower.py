"""The kernel lab: time per re-lowering of every recorded Triton kernel on this CPU, and
whether the unedited re-lowering reproduces the recorded PTX instructions.

Each kernel is lowered by the lab's warm worker with Triton's cache bypassed
(``TRITON_ALWAYS_COMPILE=1``), so every figure is a real lowering: TTIR, TTGIR, LLVM IR,
PTX and ptxas's cubin. ``lower`` is one re-lowering as ``compiler.relower`` returns it
(the worker, the transfer, line maps and diffs); ``+sass`` the same with ``cuobjdump
-sass``; ``target`` the 1 s the issue sets. Ratios are measured in one run.

    python benchmarks/relower.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
RECORDINGS = sorted((ROOT / "notebooks" / "recordings").glob("*.json")) + sorted(
    (ROOT / "tests" / "advisor_corpus" / "recordings").glob("*.json")
)
TARGET_S = 1.0
REPEATS = 3


def recorded_kernels() -> list[tuple[str, object]]:
    """(recording name, kernel) for every Triton kernel of every GPU recording."""
    import compiler

    out = []
    for path in RECORDINGS:
        text = path.read_text()
        if '"compiles"' not in text:
            continue  # environment.json: no Exploration
        exp = compiler.Exploration.from_json(text)
        for c in exp.compiles:
            out.extend((path.stem, k) for k in c.kernels() if k.language == "triton")
    return out


def main() -> None:
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # read by the worker: no cache hits
    import compiler
    from compiler.lab import KernelLab, triton_available

    if not triton_available():
        print(f"triton not installed: {compiler.lab.INSTALL}")
        return
    import importlib.metadata

    print(f"triton {importlib.metadata.version('triton')}  device cpu ({os.cpu_count()} cores), "
          f"load average {os.getloadavg()[0]:.1f} (other processes slow every figure)")  # fmt: skip
    lab = KernelLab()
    started = time.perf_counter()
    lab.start()
    kernels = recorded_kernels()
    first = lab.relower(kernels[0][1])  # type: ignore[arg-type]
    print(f"worker start + first lowering: {time.perf_counter() - started:.2f} s "
          f"(paid once per session)")  # fmt: skip
    del first
    print(f"{'recording':<26}{'kernel':<58}{'lower s':>8}{'+sass s':>8}{'ratio':>7}  reproduced")
    lowers, with_sass, reproduced, compared = [], [], 0, 0
    for name, kernel in kernels:
        times, sass_times, v = [], [], None
        for _ in range(REPEATS):  # interleaved: plain, then with SASS
            t = time.perf_counter()
            v = lab.relower(kernel)  # type: ignore[arg-type]
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            lab.relower(kernel, sass=True)  # type: ignore[arg-type]
            sass_times.append(time.perf_counter() - t)
        assert v is not None
        lower, sass = statistics.median(times), statistics.median(sass_times)
        lowers.append(lower)
        with_sass.append(sass)
        status = {True: "yes", False: "NO", None: "(no recorded PTX)"}[v.reproduced]
        compared += v.reproduced is not None
        reproduced += v.reproduced is True
        short = kernel.name if len(kernel.name) < 56 else kernel.name[:53] + "..."  # type: ignore[attr-defined]
        print(f"{name:<26}{short:<58}{lower:8.3f}{sass:8.3f}{lower / TARGET_S:6.2f}x  {status}")
    lab.close()
    print(f"median lower {statistics.median(lowers):.3f} s, max {max(lowers):.3f} s "
          f"({max(lowers) / TARGET_S:.2f}x the {TARGET_S:.0f} s target); with SASS median "
          f"{statistics.median(with_sass):.3f} s")  # fmt: skip
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(f"reproduced PTX instructions: {reproduced}/{compared} kernels with recorded PTX "
          f"({len(kernels)} kernels in all)")  # fmt: skip


if __name__ == "__main__":
    main()
