"""GPU recordings of the advisor's real-model corpus (``benchmarks/advisor_models.py``).

    python scripts/record_advisor_models_gpu.py OUT_DIR [JOB ...]

Runs on a CUDA machine (H100, torch 2.11) and writes into OUT_DIR, per job, the
Exploration as ``advisor_model_<job>.json`` (``explore(measure=True)``, then
``compiler.remedy.try_fixes`` on the GPU, so the tried fix's before/after is measured
there), plus ``advisor_models_gpu_facts.json``: torch's own facts per job, measured apart
from the explorer (synchronised wall time of eager and compiled calls, of the compiled
call under ``torch.no_grad()``, Dynamo's graph-break counter and Inductor's CUDA graph
recording log lines), from which the expected diagnosis is written. Jobs (all by default):

- ``resnet18_grad_ro``: timm resnet18 inference (no weights), ``mode="reduce-overhead"``
  with grad enabled: CUDA graphs re-record, compiled slower than eager.
- ``resnet18_nograd_ro``: the same under ``torch.no_grad()``: the clean counterpart.
- ``gpt2_train_step``: a GPT-2 (2 layers, from a config) training step under Inductor:
  transformers' ``logger.warning_once`` breaks the graph.
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_recording import ROOT, write_json, write_recording

import compiler
from compiler.remedy.tried import try_fixes

DEV = "cuda" if torch.cuda.is_available() else "cpu"
# a smoke run on a CPU: ADVISOR_SMOKE_BACKEND=aot_eager ... gpt2_train_step
SMOKE_BACKEND = os.environ.get("ADVISOR_SMOKE_BACKEND")


def _resnet18() -> torch.nn.Module:
    try:
        import timm

        return timm.create_model("resnet18", pretrained=False).to(DEV).eval()
    except ImportError:  # torchvision's is the same network
        import torchvision

        return torchvision.models.resnet18(weights=None).to(DEV).eval()


def resnet18_grad_ro() -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    model = _resnet18()
    x = torch.randn(8, 3, 224, 224, device=DEV)
    return model, (x,), {"mode": "reduce-overhead"}


def resnet18_nograd_ro() -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    model = _resnet18()
    x = torch.randn(8, 3, 224, 224, device=DEV)

    def infer(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    return infer, (x,), {"mode": "reduce-overhead"}


def gpt2_train_step() -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(cfg).to(DEV)
    x = torch.randint(0, 512, (2, 16), device=DEV)

    def step(x: torch.Tensor) -> torch.Tensor:
        loss = model(x, labels=x).loss
        loss.backward()
        return loss

    return step, (x,), {}


JOBS = {f.__name__: f for f in (resnet18_grad_ro, resnet18_nograd_ro, gpt2_train_step)}


def _sync() -> None:
    if DEV == "cuda":
        torch.cuda.synchronize()


def _ms(fn: Callable[[], Any], runs: int = 50) -> list[float]:
    for _ in range(5):
        fn()
    times = []
    for _ in range(runs):
        _sync()
        t0 = time.perf_counter()
        fn()
        _sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


# torch's artifact loggers (getArtifactLogger: "<module>.__<artifact>"), which
# torch._logging.set_logs turns on; the handler reads them directly
_ARTIFACT_LOGGERS = (
    "torch._inductor.cudagraph_trees.__cudagraphs",
    "torch._dynamo.__graph_breaks",
    "torch._dynamo.__recompiles",
)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage()[:300])


def facts(
    target: Callable[..., Any], args: tuple[Any, ...], kw: dict[str, Any], inference: bool
) -> dict[str, Any]:
    """Torch's own facts, measured without the explorer."""
    from torch._dynamo.utils import counters

    torch.compiler.reset()
    counters.clear()
    torch._logging.set_logs(cudagraphs=True, graph_breaks=True, recompiles=True)
    handler = _Lines()
    for name in _ARTIFACT_LOGGERS:
        logging.getLogger(name).addHandler(handler)
    compiled = torch.compile(target, **kw)
    eager = _ms(lambda: target(*args))
    comp = _ms(lambda: compiled(*args))
    torch.compiler.reset()
    compiled_ng = torch.compile(target, **kw)

    def no_grad() -> Any:
        with torch.no_grad():
            return compiled_ng(*args)

    ng = _ms(no_grad) if inference else [float("nan")]
    for name in _ARTIFACT_LOGGERS:
        logging.getLogger(name).removeHandler(handler)
    torch._logging.set_logs()
    torch.compiler.reset()
    return {
        "eager_ms": statistics.median(eager),
        "compiled_ms": statistics.median(comp),
        "compiled_mean_ms": statistics.fmean(comp),
        "compiled_spread_ms": [min(comp), max(comp)],
        "compiled_no_grad_ms": statistics.median(ng),
        "graph_breaks": dict(counters["graph_break"]),
        "unique_graphs": counters["stats"]["unique_graphs"],
        "recording_lines": sum("Recording function" in s for s in handler.lines),
        "log_tail": handler.lines[-40:],
    }


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/advisor_corpus/recordings"
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(JOBS)
    all_facts: dict[str, Any] = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if DEV == "cuda" else "cpu",
    }
    for name in names:
        t0 = time.perf_counter()
        target, args, kw = JOBS[name]()
        if SMOKE_BACKEND:
            kw = {"backend": SMOKE_BACKEND}
        exp = compiler.explore(target, *args, measure=True, triton_stages=False, **kw)
        exp = try_fixes(exp, target, *args, runs=50)
        write_recording(out / f"advisor_model_{name}.json", exp)
        print(f"{name}: {len(exp.compiles)} compiles, {time.perf_counter() - t0:.1f} s")
        for f in exp.findings():
            print(f"  {f.severity}:{f.kind}: {f.title}\n    impact: {f.impact}")
            if f.tried or f.tried_note:
                print(f"    tried: {f.tried}")
        print(f"  call_timing: {exp.call_timing}")
        all_facts[name] = facts(target, args, kw, inference=name != "gpt2_train_step")
        print(f"  facts: { {k: v for k, v in all_facts[name].items() if k != 'log_tail'} }")
        write_json(out / "advisor_models_gpu_facts.json", all_facts)


if __name__ == "__main__":
    main()
