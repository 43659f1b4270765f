"""GPU recordings for the capstone: `python scripts/record_capstone_gpu.py OUT_DIR [CASE ...]`.

Runs on a CUDA machine (made for the H100, torch 2.11, Triton 3.6) and writes, into OUT_DIR
(default ``notebooks/recordings/``), one compact Exploration per case, each with Triton's
lowered stages of the chosen variants (TTIR, TTGIR, LLVM IR, PTX and SASS, as
``scripts/record_gpu.py`` keeps them) and ``call_timing`` (eager against compiled per step,
device and host time, CUDA graph replays):

- ``capstone_gpt2_default.json``: a training step (forward, loss, backward, AdamW) of a
  2-layer GPT-2 at the released width (768, 12 heads, 50257 tokens) built from its
  transformers config (no weights), batch 8 x 256 tokens, default mode;
- ``capstone_mlp_<mode>.json``: a training step of a 4-layer bf16 MLP (square 1024 x 1024
  layers with GELU between them, batch 2048 rows, MSE loss, AdamW) for ``<mode>`` in
  ``default``, ``max_autotune_no_cudagraphs`` and ``max_autotune``, so the lab's question
  (does max-autotune pay for its compile time?) is answered from measured compiles and steps
  of one model in all three modes. Square layers of one shape leave three distinct matrix
  products to autotune (the forward's, and the backward's two), each tuned once; bf16 keeps
  every Triton template within the GPU's shared memory (fp32 1024 x 4096 layers spent most
  of 70 s on templates that failed for lack of it, and did not finish);

Each recording's ``notes`` end with ``FIRST_STEP``: the first step's wall seconds under
capture (compiling, plus what a max-autotune mode tunes at the first launch of each kernel,
and the CUDA graph warm-up), which torch's compile seconds (``compiler.compile_time``, plus
the backward graphs' Inductor time) do not hold. ``matmul`` re-records
``matmul_max_autotune.json`` (``scripts/record_gpu.py``'s case, with ``call_timing``); it is
not in the default set.

CASE is ``gpt2``, ``mlp``, ``matmul`` or one recording's name (``capstone_mlp_max_autotune``);
the default is ``gpt2 mlp``. Each recording runs in its own Python process with fresh
Inductor and Triton cache folders, so its compile seconds are a cold compile's, not a cache
hit left behind by the mode before it, and under a time limit (``LIMIT_S``), so that one
slow mode cannot take the run with it; each process first compiles a tiny function so that
one-time start-up (CUDA context, importing Triton) is not charged to the first mode.

A recording with a Triton kernel that lacks its chosen variant, its lowered stages or its
block sizes is still written, but its process prints ``INCOMPLETE`` lines naming each and
exits with status 3, so the run ends with ``failed: [...]``.

``--cpu``: a smoke run of the same code on this machine's CPU, tiny sizes, into OUT_DIR
(never into the notebook's recordings), to catch a mistake before the one GPU run.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_recording import ROOT, write_recording
from torch import nn

import compiler
from compiler.capture.explore import _measured

MODES = {  # file suffix -> torch.compile mode
    "default": None,
    "max_autotune_no_cudagraphs": "max-autotune-no-cudagraphs",
    "max_autotune": "max-autotune",
}
RECORDINGS = (
    "capstone_gpt2_default",
    *(f"capstone_mlp_{suffix}" for suffix in MODES),
)
# seconds each recording's process may take on the GPU machine (the whole run: < 3 minutes)
LIMIT_S = {"capstone_gpt2_default": 55, "capstone_mlp_default": 40, "matmul_max_autotune": 60}
LIMIT_DEFAULT_S = 70  # the max-autotune modes
FIRST_STEP = "first step under capture (scripts/record_capstone_gpu.py): {:.2f} s"


def gpt2(device: str, small: bool) -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """A 2-layer GPT-2 at the released width (768, 12 heads, 50257 tokens), from its config."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = (
        GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=128, n_positions=64)
        if small
        else GPT2Config(n_layer=2)
    )
    model = GPT2LMHeadModel(config).to(device).train()
    shape = (2, 16) if small else (8, 256)
    ids = torch.randint(0, model.config.vocab_size, shape, device=device)
    return model, lambda m: m(input_ids=ids, labels=ids).loss


