"""Regional compilation against compiling the whole model: cold compile seconds, one run.

A GPT-2 from a transformers config (no weights) is compiled whole, then its blocks are
compiled instead (``block.compile()`` on each: Dynamo traces the block's code once and
reuses the graph for the other blocks). Caches are off so both compiles are cold; Dynamo
is reset between them. Compile seconds: the first call's wall time less an eager call's.

    nice -n 10 /work/main/.venv/bin/python benchmarks/regional_compile.py [--layers 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    args = p.parse_args()
    import torch
    from transformers import GPT2Config, GPT2Model


    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=args.layers, n_embd=args.width, n_head=4, vocab_size=1000,
                     n_positions=128)  # fmt: skip
    model = GPT2Model(cfg).eval()
    ids = torch.randint(0, 1000, (2, 32))

    def first_call(fn: object) -> float:
        t0 = time.perf_counter()
        with torch.no_grad():
            fn(ids)  # type: ignore[operator]
        return time.perf_counter() - t0

    eager = min(first_call(model) for _ in range(3))
    torch._dynamo.reset()
    whole = first_call(torch.compile(model)) - eager
    graphs_whole = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    for block in model.h:
        block.compile()
    regional = first_call(model) - eager
    graphs_block = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    for block in model.h:
        block._compiled_call_impl = None
    block_type = type(model.h[0])
    forward = block_type.forward
    block_type.forward = torch.compiler.nested_compile_region(forward)  # type: ignore[method-assign]
    try:
        nested = first_call(torch.compile(model)) - eager
    finally:
        block_type.forward = forward  # type: ignore[method-assign]
    graphs_nested = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"whole model with its block a nested_compile_region: {nested:.1f} s "
          f"({graphs_nested} graphs)")
    print(f"eager call {eager * 1e3:.1f} ms; whole model: {whole:.1f} s to compile "
          f"({graphs_whole} graphs); each block compiled: {regional:.1f} s ({graphs_block} "
          "graphs)")  # fmt: skip
    print(f"a {args.layers}-layer GPT-2 (width {args.width}) compiles in {whole:.1f} s; "
          f"compiling its block compiles in {regional:.1f} s ({whole / regional:.1f}x less), "
          "caches off, this CPU, one run")  # fmt: skip

if __name__ == "__main__":
    main()
