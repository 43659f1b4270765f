"""The compile-and-compare lab on a real model: a 2-layer GPT-2 built from its config.

Prints the compile log (``explorer.compile_log``) for eager, ``aot_eager``, Inductor
and Inductor with ``dynamic=True``. Needs ``transformers`` (no weights are downloaded: the
model is built from a config with random weights). One torch thread keeps the timings stable
on a small shared CPU.

Run: ``python examples/compare_gpt2.py``
"""

from __future__ import annotations

import torch
from transformers import GPT2Config, GPT2LMHeadModel

import compiler
from explorer.compile_log import compile_log


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=128)
    model = GPT2LMHeadModel(config).eval()
    ids = torch.randint(0, config.vocab_size, (4, 64))

    def logits(ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids).logits

    with torch.no_grad():
        comparison = compiler.compare(
            logits, ids, configs=["aot_eager", "default", "dynamic"], steps=20,
            progress=lambda p: print(p, flush=True) if p.step != "timing" else None,
        )  # fmt: skip
    print(compile_log(comparison))


if __name__ == "__main__":
    main()
