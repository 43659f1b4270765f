"""GPU recordings for issue 35 (CUDA graphs and memory): ``python3 scripts/record_pain_gpu.py OUT``.

Writes into OUT (gzip-compressed, small):

- ``pain_cpu_op.json.gz``: ``mode="reduce-overhead"`` on a model with a CPU op inside
  (``z = y.cpu() + 1``): Inductor partitions the graph or skips CUDA graphs, and says why.
- ``pain_mutated_input.json.gz``: reduce-overhead on a function that mutates its input
  (``buf.add_(1)``): "skipping cudagraphs due to mutated inputs".
- ``pain_cycling.json.gz``: reduce-overhead, ``dynamic=True``, batch sizes cycling
  8, 16, 4, 8, 16, 4, 8, 16 under ``no_grad``: one CUDA graph tree per distinct size
  ("Recording cudagraph tree for symint key 8"), each call's time and the CUDA graph
  pool's bytes after it.
- ``pain_cycling_grad.json.gz``: the same with grad on, each step a training step as a
  user writes it: gradients set to None, ``torch.compiler.cudagraph_mark_step_begin()``,
  a forward and a backward.
- ``pain_cycling_grad_plain.json.gz``: the same loop without ``cudagraph_mark_step_begin``
  (torch tells steps apart by itself).
- ``pain_cycling_grad_pitfall.json.gz``: the loop that failed before: steps marked, but
  the gradients never cleared, so each backward accumulates into ``.grad`` tensors a CUDA
  graph wrote into its pool.
- Where a run raises (torch's "accessing tensor output of CUDAGraphs that has been
  overwritten by a subsequent run"), its recording is still written, with what was
  recorded before the error and torch's whole error text among its errors: the pitfall
  the advisor explains.
- ``pain_gpt2_step.json.gz``: a 4-layer GPT-2 training step (width 512, 8 heads,
  vocabulary 5000, batch 8 x 256; transformers config, no weights): the compile's AOT
  graphs (saved for backward), and eager against compiled peak memory, forward and
  backward apart, measured by ``compiler.measure.memory_peak.peak_memory``.
- ``pain_logs.jsonl.gz``: every record of torch's ``cudagraphs`` and ``perf_hints``
  artifact loggers, tagged with the job that made it, as torch formatted it (its own
  compile ids): the facts the replay tests check the recordings against.
- ``pain_summary.json``: per job the seconds it took, the measured memory and call times.

A job that fails writes ``<job>.error.txt`` and the others still run. Without CUDA the
script says so and stops (exit status 2); with ``--cpu`` it then runs every job on the
CPU as a dry run (no CUDA graphs, no memory table). ``--only=pain_cycling,pain_cpu_op``
runs those jobs only.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_recording import write_failure, write_json

import compiler
from compiler.measure.memory_peak import as_counters, graph_pool_bytes, peak_memory
from compiler.model import StageError

JOB = {"name": ""}
DEV = "cuda"
SUMMARY: dict[str, Any] = {"torch": torch.__version__}


class LogSink(logging.Handler):
    """Keeps the records of torch's ``cudagraphs`` and ``perf_hints`` artifact loggers."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[dict[str, Any]] = []
        self.last: logging.LogRecord | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if "__cudagraphs" not in record.name and "__perf_hints" not in record.name:
            return
        if record is self.last:
            return  # the same record seen by a second handler up the hierarchy
        # held, so that no later record can take its id (comparing ids dropped records)
        self.last = record
        try:
            text = record.getMessage()
        except Exception as exc:
            text = f"<unformattable: {exc}> {record.msg}"
        self.records.append(
            {
                "job": JOB["name"],
                "logger": record.name,
                "level": record.levelname,
                "time": record.created,
                "where": f"{record.pathname}:{record.lineno}",
                "message": text[:20000],
            }
        )


class CpuOp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x).relu()
        z = y.cpu() + 1
        return z.to(x.device).sum(dim=1) * 2


def mutated(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
    buf.add_(1)
    return (x * buf).sin()


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(64, 256)
        self.b = torch.nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x).relu())


