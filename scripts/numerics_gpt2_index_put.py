"""``compiler.numerics`` on a GPT-2-4L training step on CUDA (issue 44): the first divergence,
every node out of tolerance, the end-to-end comparison, and the output-code lines around
each write of the buffers of the ``index_put`` nodes (the tied embedding's gradient, which
an H200 run reported with max relative error 1.0: its value was copied after Triton's
zero-fill kernel and before the kernel that adds into it). GPT-2 built from a config (no
weights). Under 3 minutes on an H200 (torch 2.11, transformers).

    python3 scripts/numerics_gpt2_index_put.py            # CUDA, 4 layers
    python3 scripts/numerics_gpt2_index_put.py --device cpu --layers 1 --vocab 512
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _row(n: Any) -> str:
    where = f" at {n.source}" if n.source is not None else ""
    return (f"{n.graph}/{n.node} ({n.target}) buffer={n.buffer or '-'} kernel={n.kernel or '-'}"
            f"{where}: max_abs={n.max_abs} max_rel={n.max_rel} ratio={n.ratio} "
            f"within={n.within} assert_close={n.assert_close}")  # fmt: skip


def _call_lines(text: str, buffer: str, around: int = 2) -> list[str]:
    """The lines of ``call`` that name ``buffer`` (with ``around`` lines each side) and the
    ``def`` line of every kernel called on them, numbered as in the file."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if re.match(r"\s*def call\(", line)), 0)
    named = [i for i in range(start, len(lines)) if re.search(rf"\b{buffer}\b", lines[i])]
    shown: list[str] = []
    kernels: dict[str, None] = {}
    last = -1
    for i in named:
        for j in range(max(i - around, last + 1), min(i + around + 1, len(lines))):
            shown.append(f"{j + 1:6d}{'>' if j == i else ' '} {lines[j]}")
            last = j
        m = re.search(r"(\w+)\.run\(", lines[i]) or re.search(r"^\s*(cpp_fused\w+)\(", lines[i])
        if m:
            kernels.setdefault(m.group(1), None)
        shown.append("")
    for kernel in kernels:
        for j, line in enumerate(lines):
            if line.startswith(f"def {kernel}(") or ("'mutated_arg_names'" in line and (
                f"'kernel_name': '{kernel}'" in line
            )):
                shown.append(f"{j + 1:6d}  {line.strip()[:300]}")
    return shown


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=50257)
    args = parser.parse_args()

    import torch
    import transformers

    import compiler

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=args.layers, n_embd=128, n_head=4, n_positions=128,
                                     vocab_size=args.vocab)  # fmt: skip
    model = transformers.GPT2LMHeadModel(config).to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, args.vocab, (4, 64), device=args.device)

    def step(ids: torch.Tensor) -> torch.Tensor:
        opt.zero_grad()
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        return loss

    device = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {device}")
    t0 = time.perf_counter()
    found = compiler.numerics(step, ids, options={"fallback_random": True})
    print(f"numerics took {time.perf_counter() - t0:.1f} s: {len(found.compared)} of "
          f"{len(found.nodes)} nodes compared")  # fmt: skip
    first = found.first_divergence
    print("FIRST DIVERGENCE:", _row(first) if first is not None else "none")
    over = [n for n in found.nodes if n.diverges]
    print(f"OUT OF TOLERANCE ({len(over)}):")
    for n in over:
        print("  " + _row(n))
    print("END TO END:", "diverges" if found.end_to_end_diverges else "agrees")
    for f in found.end_to_end:
        if f.diverges or not f.compared:
            print(f"  {f.kind} {f.name}: max_abs={f.max_abs} ratio={f.ratio} {f.reason}")
    exp = found.exploration
    assert exp is not None
    for n in found.nodes:
        if "index_put" not in n.target:
            continue
        print("INDEX_PUT:", _row(n))
        for c in exp.compiles:
            for out in c.output_code:
                same_graph = (out.key or out.graph) == n.graph
                if (c.key or str(c.compile_id)) == n.compile_id and same_graph and n.buffer:
                    print(f"  output code {out.path}, lines naming {n.buffer}:")
                    print("\n".join("  " + line for line in _call_lines(out.text, n.buffer)))
    for note in found.notes:
        print("NOTE:", note[:400])
    for error in exp.errors:
        print("ERROR:", error.stage, error.message)
    ok = first is None and not found.end_to_end_diverges
    print("RESULT:", "no divergence" if ok else "divergence (see above)")


if __name__ == "__main__":
    main()
