"""Live recompile: how long from an edit to the updated view, and does memory stay put?

Two questions, answered in one run:

1. Edit to updated view, against plain ``torch.compile`` of the edited code. Each case
   edits a small function (a new constant, so no cache can serve it) in an
   ``explorer.live`` widget and times from setting ``.source`` until the widget shows
   the new version (debounce, worker compile with full capture, transfer, view update).
   The baseline compiles the same kind of edit with plain ``torch.compile`` in this
   process, warm (torch and Inductor imported, one compile done), first call included.
   Runs alternate baseline/live; medians are compared. Target: (edit-to-view minus the
   debounce) / baseline <= 1.10, i.e. edit-to-view <= 1.10 x baseline + debounce.
   Constants are drawn at random per run: Inductor's on-disk caches outlive a process,
   and a constant seen in an earlier run would let the baseline load its kernel from
   there. Also printed: the worker's ``compiler.explore`` alone (capture's cost is
   what ``benchmarks/capture_overhead.py`` measures) and what the user's process adds
   (debounce aside: receiving the result, rebuilding the view).
2. 200 consecutive live recompiles (``eager`` backend, so that it fits a 2-core CPU):
   the growth of this process's resident memory (the user's kernel), after 5 warm-up
   edits. Target: under 50 MB. The widget keeps ``history_limit`` versions (default 20).

Run: ``python benchmarks/live_recompile.py [--repeats 5] [--edits 200]``
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from typing import Any

import torch

import explorer

DEBOUNCE_MS = 750
TARGET_RATIO = 1.10
TARGET_RSS_MB = 50.0

CASES = {
    # name: (source with {c} for the edited constant, input shape)
    "pointwise": ("def f(x):\n    return torch.relu(torch.sin(x) * {c}) + x\n", (64, 64)),
    "reduction": (
        "def f(x):\n    y = torch.tanh(x) * {c}\n    return y.sum(0) + y.mean(1)\n",
        (64, 64),
    ),
}


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def plain_compile(source: str, x: torch.Tensor, backend: str) -> float:
    """Seconds for plain torch.compile of ``source``'s f, first call included."""
    ns: dict[str, Any] = {"torch": torch}
    exec(compile(source, "<baseline>", "exec"), ns)
    torch.compiler.reset()
    started = time.perf_counter()
    torch.compile(ns["f"], backend=backend)(x)
    return time.perf_counter() - started


def live_edit(w: Any, source: str) -> float:
    """Seconds from an edit to the view showing its compile."""
    old = w.view.exploration if w.view is not None else None
    started = time.perf_counter()
    w.source = source
    if not w.wait(600) or w.error is not None:
        raise RuntimeError(f"live edit failed: {w.error}")
    elapsed = time.perf_counter() - started
    assert w.view.exploration is not old and w.view.exploration is w.history[-1]
    return elapsed


def edit_to_view(repeats: int, backend: str) -> None:
    print(f"\n1. edit to updated view vs plain torch.compile ({backend}, debounce "
          f"{DEBOUNCE_MS} ms, median of {repeats})")  # fmt: skip
    print(f"{'case':<12} {'plain s':>8} {'live s':>8} {'explore s':>10} {'user s':>7} "
          f"{'ratio':>7} {'(live-debounce)/plain':>22}")  # fmt: skip
    constant = float(random.randint(1, 10**6))
    for name, (template, shape) in CASES.items():
        x = torch.randn(*shape)
        w = explorer.live(template.format(c=constant), x, backend=backend,
                          debounce_ms=DEBOUNCE_MS)  # fmt: skip
        w.wait(600)
        plain_compile(template.format(c=0.5), x, backend)  # warm the baseline too
        base, cand, explore, parent = [], [], [], []
        for _ in range(repeats):
            constant += 1
            base.append(plain_compile(template.format(c=constant + 0.5), x, backend))
            cand.append(live_edit(w, template.format(c=constant)))
            result = w._engine.latest
            explore.append(result.compile_seconds)
            parent.append(cand[-1] - DEBOUNCE_MS / 1000 - result.seconds)
        w.close()
        b, c = statistics.median(base), statistics.median(cand)
        e, v = statistics.median(explore), statistics.median(parent)
        net = (c - DEBOUNCE_MS / 1000) / b
        verdict = "ok" if net <= TARGET_RATIO else f"above {TARGET_RATIO}"
        print(f"{name:<12} {b:8.3f} {c:8.3f} {e:10.3f} {v:7.3f} {c / b:6.2f}x {net:21.2f}x  "
              f"{verdict}")  # fmt: skip


def memory(edits: int) -> None:
    print(f"\n2. {edits} consecutive live recompiles (eager backend, debounce 0)")
    x = torch.randn(32, 32)
    template = "def f(x):\n    return torch.relu(x) * {c} + x.sum()\n"
    w = explorer.live(template.format(c=0), x, backend="eager", debounce_ms=0)
    w.wait(600)
    for i in range(5):
        live_edit(w, template.format(c=i + 1))
    gc.collect()
    start = rss_mb()
    started = time.perf_counter()
    for i in range(edits):
        live_edit(w, template.format(c=i + 10))
    gc.collect()
    end = rss_mb()
    seconds = time.perf_counter() - started
    growth = end - start
    verdict = "ok" if growth < TARGET_RSS_MB else f"above {TARGET_RSS_MB:.0f} MB"
    print(f"RSS {start:.1f} MB -> {end:.1f} MB: growth {growth:.1f} MB  {verdict}; "
          f"{len(w.history)} versions kept; {seconds / edits:.3f} s per edit")  # fmt: skip
    w.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, device cpu, {torch.get_num_threads()} threads")
    memory(args.edits)
    edit_to_view(args.repeats, args.backend)


if __name__ == "__main__":
    main()