SIZES = (8, 16, 4, 8, 16, 4, 8, 16)


def _sync() -> None:
    if DEV == "cuda":
        torch.cuda.synchronize()


def _ms(fn: Callable[[], Any]) -> float:
    _sync()
    t0 = time.perf_counter()
    fn()
    _sync()
    return (time.perf_counter() - t0) * 1000


def cycling(name: str, grad: bool, mark_step: bool, zero_grad: bool = True) -> Callable[[], Any]:
    """A loop over ``SIZES`` of one reduce-overhead model, each call timed with the CUDA
    graph pool's bytes after it (kept in ``SUMMARY[<name>_calls]``). With grad on, each
    step is a forward and a backward; ``zero_grad`` sets the gradients to None first, as
    a training step's ``optimizer.zero_grad()`` does: without it the backward accumulates
    into ``.grad`` tensors an earlier CUDA graph replay wrote into its pool (the pitfall
    torch reports as "accessing tensor output of CUDAGraphs that has been overwritten")."""
    model = Mlp().to(DEV)
    xs = {b: torch.randn(b, 64, device=DEV) for b in set(SIZES)}
    calls: list[dict[str, Any]] = []
    SUMMARY[f"{name}_calls"] = calls

    def run() -> None:
        calls.clear()
        compiled = torch.compile(model, mode="reduce-overhead", dynamic=True)
        for b in SIZES:
            if grad:

                def step(b: int = b) -> None:
                    if zero_grad:
                        model.zero_grad(set_to_none=True)
                    if mark_step:
                        # a new step: outputs of the last one may be overwritten
                        torch.compiler.cudagraph_mark_step_begin()
                    compiled(xs[b]).sum().backward()
            else:

                def step(b: int = b) -> None:
                    with torch.no_grad():
                        compiled(xs[b])

            ms = _ms(step)
            pool = graph_pool_bytes() if DEV == "cuda" else 0
            calls.append({"batch": b, "ms": round(ms, 3), "pool_bytes": pool})

    return run


def cycling_job(
    name: str, grad: bool, mark_step: bool, zero_grad: bool = True
) -> Callable[[], Any]:
    def job() -> Any:
        # a fresh start: Dynamo's caches and torch's CUDA graph trees of earlier jobs go
        torch._dynamo.reset()
        run = cycling(name, grad, mark_step, zero_grad)
        return compiler.explore(run, wrap=False, decompile=False)

    return job


def gpt2_step() -> tuple[Any, Callable[[], Any], Any]:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=4, n_embd=512, n_head=8, vocab_size=5000, n_positions=256,
        bos_token_id=0, eos_token_id=0,
    )
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(DEV).train()
    ids = torch.randint(0, 5000, (8, 256) if DEV == "cuda" else (2, 32), device=DEV)
    return model, (lambda m: m(input_ids=ids, labels=ids).loss), ids


