"""How much slower is compiling through ``compiler.explore`` than plain ``torch.compile``?

For each small program, times the first call of a freshly compiled function (Dynamo,
AOTAutograd, Inductor's code generation and C++ build, then one run): once through
plain ``torch.compile`` (the baseline) and once through ``compiler.explore`` with its
defaults (structured trace, fusion logs, bytecode hook with depyf, provenance maps).
Both sides use the default Inductor backend, start from a reset Dynamo, and run with
the FX graph and AOTAutograd caches off (explore turns them off itself; the baseline
patches the same two flags). Runs alternate baseline/explore; medians are compared.

Two settings, printed as two tables:

- warm: in one process, with Inductor's C++ kernels already built and cached on disk
  (``/tmp/torchinductor_<user>``) by an untimed warm-up pair. Compiles take a fraction
  of a second, so this is the worst case for capture's relative overhead.
- cold: every timed run in a fresh Python process with an empty
  ``TORCHINDUCTOR_CACHE_DIR``, so Inductor builds its C++ kernels as it does on a
  user's first compile. Only the compile and first call are timed, not the import.

Run: ``python benchmarks/capture_overhead.py [--repeats 3] [--only warm|cold]``
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
import torch._functorch.config as functorch_config
import torch._inductor.config as inductor_config
from torch import nn

import compiler

TARGET = 1.05


def pointwise(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.sin(x) * torch.cos(x) + x * 0.5)


def graph_break(x: torch.Tensor) -> torch.Tensor:
    y = torch.tanh(x) * 2
    if y.sum() > 0:  # data-dependent branch: two graphs and a resume function
        return y - 1
    return y + 1


class ConvReluPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(torch.relu(self.conv(x))).flatten(1))


def _programs() -> list[tuple[str, Callable[..., Any], tuple[torch.Tensor, ...]]]:
    torch.manual_seed(0)
    return [
        ("pointwise", pointwise, (torch.randn(1024),)),
        ("graph_break", graph_break, (torch.randn(256),)),
        ("conv_relu_pool", ConvReluPool().eval(), (torch.randn(4, 3, 16, 16),)),
    ]


def _baseline(fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> float:
    torch.compiler.reset()
    gc.collect()
    with (
        inductor_config.patch(fx_graph_cache=False),
        functorch_config.patch(enable_autograd_cache=False),
    ):
        start = time.perf_counter()
        torch.compile(fn)(*inputs)
        return time.perf_counter() - start


def _explore(fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> float:
    torch.compiler.reset()
    gc.collect()
    start = time.perf_counter()
    compiler.explore(fn, *inputs, reset=False)  # reset above, outside the timed region
    return time.perf_counter() - start


def _check(name: str, fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> None:
    """The compiled program must compute what the eager one does before we time it."""
    torch.compiler.reset()
    with torch.no_grad():
        expected = fn(*inputs)
        got = torch.compile(fn)(*inputs)
    try:
        torch.testing.assert_close(got, expected)
    except AssertionError as exc:
        raise SystemExit(f"{name}: compiled output differs from eager: {exc}") from exc
    exp = compiler.explore(fn, *inputs)
    if not exp.compiles or not any(c.output_code for c in exp.compiles):
        raise SystemExit(f"{name}: explore recorded no Inductor output code: {exp!r}")


def _cold(name: str, side: str) -> float:
    """Time one compile in a fresh process with an empty Inductor cache directory."""
    with tempfile.TemporaryDirectory(prefix="bench_inductor_") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), env.get("PYTHONPATH", "")]
        )
        out = subprocess.run(
            [sys.executable, __file__, "--one", name, "--side", side],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return float(out.strip().splitlines()[-1])


def _table(title: str, rows: list[tuple[str, list[float], list[float]]]) -> None:
    print(f"\n{title}")
    print(f"{'name':<16}{'baseline_s':>12}{'explore_s':>12}{'ratio':>9}")
    ratios = []
    for name, base, cand in rows:
        b, c = statistics.median(base), statistics.median(cand)
        ratios.append(c / b)
        print(f"{name:<16}{b:>12.3f}{c:>12.3f}{c / b:>8.2f}x", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geomean':<40}{geomean:>8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per side (default 3)")
    parser.add_argument("--only", choices=("warm", "cold"), help="run one setting only")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=("baseline", "explore"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    programs = {name: (fn, inputs) for name, fn, inputs in _programs()}
    if args.one:  # a cold child: one timed compile, printed for the parent
        fn, inputs = programs[args.one]
        timed = _baseline if args.side == "baseline" else _explore
        print(timed(fn, inputs))
        return

    print(f"torch {torch.__version__}, device cpu ({torch.get_num_threads()} threads)")
    print("cuda: skipped (this benchmark compiles for the CPU only)")
    for name, (fn, inputs) in programs.items():
        _check(name, fn, inputs)
    if args.only in (None, "warm"):
        rows = []
        for name, (fn, inputs) in programs.items():
            _baseline(fn, inputs)  # warm-up pair, untimed: C++ toolchain and kernel build
            _explore(fn, inputs)
            base, cand = [], []
            for _ in range(args.repeats):
                base.append(_baseline(fn, inputs))
                cand.append(_explore(fn, inputs))
            rows.append((name, base, cand))
        _table("warm: kernels already built (worst case for capture's overhead)", rows)
    if args.only in (None, "cold"):
        rows = []
        for name in programs:
            base, cand = [], []
            for _ in range(args.repeats):
                base.append(_cold(name, "baseline"))
                cand.append(_cold(name, "explore"))
            rows.append((name, base, cand))
        _table("cold: fresh process, empty Inductor cache (a user's first compile)", rows)
    print(f"\ntarget: <= {TARGET:.2f}")


if __name__ == "__main__":
    main()
