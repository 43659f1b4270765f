"""How much slower is ``compiler.explore`` than plain ``torch.compile`` on a GPU?

Three real models built from library configs (no weights fetched): a 4-layer BERT
(inference), a 4-layer GPT-2 training step (forward, backward, AdamW step) and a CNN
(timm's resnet18 where timm is installed, else transformers' ResNet-18 config). Every
timed run is a fresh Python process with empty Inductor and Triton caches, so both
sides compile from nothing, as on a user's first compile; only the compile and the
first call are timed (not the imports or building the model). Medians are compared.

With ``--attribute``, every explore run also reports the seconds spent inside each part
of capture (``capture_parts.py``: fusion IR text, structured trace, our handlers, the
bytecode hook, provenance, Triton stage collection, building the Exploration), and a
third side runs explore as it was before the fusion IR was formatted once and
decompiling was deferred ("previous": that speed-up off, the decompiled source read
inside the timed region), so one run shows what the change saved on this machine.

Run on the GPU machine: ``python benchmarks/gpu_capture_overhead.py [--repeats 2]
[--attribute]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

PARTS_MARK = "capture parts: "

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


@contextlib.contextmanager
def _previous_fusion_ir() -> Iterator[bool]:
    yield False


def _one(name: str, side: str, attribute: bool = False) -> float:
    """In this (fresh) process: build the model, then time compile + first call."""
    import torch

    import compiler
    from compiler import _compat

    target, inputs, wrap = BUILDERS[name]()
    torch.cuda.synchronize()
    parts: contextlib.AbstractContextManager[dict[str, float]] = contextlib.nullcontext({})
    if attribute and side != "baseline":
        # the compile path's modules, imported now so that every module that imported
        # trace_structured by name is timed too
        import torch._dynamo.output_graph
        import torch._functorch._aot_autograd.graph_compile
        import torch._inductor.compile_fx
        import torch._inductor.scheduler
        from capture_parts import timed_parts

        parts = timed_parts()
    if side == "previous":
        _compat.fusion_ir_formatted_once = _previous_fusion_ir
    grad = torch.no_grad() if wrap else torch.enable_grad()
    with grad, parts as seconds:
        start = time.perf_counter()
        if side == "baseline":
            (torch.compile(target) if wrap else target)(*inputs)
        else:
            exp = compiler.explore(target, *inputs, wrap=wrap, reset=False)
            if side == "previous":  # decompiled during capture, as before
                for c in exp.compiles:
                    _ = c.bytecode.decompiled if c.bytecode else None
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    if attribute and side != "baseline":
        print(PARTS_MARK + json.dumps(seconds))
    return elapsed


def _cold(name: str, side: str, attribute: bool = False) -> tuple[float, dict[str, float]]:
    """One timed run in a fresh process with empty caches: seconds, and capture parts."""
    with tempfile.TemporaryDirectory(prefix="bench_gpu_") as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        env.pop("TRITON_CACHE_DIR", None)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
        command = [sys.executable, __file__, "--one", name, "--side", side]
        done = subprocess.run(
            [*command, *(["--attribute"] if attribute else [])],
            env=env,
            capture_output=True,
            text=True,
        )
    if done.returncode != 0:
        raise SystemExit(f"{name} ({side}) failed:\n{done.stderr[-4000:]}")
    lines = done.stdout.strip().splitlines()
    parts = [json.loads(x[len(PARTS_MARK) :]) for x in lines if x.startswith(PARTS_MARK)]
    return float(lines[-1]), parts[0] if parts else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold runs per side")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--attribute",
        action="store_true",
        help="time each part of capture, and run explore's previous path as a third side",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    every_side = ("baseline", "explore", "previous")
    parser.add_argument("--side", choices=every_side, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(_one(args.one, args.side, args.attribute))
        return
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("gpu_capture_overhead.py needs a CUDA device; run it on the GPU machine.")
    device = torch.cuda.get_device_name(0)
    sides = ["baseline", "explore", *(["previous"] if args.attribute else [])]
    print(f"torch {torch.__version__}, {device}; cold caches, fresh processes")
    print(f"{'model':<22}{'baseline_s':>12}{'explore_s':>12}{'ratio':>9}"
          + (f"{'previous_s':>12}{'ratio':>9}" if args.attribute else ""))  # fmt: skip
    ratios = []
    attributed: dict[str, tuple[float, list[dict[str, float]]]] = {}
    for name in args.models:
        times: dict[str, list[float]] = {side: [] for side in sides}
        parts: list[dict[str, float]] = []
        for _ in range(args.repeats):  # alternate, so drift hits both sides alike
            for side in sides:
                seconds, found = _cold(name, side, args.attribute)
                times[side].append(seconds)
                if side == "explore" and found:
                    parts.append(found)
        b, c = statistics.median(times["baseline"]), statistics.median(times["explore"])
        ratios.append(c / b)
        row = f"{name:<22}{b:>12.2f}{c:>12.2f}{c / b:>8.2f}x"
        if args.attribute:
            p = statistics.median(times["previous"])
            row += f"{p:>12.2f}{p / b:>8.2f}x"
        print(row, flush=True)
        attributed[name] = (c - b, parts)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geomean':<46}{geomean:>8.2f}x\ntarget: <= {TARGET:.2f}")
    if args.attribute:
        _print_parts(attributed)


def _print_parts(attributed: dict[str, tuple[float, list[dict[str, float]]]]) -> None:
    from capture_parts import PARTS

    print("\nseconds inside each part of capture (median of the explore runs):")
    print(f"{'part':<38}" + "".join(f"{name:>22}" for name in attributed))
    for label, _, _ in PARTS:
        cells = [
            statistics.median(p.get(label, 0.0) for p in parts) if parts else float("nan")
            for _, parts in attributed.values()
        ]
        print(f"{label:<38}" + "".join(f"{cell:>22.2f}" for cell in cells))
    print(f"{'explore - baseline (all of it)':<38}"
          + "".join(f"{extra:>22.2f}" for extra, _ in attributed.values()))  # fmt: skip


if __name__ == "__main__":
    main()
