"""GPU recordings of compile time and caches (issue 35).

``python3 scripts/record_compile_gpu.py OUT`` (``--cpu``: a dry run on the CPU).

Compiles a 2-layer GPT-2 (transformers config, no weights: width 128, 4 heads, vocabulary
1000, batch 2 x 64, inference) in fresh processes that share one private Inductor and
Triton cache directory, created empty for this run, so the first process is truly cold:

- ``compile_cold``: caches on (``keep_caches=True``), empty caches: every kernel is built,
  every reduction autotuned.
- ``compile_warm``: caches on again: the FX graph and AOTAutograd caches hit, kernels come
  back from the FX graph entry's Triton bundle.
- ``compile_nofx``: the FX graph and AOTAutograd caches off (capture's default) but
  Triton's kernel cache and the autotune cache warm: every kernel is generated again and
  Triton's and the autotune cache's own lookups decide.
- ``compile_autotune``: ``mode="max-autotune-no-cudagraphs"``, caches on: GEMM template
  autotuning.

Each writes ``<job>.json.gz`` (the Exploration, compact JSON), ``<job>.trace.tar.gz``
(torch's own ``TORCH_TRACE`` log of that process: the facts the replay tests check
against) with its ``compilation_metrics`` records in ``<job>.metrics.json``, and
``compile_summary.json`` holds each job's seconds and torch's counters.
A job that fails writes ``<job>.error.txt`` and the others still run. Without CUDA the
script stops (exit status 2); ``--cpu`` runs the cold, warm and no-FX jobs on the CPU.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from gpu_recording import ROOT, write_failure, write_json, write_recording

# the most wanted first: a job that would not finish in the time left is not started
JOBS = ("compile_cold", "compile_warm", "compile_autotune", "compile_nofx")
CPU_JOBS = ("compile_cold", "compile_warm", "compile_nofx")
_JOB_LIMIT_S = 120
_TOTAL_S = 200


def _model(device: str) -> tuple[Any, Any]:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128)
    model = GPT2LMHeadModel(cfg).to(device).eval()
    ids = torch.randint(0, 1000, (2, 64), device=device)
    return model, ids


def child(job: str, out: Path, device: str) -> int:
    """One job in this (fresh) process: explore the model and save what torch said."""
    import torch

    import compiler
    from compiler._compat import counters_snapshot

    model, ids = _model(device)
    before = counters_snapshot()
    t0 = time.perf_counter()
    with torch.no_grad():
        exp = compiler.explore(
            model,
            ids,
            mode="max-autotune-no-cudagraphs" if job == "compile_autotune" else None,
            keep_caches=job != "compile_nofx",
            triton_stages=False,
            decompile=False,
        )
    seconds = time.perf_counter() - t0
    after = counters_snapshot()
    write_recording(out / f"{job}.json.gz", exp, level=9)
    facts = {
        "seconds": round(seconds, 2),
        "compiles": len(exp.compiles),
        "counters": {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k)},
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
    }
    write_json(out / f"{job}.facts.json", facts)
    return 0


def _metrics(folder: Path) -> list[dict[str, Any]]:
    """torch's own ``compilation_metrics`` records of a ``TORCH_TRACE`` folder, verbatim."""
    out = []
    for f in sorted(folder.rglob("*.log")):
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("\t") or '"compilation_metrics"' not in line[:300]:
                continue
            try:
                head = json.loads(line[line.index("{") :])
            except ValueError:
                continue
            if isinstance(head.get("compilation_metrics"), dict):
                out.append(head["compilation_metrics"])
    return out


def _tar(folder: Path, dest: Path) -> None:
    with tarfile.open(dest, "w:gz", compresslevel=9) as tar:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                tar.add(f, arcname=f.relative_to(folder).as_posix())


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 1
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    if "--job" in sys.argv:
        job = sys.argv[sys.argv.index("--job") + 1]
        return child(job, out, "cpu" if "--cpu" in sys.argv else "cuda")
    import torch

    cpu = "--cpu" in sys.argv
    if not cpu and not torch.cuda.is_available():
        print("no CUDA device: run with --cpu for a dry run on the CPU")
        return 2
    caches = Path(tempfile.mkdtemp(prefix="compile_caches_"))
    env = dict(os.environ)
    # a private, empty cache for this run: the cold process is cold whatever ran before
    env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
    env["TRITON_CACHE_DIR"] = str(caches / "triton")
    summary: dict[str, Any] = {"torch": torch.__version__, "seconds": {}}
    start = time.perf_counter()
    for job in CPU_JOBS if cpu else JOBS:
        trace = caches / f"trace_{job}"
        cmd = [sys.executable, str(Path(__file__).resolve()), str(out), "--job", job]
        cmd += ["--cpu"] if cpu else []
        t0 = time.perf_counter()
        # max-autotune benchmarks every GEMM shape's candidates: the one job that may run
        # long, kept shorter so the no-FX job after it still fits
        most = 90 if job == "compile_autotune" else _JOB_LIMIT_S
        limit = min(most, _TOTAL_S - (t0 - start))
        if limit < 30:
            print(f"{job}: not started, {t0 - start:.0f} s spent", flush=True)
            break
        try:
            done = subprocess.run(
                cmd, env={**env, "TORCH_TRACE": str(trace)}, timeout=limit,
                capture_output=True, text=True, cwd=ROOT,
            )  # fmt: skip
            if done.returncode != 0:
                write_failure(out, job, done.stdout[-20000:] + done.stderr[-20000:])
            status = "ok" if done.returncode == 0 else "FAILED (see .error.txt)"
        except subprocess.TimeoutExpired:
            write_failure(out, job, f"over {limit:.0f} s")
            status = "TIMED OUT"
        except Exception:
            write_failure(out, job)
            status = "FAILED"
        if trace.exists():
            _tar(trace, out / f"{job}.trace.tar.gz")
            write_json(out / f"{job}.metrics.json", _metrics(trace))
        seconds = time.perf_counter() - t0
        summary["seconds"][job] = round(seconds, 1)
        facts = out / f"{job}.facts.json"
        if facts.exists():
            summary[job] = json.loads(facts.read_text())
        print(f"{job}: {status}, {seconds:.1f} s", flush=True)
    write_json(out / "compile_summary.json", summary)
    shutil.rmtree(caches, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
