"""How much slower is ``compiler.explore`` than plain ``torch.compile`` on a GPU?

Three real models built from library configs (no weights fetched): a 4-layer BERT
(inference), a 4-layer GPT-2 training step (forward, backward, AdamW step) and a CNN
(timm's resnet18 where timm is installed, else transformers' ResNet-18 config). Every
timed run is a fresh Python process with empty Inductor and Triton caches, so both
sides compile from nothing, as on a user's first compile; only the compile and the
first call are timed (not the imports or building the model). Medians are compared.

Run on the GPU machine: ``python benchmarks/gpu_capture_overhead.py [--repeats 2]``
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

TARGET = 1.10
MODELS = ("bert_4l_inference", "gpt2_4l_training", "resnet18_inference")


def _bert() -> tuple[Any, tuple[Any, ...], bool]:
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=4)
    model = BertModel(config).cuda().eval()
    ids = torch.randint(0, config.vocab_size, (8, 128), device="cuda")
    return model, (ids,), True


def _gpt2() -> tuple[Any, tuple[Any, ...], bool]:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=4)
    model = GPT2LMHeadModel(config).cuda().train()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (4, 128), device="cuda")

    def step() -> None:
        opt.zero_grad()
        compiled(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    return step, (), False


def _resnet() -> tuple[Any, tuple[Any, ...], bool]:
    import torch

    try:
        import timm  # type: ignore[import-not-found]

        model = timm.create_model("resnet18", pretrained=False)
    except ImportError:
        from transformers import ResNetConfig, ResNetModel

        model = ResNetModel(ResNetConfig(depths=[2, 2, 2, 2], layer_type="basic"))
    model = model.cuda().eval()
    return model, (torch.randn(16, 3, 224, 224, device="cuda"),), True


BUILDERS: dict[str, Callable[[], tuple[Any, tuple[Any, ...], bool]]] = {
    "bert_4l_inference": _bert,
    "gpt2_4l_training": _gpt2,
    "resnet18_inference": _resnet,
}


def _one(name: str, side: str) -> float:
    """In this (fresh) process: build the model, then time compile + first call."""
    import torch

    import compiler

    target, inputs, wrap = BUILDERS[name]()
    torch.cuda.synchronize()
    grad = torch.no_grad() if wrap else torch.enable_grad()
    with grad:
        start = time.perf_counter()
        if side == "baseline":
            (torch.compile(target) if wrap else target)(*inputs)
        else:
            compiler.explore(target, *inputs, wrap=wrap, reset=False)
        torch.cuda.synchronize()
        return time.perf_counter() - start


def _cold(name: str, side: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench_gpu_") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        env.pop("TRITON_CACHE_DIR", None)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
        done = subprocess.run(
            [sys.executable, __file__, "--one", name, "--side", side],
            env=env,
            capture_output=True,
            text=True,
        )
    if done.returncode != 0:
        raise SystemExit(f"{name} ({side}) failed:\n{done.stderr[-4000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold runs per side")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=("baseline", "explore"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(_one(args.one, args.side))
        return
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("gpu_capture_overhead.py needs a CUDA device; run it on the GPU machine.")
    device = torch.cuda.get_device_name(0)
    print(f"torch {torch.__version__}, {device}; cold caches, fresh processes")
    print(f"{'model':<22}{'baseline_s':>12}{'explore_s':>12}{'ratio':>9}")
    ratios = []
    for name in args.models:
        base, cand = [], []
        for _ in range(args.repeats):  # alternate, so drift hits both sides alike
            base.append(_cold(name, "baseline"))
            cand.append(_cold(name, "explore"))
        b, c = statistics.median(base), statistics.median(cand)
        ratios.append(c / b)
        print(f"{name:<22}{b:>12.2f}{c:>12.2f}{c / b:>8.2f}x", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geomean':<46}{geomean:>8.2f}x\ntarget: <= {TARGET:.2f}")


if __name__ == "__main__":
    main()
