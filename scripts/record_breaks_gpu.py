"""GPU recordings for the break and backend-failure advice.

`python scripts/record_breaks_gpu.py OUT_DIR`

Runs on a CUDA machine (seen on torch 2.11: Inductor fails on ``aten._local_scalar_dense``
in transformers' grouped-mm MoE experts and falls back to eager) and writes into OUT_DIR:

- ``breaks_mixtral_train_step.json``: a tiny Mixtral built from its config (no weights),
  a training step (forward, loss, backward) compiled with Inductor;
- ``breaks_adamw_lambdalr.json``: a compiled AdamW ``step`` under ``LambdaLR``, eight
  steps (torch's optimizer breaks the graph itself; the float lr recompiles);
- ``findings.txt``: the advisor's findings of each, and torch's graph-break counters.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
from gpu_recording import write_recording

import compiler


def mixtral() -> compiler.Exploration:
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
        num_experts_per_tok=2, max_position_embeddings=64,
    )  # fmt: skip
    model = MixtralForCausalLM(cfg).cuda()
    ids = torch.randint(0, 128, (2, 16), device="cuda")

    def step(ids: torch.Tensor) -> torch.Tensor:
        out = model(ids, labels=ids)
        out.loss.backward()
        return out.loss.detach()

    return compiler.explore(step, ids)


def adamw() -> compiler.Exploration:
    model = torch.nn.Linear(64, 64, device="cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.9**s)
    model(torch.randn(8, 64, device="cuda")).sum().backward()

    @torch.compile
    def step() -> None:
        opt.step()

    def run() -> None:
        for _ in range(8):
            step()
            sched.step()

    return compiler.explore(run)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"torch {torch.__version__}"]
    for name, make in (("breaks_mixtral_train_step", mixtral), ("breaks_adamw_lambdalr", adamw)):
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        t0 = time.perf_counter()
        try:
            exp = make()
        except Exception as e:  # record what failed and go on to the next program
            lines.append(f"== {name}: failed: {type(e).__name__}: {e}")
            continue
        write_recording(out / f"{name}.json", exp)
        counters = torch._dynamo.utils.counters
        lines.append(f"== {name} ({time.perf_counter() - t0:.1f} s)")
        lines.append(f"graph_break counters: {dict(counters['graph_break'])}")
        lines.append(f"aot_autograd counters: {dict(counters['aot_autograd'])}")
        for f in exp.findings():
            lines += [f"{f.severity} {f.kind} | {f.title} | {f.cause}", f"  {f.impact}"]
            lines += [f"  {ln}" for ln in f.suggestion.splitlines()]
    (out / "findings.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
