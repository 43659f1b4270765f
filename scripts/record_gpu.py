"""Record GPU Explorations for CPU-only users: `python scripts/record_gpu.py [--large] [OUT_DIR]`.

Runs on a machine with a CUDA device (made on an H100 with torch 2.11 and Triton 3.6)
and writes one ``<name>.json`` per program into ``notebooks/recordings/`` (or OUT_DIR),
plus ``environment.json``. The explorer opens them on any machine, like a live capture.
Capture keeps the lowered stages' text of the variant autotuning chose (the others keep
their configs and say where their stages are); here the chosen variants' SASS is
disassembled too (``compiler.with_sass``), so the files hold every stage. Two of them are
programs where the compiled call is slower than eager, with ``call_timing`` saying why.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_recording import ROOT, write_json, write_recording  # the repository on the path
from torch import nn

# isort: split
import programs  # tests/programs.py, on the path through gpu_recording

import compiler
from explorer.export import to_html


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


def gpt2_training_step(device: str = "cuda") -> Callable[[], Any]:
    """A 4-layer GPT-2 (from its config, no weights) trained one step, the model compiled."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=8192)
    model = GPT2LMHeadModel(config).to(device).train()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (4, 128), device=device)

    def step() -> None:
        opt.zero_grad()
        compiled(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    return step


def tiny_mlp() -> tuple[nn.Module, torch.Tensor]:
    """Slower compiled than eager: four rows through a small MLP, so every call is
    guards, the wrapper and a few launches of kernels that take microseconds."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32), nn.LayerNorm(32))
    return model.cuda().eval(), torch.randn(4, 32, device="cuda")


def fresh_inputs_under_cuda_graphs() -> Callable[[], Any]:
    """Slower compiled than eager: reduce-overhead on a small function whose input is a
    new tensor on every call, so each replay first copies it into the graph's buffer."""
    fn = torch.compile(programs.pointwise, mode="reduce-overhead")

    def call() -> Any:
        return fn(torch.randn(64, 64, device="cuda"))

    return call


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else ROOT / "notebooks" / "recordings"
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
        "training_step": lambda: compiler.explore(training_step(), wrap=False, measure=True),
        "slow_tiny_inputs": lambda: compiler.explore(*tiny_mlp(), measure=True),
        "slow_reduce_overhead": lambda: compiler.explore(
            fresh_inputs_under_cuda_graphs(), wrap=False, measure=True
        ),
    }
    if "--large" in sys.argv:
        # opt-in: schema 2.0 wrote 10.8 MB for it (H200, torch 2.11); issue 15 wants it
        # under 5 MB of JSON with a page no larger, which the sizes printed below check
        cases["gpt2_training_step"] = lambda: compiler.explore(gpt2_training_step(), wrap=False)
    grad = {"training_step", "gpt2_training_step"}
    sizes = {}
    for name, make in cases.items():
        with torch.enable_grad() if name in grad else torch.no_grad():
            exp = compiler.with_sass(make())
        path = out / f"{name}.json"
        write_recording(path, exp)
        sizes[name] = path.stat().st_size
        kernels = sum(len(c.kernels()) for c in exp.compiles)
        plain = len(exp.to_json(compact=False).encode())
        page = len(to_html(exp).encode())
        print(
            f"{name:<20}{len(exp.compiles):>3} compiles {kernels:>4} kernels {sizes[name]:>10,} B"
            f" (plain {plain:,} B, exported page {page:,} B)"
        )
        if exp.call_timing is not None:
            print(f"  call_timing: {exp.call_timing}")
    env = dataclasses.asdict(compiler.capture.recording.environment("cuda"))
    write_json(out / "environment.json", {**env, "sizes": sizes})
    print(f"total {sum(sizes.values()):,} B")


if __name__ == "__main__":
    main()
