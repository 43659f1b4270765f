"""What the advisor says on two real models built from transformers configs (no weights).

- GPT-2 (2 layers) called at two sequence lengths, as a generation loop does.
- GPT-2 greedy decoding with an end-of-sequence check on the chosen token, compiled.
- BERT (2 layers) inference under Inductor.

    python benchmarks/advisor_models.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import compiler

    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=256)
    model = GPT2LMHeadModel(cfg).eval()
    compiled = torch.compile(model, backend="aot_eager")

    def generate_steps(batch):
        with torch.no_grad():
            for seq in (16, 32):
                compiled(input_ids=torch.randint(0, 1000, (batch, seq)))

    return compiler.explore(generate_steps, 2, wrap=False)


def _gpt2_decode():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import compiler

    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=256)
    model = GPT2LMHeadModel(cfg).eval()
    eos = 999

    def decode_step(ids):
        logits = model(input_ids=ids).logits
        nxt = logits[:, -1].argmax(-1)
        if nxt.item() == eos:  # a Python decision on the model's output
            return ids
        return torch.cat([ids, nxt[:, None]], dim=1)

    with torch.no_grad():
        return compiler.explore(decode_step, torch.randint(0, 1000, (1, 16)), backend="aot_eager")


def _bert():
    import torch
    from transformers import BertConfig, BertModel

    import compiler

    cfg = BertConfig(
        num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=256
    )
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 32))
    with torch.no_grad():
        return compiler.explore(model, ids)


def main() -> None:
    import torch

    from explorer.report import findings_markdown

    print(f"torch {torch.__version__}  device cpu")
    for name, build in (("GPT-2, two sequence lengths, aot_eager", _gpt2),
                        ("GPT-2 greedy decoding step, aot_eager", _gpt2_decode),
                        ("BERT inference, Inductor", _bert)):  # fmt: skip
        t0 = time.perf_counter()
        exp = build()
        seconds = time.perf_counter() - t0
        print(f"\n# {name}: {len(exp.compiles)} compiles in {seconds:.1f} s\n")
        print(findings_markdown(exp.findings()))


if __name__ == "__main__":
    main()
