"""Record ``compiler.numerics`` on CUDA for a CPU replay (issue 44): a small training step
with Inductor's planted Triton relu bug (``triton.inject_relu_bug_TESTING_ONLY =
"accuracy"``) and the same without it, each an Exploration with ``numerics`` set; then
the cost benchmark on CUDA. Under 5 minutes on an H200 (torch 2.11).

    python3 scripts/record_numerics_gpu.py OUT
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> None:
    import torch
    from test_numerics import RELU_LINE, TwoLayers, _step

    import compiler

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "numerics_gpu")
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, object] = {"torch": torch.__version__, "relu_line": RELU_LINE,
                                  "device": torch.cuda.get_device_name()}  # fmt: skip
    for name, options in (("bug", {"triton.inject_relu_bug_TESTING_ONLY": "accuracy"}),
                          ("clean", {})):  # fmt: skip
        torch.manual_seed(0)
        model = TwoLayers().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        t0 = time.perf_counter()
        found = compiler.numerics(_step(model, opt), torch.randn(64, 8, device="cuda"),
                                  options=options)  # fmt: skip
        first = found.first_divergence
        summary[name] = {
            "seconds": round(time.perf_counter() - t0, 2),
            "compared": len(found.compared), "nodes": len(found.nodes),
            "first": None if first is None else {
                "node": first.node, "kernel": first.kernel, "kernel_id": first.kernel_id,
                "line": first.source.line if first.source else None, "graph": first.graph},
            "not_compared": sorted({n.reason.split(":")[0] for n in found.not_compared}),
        }  # fmt: skip
        text = found.exploration.to_json()
        with gzip.open(out / f"cuda_numerics_relu_{name}.json.gz", "wt", encoding="utf-8") as f:
            # the CPU replay test reads cuda_numerics_relu_bug.json.gz from tests/data/recordings
            f.write(text)
        print(name, json.dumps(summary[name]))
    (out / "cuda_numerics_summary.json").write_text(json.dumps(summary, indent=1))
    bench_script = str(ROOT / "benchmarks" / "numerics_cost.py")
    bench = subprocess.run([sys.executable, bench_script, "--device", "cuda"],
                           capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    (out / "numerics_cost_cuda.txt").write_text(bench.stdout + bench.stderr[-4000:])
    print(bench.stdout)


if __name__ == "__main__":
    main()
