"""Record GPU Explorations for CPU-only users: `python scripts/record_gpu.py [OUT_DIR]`.

Runs on a machine with a CUDA device (made on an H100 with torch 2.11 and Triton 3.6)
and writes one ``<name>.json`` per program into ``notebooks/recordings/`` (or OUT_DIR),
plus ``environment.json``. The explorer opens them on any machine, like a live capture.
To keep the files small, only the chosen autotune variant of each Triton kernel keeps
its lowered stages' text; the others keep their configs, with the text marked dropped.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import programs  # noqa: E402

import compiler  # noqa: E402

DROPPED = "dropped from this recording to keep it small (the chosen variant keeps its text)"


def compact(exp: compiler.Exploration) -> compiler.Exploration:
    """Keep lowered-stage text only for the variant autotuning chose."""

    def kernel(k: compiler.Kernel) -> compiler.Kernel:
        if not any(v.chosen for v in k.variants):
            return k
        variants = tuple(
            v
            if v.chosen
            else dataclasses.replace(
                v,
                stages=tuple(dataclasses.replace(s, text="", error=DROPPED) for s in v.stages),
            )
            for v in k.variants
        )
        return dataclasses.replace(k, variants=variants)

    compiles = tuple(
        dataclasses.replace(
            c,
            output_code=tuple(
                dataclasses.replace(o, kernels=tuple(kernel(k) for k in o.kernels))
                for o in c.output_code
            ),
        )
        for c in exp.compiles
    )
    return dataclasses.replace(exp, compiles=compiles)


class TransformerBlock(nn.Module):
    """A pre-norm transformer block: attention and an MLP, each with a residual."""

    def __init__(self, dim: int = 256, heads: int = 4) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ConvNet(nn.Module):
    """A small conv net: conv-bn-relu twice, pooling, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )  # fmt: skip
        self.head = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def training_step() -> Callable[[], Any]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512)).cuda()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(256, 512, device="cuda"), torch.randn(256, 512, device="cuda")

    def step() -> None:
        opt.zero_grad()
        nn.functional.mse_loss(compiled(x), y).backward()
        opt.step()

    return step


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks" / "recordings"
    out.mkdir(parents=True, exist_ok=True)
    if not torch.cuda.is_available():
        raise SystemExit("record_gpu.py needs a CUDA device; run it on the GPU machine.")
    dev = "cuda"
    torch.manual_seed(0)
    cases: dict[str, Callable[[], compiler.Exploration]] = {
        "graph_break": lambda: compiler.explore(
            programs.data_dependent, torch.randn(4096, device=dev), measure=True
        ),
        "pointwise": lambda: compiler.explore(
            programs.pointwise, torch.randn(2048, 2048, device=dev), measure=True
        ),
        "transformer_block": lambda: compiler.explore(
            TransformerBlock().to(dev).eval(), torch.randn(8, 128, 256, device=dev), measure=True
        ),
        "conv_net": lambda: compiler.explore(
            ConvNet().to(dev).eval(), torch.randn(16, 3, 64, 64, device=dev), measure=True
        ),
        "matmul_max_autotune": lambda: compiler.explore(
            lambda a, b: torch.relu(a @ b),
            torch.randn(1024, 1024, device=dev),
            torch.randn(1024, 1024, device=dev),
            mode="max-autotune-no-cudagraphs",
            measure=True,
        ),
        "training_step": lambda: compiler.explore(training_step(), wrap=False),
    }
    sizes = {}
    for name, make in cases.items():
        with torch.no_grad() if name != "training_step" else torch.enable_grad():
            exp = compact(make())
        path = out / f"{name}.json"
        path.write_text(exp.to_json())
        sizes[name] = path.stat().st_size
        kernels = sum(len(c.kernels()) for c in exp.compiles)
        print(
            f"{name:<20}{len(exp.compiles):>3} compiles {kernels:>4} kernels {sizes[name]:>10,} B"
        )
    env = dataclasses.asdict(compiler.capture.environment("cuda"))
    (out / "environment.json").write_text(json.dumps({**env, "sizes": sizes}, indent=1))
    print(f"total {sum(sizes.values()):,} B")


if __name__ == "__main__":
    main()
