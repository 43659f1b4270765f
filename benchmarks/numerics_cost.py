"""What ``compiler.numerics`` costs: one GPT-2 training step (4 layers, width 64, AdamW)
under ``numerics`` against one plain ``torch.compile`` step with the same options
(``fallback_random``: random ops run as eager's, so dropout compares), compile included, each
in a fresh process with the caches capture turns off (the FX graph and AOTAutograd caches)
off on both sides; the kernels' own build caches stay as they are, on both sides.

    python benchmarks/numerics_cost.py            # CPU
    python benchmarks/numerics_cost.py --device cuda
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CASE = """
import json, sys, time, torch, transformers
sys.path.insert(0, {root!r})
torch.manual_seed(0)
device = {device!r}
config = transformers.GPT2Config(n_layer=4, n_embd=64, n_head=4, n_positions=64, vocab_size=512)
model = transformers.GPT2LMHeadModel(config).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 512, (4, 32), device=device)

def step(ids):
    opt.zero_grad()
    loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    return loss

t0 = time.perf_counter()
if {numerics!r}:
    import compiler
    found = compiler.numerics(step, ids, options={{"fallback_random": True}})
    extra = {{"compared": len(found.compared), "nodes": len(found.nodes),
             "diverges": found.first_divergence is not None}}
else:
    # the caches capture turns off (FX graph, AOTAutograd); both sides keep the kernel builds
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    # the options numerics is given: fallback_random changes what Inductor compiles
    torch.compile(step, options={{"fallback_random": True}})(ids)
    extra = {{}}
if device == "cuda":
    torch.cuda.synchronize()
print(json.dumps({{"seconds": time.perf_counter() - t0, **extra}}))
"""


def _run(device: str, numerics: bool) -> dict[str, float]:
    code = _CASE.format(root=str(ROOT), device=device, numerics=numerics)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("cuda: skipped (no CUDA device)")
        return
    print(f"torch {torch.__version__}  device {args.device}")
    plain, observed = [], []
    for _ in range(args.repeats):  # interleaved, each in a fresh process
        plain.append(_run(args.device, False)["seconds"])
        found = _run(args.device, True)
        observed.append(found["seconds"])
    p, o = sorted(plain)[len(plain) // 2], sorted(observed)[len(observed) // 2]
    print(f"gpt2-4L train step  compiled {p:.1f} s  numerics {o:.1f} s  {o / p:.2f}x  "
          f"({found['compared']:.0f} of {found['nodes']:.0f} nodes compared, "
          f"divergence: {bool(found['diverges'])})")


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - t:.0f} s")
