"""GPU recordings for the capstone: `python scripts/record_capstone_gpu.py OUT_DIR [CASE ...]`.

Runs on a CUDA machine (made for the H100, torch 2.11, Triton 3.6) and writes, into OUT_DIR
(default ``notebooks/recordings/``), one compact Exploration per case:

- ``capstone_gpt2_<mode>.json``: a training step (forward, loss, backward, AdamW) of a
  2-layer GPT-2 built from its transformers config (no weights), batch 8 x 256 tokens;
- ``capstone_resnet18_<mode>.json``: the same for a resnet18 (torchvision, else timm),
  batch 32 x 3 x 128 x 128, cross-entropy on 10 classes;

each for ``<mode>`` in ``default``, ``max_autotune_no_cudagraphs`` and ``max_autotune``,
measured (``call_timing``: eager against compiled per step, device and host time, CUDA graph
replays); and ``matmul_max_autotune.json``: the case of ``scripts/record_gpu.py`` recorded
again, now with ``call_timing``.

CASE is ``gpt2``, ``resnet18``, ``matmul`` (default: all three) or one recording's name
(``capstone_gpt2_max_autotune``), to split the work over several commands. Each recording
runs in its own Python process with fresh Inductor and Triton cache folders, so its compile
seconds are a cold compile's, not a cache hit left behind by the mode before it; each
process first compiles a tiny function so that one-time start-up (CUDA context, importing
Triton) is not charged to the first mode. A case prints its compile seconds (torch's own
``compilation_metrics``), the first step's wall time under capture and the steady step.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.capture.explore import _measured  # noqa: E402  (our own: measure after timing)

MODES = {  # file suffix -> torch.compile mode
    "default": None,
    "max_autotune_no_cudagraphs": "max-autotune-no-cudagraphs",
    "max_autotune": "max-autotune",
}
MODELS = ("gpt2", "resnet18")


def gpt2(device: str) -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """A 2-layer GPT-2 at the released width (768, 12 heads, 50257 tokens), from its config."""
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(n_layer=2)).to(device).train()
    ids = torch.randint(0, model.config.vocab_size, (8, 256), device=device)
    return model, lambda m: m(input_ids=ids, labels=ids).loss


def resnet18(device: str) -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """torchvision's resnet18 (timm's where torchvision is missing), 10 classes."""
    try:
        from torchvision.models import resnet18 as build

        model = build(num_classes=10)
    except ImportError:
        import timm

        model = timm.create_model("resnet18", num_classes=10)
    model = model.to(device).train()
    images = torch.randn(32, 3, 128, 128, device=device)
    labels = torch.randint(0, 10, (32,), device=device)
    return model, lambda m: nn.functional.cross_entropy(m(images), labels)


def training_step(model_name: str, mode: str | None) -> Callable[[], None]:
    """One optimizer step of the model compiled with ``mode``; the optimizer stays eager."""
    torch.manual_seed(0)
    model, loss_of = {"gpt2": gpt2, "resnet18": resnet18}[model_name]("cuda")
    compiled = torch.compile(model, mode=mode)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        # a new training iteration for CUDA graph trees (max-autotune records CUDA graphs):
        # outputs of the previous step's graphs may be overwritten from here on
        torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=True)
        loss_of(compiled).backward()
        opt.step()

    return step


def compile_seconds(exp: compiler.Exploration) -> float:
    """Forward frames' compile time plus the backward graphs' Inductor time, as torch
    reported them in ``compilation_metrics`` / ``bwd_compilation_metrics``."""
    return sum(
        (c.metrics.entire_frame_seconds or 0.0) + (c.metrics.backward_seconds or 0.0)
        for c in exp.compiles
    )


def record_one(name: str, out: Path) -> None:
    """Record one case in this process (the parent gives it fresh cache folders)."""
    torch.compile(lambda t: t.sin() + 1)(torch.randn(8, device="cuda"))  # start-up, not timed
    torch.cuda.synchronize()
    if name == "matmul_max_autotune":
        a, b = torch.randn(1024, 1024, device="cuda"), torch.randn(1024, 1024, device="cuda")
        with torch.no_grad():
            exp = compiler.explore(
                lambda a, b: torch.relu(a @ b), a, b, mode="max-autotune-no-cudagraphs",
                measure=True,
            )  # fmt: skip
        exp = compiler.with_sass(exp)
        first = None
    else:
        model_name, suffix = name.removeprefix("capstone_").split("_", 1)
        step = training_step(model_name, MODES[suffix])
        start = time.perf_counter()
        exp = compiler.explore(step, wrap=False, triton_stages=False)
        torch.cuda.synchronize()
        first = time.perf_counter() - start
        exp = _measured(exp, step)
    path = out / f"{name}.json"
    path.write_text(exp.to_json())
    t = exp.call_timing
    kernels = sum(len(c.kernels()) for c in exp.compiles)
    tuned = sum(len(c.autotuning) for c in exp.compiles)
    print(
        f"{name}: {len(exp.compiles)} compiles, {kernels} kernels, {tuned} autotuned ops, "
        f"compile {compile_seconds(exp):.1f} s (torch's metrics)"
        + (f", first step {first:.1f} s under capture" if first is not None else "")
        + (
            f", step eager {t.eager_ms:.3f} ms / compiled {t.compiled_ms:.3f} ms "
            f"({t.speedup:.2f}x), device {t.device_ms or 0:.3f} ms"
            if t
            else ""
        )
        + f", {path.stat().st_size:,} B",
        flush=True,
    )


def main() -> None:
    if "--one" in sys.argv:
        _, name, out = sys.argv[sys.argv.index("--one") :][:3]
        record_one(name, Path(out))
        return
    args = sys.argv[1:]
    out = Path(args[0]) if args else ROOT / "notebooks" / "recordings"
    chosen = args[1:] or [*MODELS, "matmul"]
    if not torch.cuda.is_available():
        raise SystemExit("record_capstone_gpu.py needs a CUDA device; run it on the GPU machine.")
    out.mkdir(parents=True, exist_ok=True)
    every = [f"capstone_{m}_{suffix}" for m in MODELS for suffix in MODES]
    names = [
        n
        for n in [*every, "matmul_max_autotune"]
        if n in chosen
        or n.split("_")[1] in chosen
        or (n.startswith("matmul") and "matmul" in chosen)
    ]
    if not names:
        raise SystemExit(
            f"no recording matches {chosen}; choose from {[*MODELS, 'matmul', *every]}"
        )
    failed = []
    for name in names:
        with tempfile.TemporaryDirectory() as caches:
            env = {
                **os.environ,
                "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
                "TRITON_CACHE_DIR": os.path.join(caches, "triton"),
            }
            args_one: list[Any] = [sys.executable, __file__, "--one", name, str(out)]
            if subprocess.run(args_one, env=env).returncode:
                failed.append(name)
    if failed:
        raise SystemExit(f"failed: {failed}")


if __name__ == "__main__":
    main()
