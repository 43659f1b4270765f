"""A user's own torch.profiler trace of a compiled GPT-2 training step, with its Exploration.

    python3 scripts/record_profile_gpu.py OUT_DIR [--cpu]

On a CUDA machine (H100/H200, torch 2.11) this builds a GPT-2 (2 layers, width 256, from a
config, no weights) training step, compiles the model with Inductor, and runs the user's
loop under ``compiler.explore(run, wrap=False)``: two steps (compile, warm-up), then three
steps under ``torch.profiler`` whose Chrome trace is exported, as a user would. It writes:

- ``gpt2_train_step.exploration.json.gz``: the Exploration (compact form);
- ``gpt2_train_step.trace.json.gz``: the profiler's Chrome trace, gzipped;
- ``gpt2_train_step.facts.json``: torch's own facts read from the trace apart from the
  explorer: GPU kernel events, the Triton launches Inductor's launcher recorded on the host
  (``kernel_backend``/``kernel_file`` args), the ``Torch-Compiled Region`` events.

``--cpu`` is a smoke run of the same path on a CPU (a tiny config; Inductor's C++ kernels
appear in the trace through ``cpp.enable_kernel_profile``); without it and without CUDA the
script stops with a message.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from gpu_recording import write_json

import compiler

NAME = "gpt2_train_step"


def trace_facts(trace: dict[str, Any]) -> dict[str, Any]:
    """What the trace itself says, read with plain json: kernel events on the device, the
    host-side launches of Inductor's kernels and the compiled regions."""
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launches = [
        e for e in events
        if e.get("ph") == "X" and isinstance(e.get("args"), dict)
        and ("kernel_backend" in e["args"] or "kernel_file" in e["args"])
    ]
    cpp = Counter(str(e.get("name")) for e in events if "_cpp_fused_" in str(e.get("name")))
    regions = [e for e in events if str(e.get("name", "")).startswith("Torch-Compiled Region")]
    names = Counter(str(e.get("name")) for e in kernels)
    return {
        "events": len(events),
        "kernel_events": len(kernels),
        "kernel_names": dict(names.most_common()),
        "triton_named_kernel_events": sum(
            n for k, n in names.items() if k.startswith("triton_")
        ),
        "launch_events": len(launches),
        "launch_names": dict(Counter(str(e.get("name")) for e in launches).most_common()),
        "launch_args_sample": [e["args"] for e in launches[:3]],
        "cpp_kernel_events": dict(cpp.most_common()),
        "compiled_regions": dict(Counter(str(e.get("name")) for e in regions).most_common()),
        "kernel_event_sample": kernels[:2],
    }


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    cpu = "--cpu" in sys.argv[2:]
    if not cpu and not torch.cuda.is_available():
        sys.exit(
            "record_profile_gpu.py: CUDA is not available here; this recording needs a GPU "
            "(run with --cpu for a smoke run of the same path on the CPU)."
        )
    out.mkdir(parents=True, exist_ok=True)
    from transformers import GPT2Config, GPT2LMHeadModel

    dev = "cpu" if cpu else "cuda"
    if cpu:
        import torch._inductor.config as inductor_config

        inductor_config.cpp.enable_kernel_profile = True
        cfg = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=128, n_positions=32)
        x = torch.randint(0, 128, (2, 8), device=dev)
    else:
        cfg = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=1024, n_positions=128)
        x = torch.randint(0, 1024, (4, 64), device=dev)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    cmodel = torch.compile(model)
    raw = out / f"{NAME}.trace.json"
    acts = [torch.profiler.ProfilerActivity.CPU]
    if not cpu:
        acts.append(torch.profiler.ProfilerActivity.CUDA)

    def step() -> torch.Tensor:
        loss = cmodel(x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def run() -> None:
        for _ in range(2):
            step()
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(3):
                step()
            if not cpu:
                torch.cuda.synchronize()
        prof.export_chrome_trace(str(raw))

    t0 = time.perf_counter()
    exp = compiler.explore(run, wrap=False, triton_stages=False)
    took = time.perf_counter() - t0
    (out / f"{NAME}.exploration.json.gz").write_bytes(
        gzip.compress(exp.to_json(compact=True).encode(), 6)
    )
    trace = json.loads(raw.read_text())
    with raw.open("rb") as src, gzip.open(out / f"{NAME}.trace.json.gz", "wb", 6) as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    facts = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if not cpu else "cpu",
        "config": cfg.to_dict() if hasattr(cfg, "to_dict") else {},
        "explore_seconds": round(took, 1),
        "compiles": [str(c.compile_id) for c in exp.compiles],
        "explored_kernels": sorted(
            {k.name for c in exp.compiles for k in c.kernels()}
        ),
        **trace_facts(trace),
    }
    write_json(out / f"{NAME}.facts.json", facts)
    print(json.dumps({k: v for k, v in facts.items() if "sample" not in k}, default=str)[:4000])
    print(f"wrote {sorted(p.name for p in out.iterdir())} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