def mlp(device: str, small: bool) -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """Four square bf16 layers with GELU between them: one matrix-product shape each way."""
    width, rows = (32, 16) if small else (1024, 2048)
    layers: list[nn.Module] = []
    for i in range(4):
        layers += [nn.Linear(width, width)] + ([nn.GELU()] if i < 3 else [])
    model = nn.Sequential(*layers).to(device, torch.bfloat16).train()
    x, y = (torch.randn(rows, width, device=device, dtype=torch.bfloat16) for _ in range(2))
    return model, lambda m: nn.functional.mse_loss(m(x), y)


def training_step(model_name: str, mode: str | None, device: str) -> Callable[[], None]:
    """One optimizer step of the model compiled with ``mode``; the optimizer stays eager."""
    torch.manual_seed(0)
    model, loss_of = {"gpt2": gpt2, "mlp": mlp}[model_name](device, device == "cpu")
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


def compile_seconds(exp: compiler.Exploration) -> tuple[float, float, float]:
    """(frames' compile seconds, backward graphs' Inductor seconds, autotuning seconds), as
    torch reported them (``compilation_metrics``, ``bwd_compilation_metrics``, its phases)."""
    times = compiler.compile_time(exp)
    backward = sum(c.metrics.backward_seconds or 0.0 for c in exp.compiles)
    return times.total, backward, dict(times.by_phase()).get("autotuning", 0.0)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def record_one(name: str, out: Path, device: str) -> None:
    """Record one case in this process (the parent gives it fresh cache folders)."""
    torch.compile(lambda t: t.sin() + 1)(torch.randn(8, device=device))  # start-up, not timed
    _sync(device)
    start = time.perf_counter()
    if name == "matmul_max_autotune":
        a, b = torch.randn(1024, 1024, device=device), torch.randn(1024, 1024, device=device)
        with torch.no_grad():
            exp = compiler.explore(
                lambda a, b: torch.relu(a @ b), a, b, mode="max-autotune-no-cudagraphs",
                measure=True,
            )  # fmt: skip
        first = time.perf_counter() - start
    else:
        model_name, suffix = name.removeprefix("capstone_").split("_", 1)
        step = training_step(model_name, MODES[suffix], device)
        exp = compiler.explore(step, wrap=False)
        _sync(device)
        first = time.perf_counter() - start
        exp = _measured(exp, step)
    exp = compiler.with_sass(exp)
    exp = dataclasses.replace(exp, notes=(*exp.notes, FIRST_STEP.format(first)))
    frames_s, backward_s, autotune_s = compile_seconds(exp)
    path = out / f"{name}.json"
    write_recording(path, exp)
    t = exp.call_timing
    kernels = [k for c in exp.compiles for k in c.kernels()]
    staged = sum(1 for k in kernels for v in k.variants if v.chosen and v.stages)
    incomplete = _incomplete_kernels(exp)
    summary = {
        "compile_s": round(frames_s, 2),
        "backward_compile_s": round(backward_s, 2),
        "autotuning_s": round(autotune_s, 2),
        "compiles": len(exp.compiles),
        "kernels": len(kernels),
        "kernels_with_stages": staged,
        "autotuned_ops": sum(len(c.autotuning) for c in exp.compiles),
        "bytes": path.stat().st_size,
    }
    print(
        f"{name}: {summary['compiles']} compiles, {len(kernels)} kernels ({staged} with "
        f"stages), {summary['autotuned_ops']} autotuned ops, compile {frames_s:.1f} s + "
        f"backward {backward_s:.1f} s (autotuning {autotune_s:.1f} s), first step "
        f"{first:.2f} s under capture"
        + (
            f", step eager {t.eager_ms:.3f} ms / compiled {t.compiled_ms:.3f} ms "
            f"({t.speedup:.2f}x), device {t.device_ms or 0:.3f} ms"
            if t
            else ""
        )
        + f", {summary['bytes']:,} B",
        flush=True,
    )
    if incomplete:
        # the kernel lab relowers a recorded kernel from its chosen variant's config; one
        # without it falls back to guessed block sizes (slow, and not what the GPU ran)
        for line in incomplete:
            print(f"{name}: INCOMPLETE {line}", flush=True)
        raise SystemExit(3)


