"""Saved for backward on a GPT-2 training step: ``compiler.memory`` against torch's own.

Compiles one training step of a GPT-2 built from a transformers config (no weights, CPU)
under ``compiler.explore``, and beside it, in the same compile, an Inductor post-grad
pass that sums the bytes of each backward graph's placeholders that are not tangents,
from their fake tensors (``meta["val"]``): what the backward receives as saved inputs.
The two totals must agree per backward graph.

    python benchmarks/saved_for_backward.py [n_layer] [batch] [seq]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import torch  # noqa: E402
from torch._inductor.custom_graph_pass import CustomGraphPass  # noqa: E402

import compiler  # noqa: E402


class SavedInputs(CustomGraphPass):
    """Per backward graph Inductor compiles: bytes of its saved (non-tangent) inputs,
    from torch's fake tensors."""

    def __init__(self) -> None:
        self.totals: list[int] = []

    def __call__(self, graph: torch.fx.Graph) -> None:
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if not any(n.name.startswith("tangents") for n in placeholders):
            return  # a forward or inference graph
        total = 0
        for n in placeholders:
            val = n.meta.get("val")
            if not n.name.startswith("tangents") and isinstance(val, torch.Tensor):
                total += val.numel() * val.element_size()
        self.totals.append(total)

    def uuid(self) -> Any:
        return None  # caches are off under explore: never hashed


def gpt2_step(
    rec: SavedInputs, n_layer: int = 4, batch: int = 2, seq: int = 64
) -> tuple[Any, Any]:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=n_layer, n_embd=512, n_head=8, vocab_size=5000, n_positions=seq,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).train()
    ids = torch.randint(0, 5000, (batch, seq))
    compiled = torch.compile(model, options={"post_grad_custom_pre_pass": rec})

    def step(ids: torch.Tensor) -> None:
        compiled(input_ids=ids, labels=ids).loss.backward()

    return step, ids


def main() -> None:
    args = [int(a) for a in sys.argv[1:]]
    rec = SavedInputs()
    step, ids = gpt2_step(rec, *args)
    t0 = time.perf_counter()
    exp = compiler.explore(step, ids)
    seconds = time.perf_counter() - t0
    ours = [c.total_bytes for c in compiler.memory(exp).compiles]
    print(f"compiled in {seconds:.0f} s; backward graphs: {len(rec.totals)}")
    print(f"torch's backward placeholders (bytes): {rec.totals}")
    print(f"compiler.memory saved for backward:    {ours}")
    print("match" if sorted(ours) == sorted(rec.totals) else "MISMATCH")
    print(compiler.memory(exp).table())


if __name__ == "__main__":
    main()
