"""Regional compilation against compiling the whole model: cold compile seconds.

A GPT-2 from a transformers config (no weights), compiled three ways, each in a fresh
process (so no kernel built by one way is reused by another) with Inductor's caches off:
the whole model; each block with ``block.compile()``; the whole model with the block's
``forward`` marked ``torch.compiler.nested_compile_region``. Compile seconds: the first
call's wall time less an eager call's. The three run one after another in one sitting.

    nice -n 10 /work/main/.venv/bin/python benchmarks/regional_compile.py [--layers 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

WAYS = ("whole model", "each block", "nested_compile_region")


def child(way: str, layers: int, width: int) -> None:
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=layers, n_embd=width, n_head=4, vocab_size=1000, n_positions=128)
    model = GPT2Model(cfg).eval()
    ids = torch.randint(0, 1000, (2, 32))

    def first_call(fn: object) -> float:
        t0 = time.perf_counter()
        with torch.no_grad():
            fn(ids)  # type: ignore[operator]
        return time.perf_counter() - t0

    eager = min(first_call(model) for _ in range(3))
    if way == "whole model":
        seconds = first_call(torch.compile(model)) - eager
    elif way == "each block":
        for block in model.h:
            block.compile()
        seconds = first_call(model) - eager
    else:
        block_type = type(model.h[0])
        region = torch.compiler.nested_compile_region(block_type.forward)
        block_type.forward = region  # type: ignore[method-assign]
        seconds = first_call(torch.compile(model)) - eager
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"RESULT {seconds:.2f} {graphs}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--child", default="")
    args = p.parse_args()
    if args.child:
        child(args.child, args.layers, args.width)
        return
    env = {**os.environ, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
    got = {}
    for way in WAYS:
        cmd = [sys.executable, __file__, "--child", way, "--layers", str(args.layers),
               "--width", str(args.width)]  # fmt: skip
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        seconds, graphs = out.split("RESULT ")[1].split()
        got[way] = float(seconds)
        print(f"{way:22s}: {float(seconds):6.1f} s to compile, {graphs} Dynamo graphs")
    whole = got["whole model"]
    for way in WAYS[1:]:
        print(f"a {args.layers}-layer GPT-2 (width {args.width}) compiles in {whole:.1f} s; "
              f"{way}: {got[way]:.1f} s (ratio {whole / got[way]:.2f}), caches off")


if __name__ == "__main__":
    main()
