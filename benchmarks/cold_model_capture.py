"""Capture overhead on real models on the CPU, cold: a user's first compile in a process.

The models of ``model_capture_overhead.py`` (BERT inference, a GPT-2 training step, T5
inference; 2 layers, built from transformers configs, no weights). Every timed run is a
fresh Python process with an empty ``TORCHINDUCTOR_CACHE_DIR``, so Inductor builds its
C++ kernels as on a first compile; only compile plus first call is timed, not the
imports or building the model. Three sides, in rotating order within each repeat:

- plain: ``torch.compile`` as a user calls it (FX graph and AOTAutograd caches on: a cold
  compile also writes its cache entries);
- baseline: ``torch.compile`` with those two caches off, as capture turns them off, so
  that explore - baseline is capture's own work and what it asks torch to do;
- explore: ``compiler.explore`` with its defaults.

Wall time is what a user waits; the process's CPU time (``process_time``, the main
process's threads only: Inductor's C++ builds run in worker processes and are not in
it) is the steadier figure on a shared machine. Ratios of the minimum and of the median
over the repeats are printed, against each baseline.

Run: ``python benchmarks/cold_model_capture.py [--repeats 2] [--layers 2] [--width 128]
[--models bert_inference gpt2_training t5_inference] [--sides plain baseline explore]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 1.05
SIDES = ("plain", "baseline", "explore")
MODEL_NAMES = ("bert_inference", "gpt2_training", "t5_inference")


def _one(name: str, side: str, layers: int, width: int | None) -> dict[str, float]:
    """In this fresh process: build the model, then time compile plus first call."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from model_capture_overhead import MODELS

    import compiler

    target, inputs, wrap = MODELS[name](layers, width) if width else MODELS[name](layers)
    with torch.no_grad() if wrap else torch.enable_grad():
        wall, cpu = time.perf_counter(), time.process_time()
        if side == "explore":
            compiler.explore(target, *inputs, wrap=wrap)
        elif side == "baseline":
            with (
                inductor_config.patch(fx_graph_cache=False),
                functorch_config.patch(enable_autograd_cache=False),
            ):
                (torch.compile(target) if wrap else target)(*inputs)
        else:
            (torch.compile(target) if wrap else target)(*inputs)
        return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def _fresh(name: str, side: str, layers: int, width: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench_inductor_") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
        command = [sys.executable, __file__, "--one", name, "--side", side]
        out = subprocess.run(
            [*command, "--layers", str(layers), *(["--width", str(width)] if width else [])],
            env=env, capture_output=True, text=True,
        )
    if out.returncode != 0:
        raise SystemExit(f"{name} ({side}) failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per side")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, help="GPT-2's n_embd (2 heads); default 768")
    parser.add_argument("--models", nargs="*", default=list(MODEL_NAMES), choices=MODEL_NAMES)
    parser.add_argument("--sides", nargs="*", default=list(SIDES), choices=SIDES)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args.side, args.layers, args.width)))
        return
    if args.width and args.models != ["gpt2_training"]:
        parser.error("--width applies to --models gpt2_training only")
    sides = [s for s in SIDES if s in args.sides]
    width = f", width {args.width}" if args.width else ""
    print(f"{args.layers} layers{width}, fresh process and empty Inductor cache per run, "
          f"{args.repeats} runs per side; ratios of explore against each other side")  # fmt: skip
    print(f"{'model':<16}{'side':<10}{'clock':>6}{'min_s':>8}{'median_s':>10}"
          f"{'min ratio':>11}{'median ratio':>14}")  # fmt: skip
    for name in args.models:
        runs: dict[str, list[dict[str, float]]] = {s: [] for s in sides}
        for r in range(args.repeats):
            for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
                runs[side].append(_fresh(name, side, args.layers, args.width))
        for side in sides:
            for clock in ("wall", "cpu"):
                mine = [run[clock] for run in runs[side]]
                middle = statistics.median(mine)
                row = f"{name:<16}{side:<10}{clock:>6}{min(mine):>8.2f}{middle:>10.2f}"
                if side != "explore" and "explore" in runs:
                    ours = [run[clock] for run in runs["explore"]]
                    lo = min(ours) / min(mine)
                    mid = statistics.median(ours) / statistics.median(mine)
                    row += f"{lo:>10.3f}x{mid:>13.3f}x"
                print(row, flush=True)
    print(f"\ntarget: explore <= {TARGET:.2f}x")


if __name__ == "__main__":
    main()
