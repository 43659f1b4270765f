"""Issue 34 on a GPU: an explored training loop with measure=True ends as a plain run ends.

Usage: python3 scripts/check_i34_observe_gpu.py OUT_DIR

Builds the same 12-step loop twice (an MLP compiled with Inductor, AdamW, LambdaLR,
dropout), runs one plainly and explores the other with ``measure=True`` (which calls the
loop again for warm-ups, profiling and timing), then compares parameters, optimizer state,
scheduler step and the CUDA generator. Writes ``OUT_DIR/i34_observe_gpu.json`` and prints
it. Also checks that a function compiled before the capture does not compile again.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_observe import CountingBackend, _state, _training, user_fn

import compiler


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, object] = {"torch": torch.__version__}
    result["device"] = torch.cuda.get_device_name(0)
    backend = CountingBackend()
    mine = torch.compile(user_fn, backend=backend)
    x = torch.randn(64, device="cuda")
    mine(x)

    run, model, opt, sched = _training("cuda", backend="inductor")
    run()
    plain = _state(model, opt, sched)
    run, model, opt, sched = _training("cuda", backend="inductor")
    start = time.perf_counter()
    exp = compiler.explore(run, wrap=False, measure=True)
    result["explore_s"] = round(time.perf_counter() - start, 1)
    explored = _state(model, opt, sched)
    params = [(p - q).abs().max().item() for p, q in zip(explored[0], plain[0], strict=True)]
    states = [
        (explored[1][k][n].float() - plain[1][k][n].float()).abs().max().item()
        for k in plain[1]
        for n in plain[1][k]
    ]
    result.update(
        compiles=len(exp.compiles),
        call_timing=exp.call_timing is not None,
        max_param_diff=max(params),
        max_optimizer_state_diff=max(states),
        params_bit_identical=max(params) == 0.0,
        scheduler_step=(explored[2], plain[2]),
        lr=(explored[3], plain[3]),
        cuda_rng_equal=bool(torch.equal(explored[5], plain[5])),
        notes=list(exp.notes),
    )
    mine(x)
    result["user_fn_compiles"] = backend.graphs  # 1: it never compiled again
    text = json.dumps(result, indent=1, default=str)
    (out / "i34_observe_gpu.json").write_text(text)
    print(text)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