def gpt2_job() -> Any:
    model, loss_of, ids = gpt2_step()

    def step() -> None:
        loss_of(model).backward()

    exp = compiler.explore(
        torch.compile(model), input_ids=ids, labels=ids, triton_stages=False, decompile=False
    )
    if DEV != "cuda":
        return exp
    # The table: eager against compiled, one warm call first, forward and backward apart.
    rows = []
    peaks = []
    for label, m in (("eager", model), ("compiled", torch.compile(model))):
        model.zero_grad(set_to_none=True)
        p = peak_memory(
            lambda m=m: loss_of(m),
            lambda loss: loss.backward(),
            label=label,
        )
        model.zero_grad(set_to_none=True)
        rows.append(dataclasses.asdict(p))
        peaks.append(p)
    SUMMARY["gpt2_peak_memory"] = rows
    del step
    return dataclasses.replace(exp, counters={**exp.counters, **as_counters(peaks)})


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python3 scripts/record_pain_gpu.py OUT_DIR", file=sys.stderr)
        return 1
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    global DEV
    if not torch.cuda.is_available():
        msg = "record_pain_gpu.py records CUDA graphs and CUDA memory: it needs a CUDA device."
        print(msg, file=sys.stderr)
        (out / "NO_CUDA.txt").write_text(msg + "\n")
        if "--cpu" not in sys.argv:
            return 2
        # A dry run of every job on the CPU (no CUDA graphs, no memory table), to test it.
        DEV = "cpu"
    SUMMARY["device"] = torch.cuda.get_device_name(0) if DEV == "cuda" else "cpu"
    sink = LogSink()
    torch._logging.set_logs(cudagraphs=True, perf_hints=True)
    # torch puts its handler on each top logger it configures ("torch", "torch._inductor",
    # ...) and stops propagation there: listen beside each of them.
    for lname, lg in list(logging.root.manager.loggerDict.items()):
        if isinstance(lg, logging.Logger) and lname.startswith("torch") and lg.handlers:
            lg.addHandler(sink)
    dev = DEV
    opts: dict[str, Any] = {"measure": True, "triton_stages": False, "decompile": False}
    jobs: dict[str, Callable[[], Any]] = {
        "pain_cpu_op": lambda: compiler.explore(
            CpuOp().to(dev), torch.randn(32, 64, device=dev), mode="reduce-overhead", **opts
        ),
        "pain_mutated_input": lambda: compiler.explore(
            mutated,
            torch.randn(4096, device=dev),
            torch.zeros(4096, device=dev),
            mode="reduce-overhead",
            **opts,
        ),
        "pain_cycling": cycling_job("cycling", grad=False, mark_step=False),
        "pain_cycling_grad": cycling_job("cycling_grad", grad=True, mark_step=True),
        "pain_cycling_grad_plain": cycling_job("cycling_grad_plain", grad=True, mark_step=False),
        # the loop that failed on the H100 (no zero_grad): the pitfall, recorded
        "pain_cycling_grad_pitfall": cycling_job(
            "cycling_grad_pitfall", grad=True, mark_step=True, zero_grad=False
        ),
        "pain_gpt2_step": gpt2_job,
    }
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")), [])
    start = time.perf_counter()
    for name, job in jobs.items():
        if only and name not in only:
            continue
        JOB["name"] = name
        t0 = time.perf_counter()
        try:
            try:
                exp = job()
                status = f"{len(exp.compiles)} compiles"
            except compiler.ExploreError as exc:
                if exc.exploration is None:
                    raise
                # what was recorded before the error, with torch's whole error text
                # (its advice included): a pitfall is a recording too
                write_failure(out, name)
                said = str(exc.__cause__ or exc)
                exp = dataclasses.replace(
                    exc.exploration,
                    errors=(*exc.exploration.errors, StageError(stage="run", message=said)),
                )
                status = f"raised ({said[:100]}), {len(exp.compiles)} compiles recorded"
            # each call the job timed (the capture records torch's CUDA graph messages
            # per compile itself)
            calls = [
                f"call: batch {c['batch']}, {c['ms']} ms, pool {c['pool_bytes']} bytes"
                for c in SUMMARY.get(name.replace("pain_", "") + "_calls", [])
            ]
            exp = dataclasses.replace(exp, notes=(*exp.notes, *calls))
            data = exp.to_json().encode()
            (out / f"{name}.json.gz").write_bytes(gzip.compress(data, 9))
        except Exception:
            write_failure(out, name)
            status = "FAILED (see .error.txt)"
        seconds = time.perf_counter() - t0
        SUMMARY.setdefault("seconds", {})[name] = round(seconds, 1)
        print(f"{name}: {status}, {seconds:.1f} s", flush=True)
        if time.perf_counter() - start > 200:
            print("stopping early: over 200 s", flush=True)
            break
    lines = "\n".join(json.dumps(r) for r in sink.records).encode()
    (out / "pain_logs.jsonl.gz").write_bytes(gzip.compress(lines, 9))
    write_json(out / "pain_summary.json", SUMMARY)
    print(json.dumps(SUMMARY.get("gpt2_peak_memory"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