def _incomplete_kernels(exp: compiler.Exploration) -> list[str]:
    """Triton kernels recorded without a chosen variant, its four text stages, or its
    block sizes in the config: each one line naming the kernel and what it lacks. The
    committed capstone_gpt2_default.json (recorded before triton_stages looked files up
    under Triton's 150-character names) gives one line, for its kernel ``..._view_13``."""
    lines = []
    for c in exp.compiles:
        for k in c.kernels():
            if k.language != "triton":
                continue
            chosen = next((v for v in k.variants if v.chosen), None)
            if chosen is None:
                lines.append(f"{c.key} {k.name}: no chosen variant ({len(k.variants)} found)")
                continue
            texts = [s.stage for s in chosen.stages if s.text]
            if len(texts) < 4:
                lines.append(f"{c.key} {k.name}: stages {texts}")
            # a template kernel (max-autotune's matmuls) fixes its block sizes in its source
            template = "@triton_heuristics.template" in k.source
            if not template and not any(key.endswith("BLOCK") for key in chosen.config):
                lines.append(f"{c.key} {k.name}: config {chosen.config} has no block sizes")
    return lines


def main() -> None:
    if "--one" in sys.argv:
        _, name, out, device = sys.argv[sys.argv.index("--one") :][:4]
        record_one(name, Path(out), device)
        return
    cpu = "--cpu" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else ROOT / "notebooks" / "recordings"
    chosen = args[1:] or ["gpt2", "mlp"]
    if cpu and out.resolve() == (ROOT / "notebooks" / "recordings").resolve():
        raise SystemExit("--cpu writes smoke recordings: give an OUT_DIR of their own.")
    if not cpu and not torch.cuda.is_available():
        raise SystemExit("record_capstone_gpu.py needs a CUDA device (or --cpu for a smoke run).")
    out.mkdir(parents=True, exist_ok=True)
    every = [*RECORDINGS, "matmul_max_autotune"]
    names = [
        n for n in every
        if n in chosen or n.removeprefix("capstone_").split("_")[0] in chosen
    ]  # fmt: skip
    if not names:
        raise SystemExit(f"no recording matches {chosen}; choose from {['gpt2', 'mlp', *every]}")
    failed = []
    began = time.perf_counter()
    limited = not cpu or bool(os.environ.get("CAPSTONE_LIMIT_S"))
    for name in names:
        with tempfile.TemporaryDirectory() as caches:
            env = {
                **os.environ,
                "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
                "TRITON_CACHE_DIR": os.path.join(caches, "triton"),
            }
            device = "cpu" if cpu else "cuda"
            one: list[Any] = [sys.executable, __file__, "--one", name, str(out), device]
            limit = float(os.environ.get("CAPSTONE_LIMIT_S") or LIMIT_S.get(name, LIMIT_DEFAULT_S))
            start = time.perf_counter()
            # its own session: on the time limit, its compile workers stop with it
            proc = subprocess.Popen(one, env=env, start_new_session=True)
            try:
                code = proc.wait(timeout=limit if limited else None)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                print(f"{name}: stopped after {limit:.0f} s, not recorded", flush=True)
                failed.append(name)
                continue
            print(f"{name}: process {time.perf_counter() - start:.1f} s", flush=True)
            if code:
                failed.append(name)
    print(f"all: {time.perf_counter() - began:.0f} s", flush=True)
    if failed:
        raise SystemExit(f"failed: {failed}")


if __name__ == "__main__":
    main()
