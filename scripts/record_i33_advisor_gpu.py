"""GPU recordings of issue 33's programs: `python scripts/record_i33_advisor_gpu.py OUT_DIR`.

Runs on a CUDA machine (one GPU) and writes into OUT_DIR (default
``tests/advisor_corpus/recordings/``):

- ``i33_item_list_step.json``: an MLP training step that logs ``loss.item()`` of each
  block into a list inside the compiled function (graph breaks, then compiled slower than
  eager on the host side), measured (``measure=True``).
- ``i33_generate_compiled_forward.json``: ``model.generate()`` on a small GPT-2 built from
  its config (no weights) whose ``forward`` the program compiles itself; measured, and with
  ``try_fixes`` run, so the tried ``dynamic`` fix is in the recording.
- ``i33_lr_scheduler_step.json``: a compiled ``AdamW.step`` under ``LambdaLR`` (a float lr
  that changes every step), 12 steps.

Each file is an ``Exploration.to_json()``; a program that fails writes ``<name>.error.txt``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from gpu_recording import ROOT, write_failure, write_recording

import compiler

# the GPU is what this script is for; the CPU only checks that it runs
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def item_list_step() -> compiler.Exploration:
    torch.manual_seed(0)
    blocks = torch.nn.ModuleList(
        torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU()) for _ in range(4)
    ).to(DEVICE)
    opt = torch.optim.SGD(blocks.parameters(), lr=0.01)
    history: list[float] = []

    def step(x: torch.Tensor) -> torch.Tensor:
        for block in blocks:
            x = block(x)
            history.append(x.pow(2).mean().item())  # logging inside the compiled step
        loss = x.sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return compiler.explore(step, torch.randn(64, 256, device=DEVICE), measure=True)


def generate_compiled_forward() -> compiler.Exploration:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1024, n_positions=128,
                     bos_token_id=0, eos_token_id=0)  # fmt: skip
    model = GPT2LMHeadModel(cfg).to(DEVICE).eval()
    model.forward = torch.compile(model.forward)
    ids = torch.randint(1, 1024, (1, 12), device=DEVICE)

    def gen() -> torch.Tensor:
        with torch.no_grad():
            return model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)

    exp = compiler.explore(gen, wrap=False, measure=True)
    return compiler.try_fixes(exp, gen, runs=3)


def lr_scheduler_step() -> compiler.Exploration:
    torch.manual_seed(0)
    model = torch.nn.Linear(512, 512).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.95**s)
    model(torch.randn(8, 512, device=DEVICE)).sum().backward()

    @torch.compile
    def step() -> None:
        opt.step()

    def train() -> None:
        for _ in range(12):
            step()
            sched.step()

    return compiler.explore(train, wrap=False)


PROGRAMS: dict[str, Callable[[], compiler.Exploration]] = {
    "i33_item_list_step": item_list_step,
    "i33_generate_compiled_forward": generate_compiled_forward,
    "i33_lr_scheduler_step": lr_scheduler_step,
}


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/advisor_corpus/recordings"
    out.mkdir(parents=True, exist_ok=True)
    for name, program in PROGRAMS.items():
        t0 = time.perf_counter()
        try:
            exp = program()
            write_recording(out / f"{name}.json", exp)
            kinds = [f.kind for f in exp.findings()]
            print(f"{name}: {time.perf_counter() - t0:.1f} s, findings {kinds}", flush=True)
        except Exception:
            write_failure(out, name)
            print(f"{name}: FAILED after {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
