"""Multi-GPU recordings for issue 36: `python3 scripts/record_ranks_gpu.py OUT [--nproc 2]`.

A GPT-2 training step (a small config built from ``transformers``' ``GPT2Config``, no
weights) under ``torch.compile`` on ``--nproc`` ranks, each rank its own process and GPU
(NCCL), every rank writing ``TORCH_TRACE`` into one folder per run:

- ``<strategy>_same``: every rank runs the same batches, caches cold on every rank;
- ``<strategy>_plant``: rank 1's last batch is twice as long (32 -> 64 tokens), so rank 1
  alone compiles the step again;
- ``<strategy>_skew``: rank 0's Inductor and Triton caches were filled by an untraced run
  of the same program just before, every other rank's are cold: rank 0 hits the FX-graph
  and AOTAutograd caches, the others miss and compile for longer while rank 0 waits in its
  first collective.

``<strategy>`` is ``ddp`` (``torch.compile(DDP(model))``) and ``fsdp`` (FSDP2,
``fully_shard`` on every block and the model, then ``torch.compile``). Ranks are started
the way torchrun starts them (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``, env:// rendezvous) but by this script, so each rank gets cache folders of
its own (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``). Logs are compressed with
xz (``compiler.load_trace`` reads ``.log.xz``). ``OUT/summary.json`` holds each rank's wall
time per step and the run's command. On a CPU: ``--backend gloo --device cpu``
(``--compile-backend aot_eager`` to keep it short; no cache then, so skew shows nothing).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_recording import write_json

RUNS = ("same", "plant", "skew")
STRATEGIES = ("ddp", "fsdp")
SEQ = 32  # tokens per row; the planted batch has 2 * SEQ


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------- one rank (a process)
def worker(args: argparse.Namespace) -> None:
    """One rank: a few compiled GPT-2 training steps; its step times as one JSON line."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    from transformers import GPT2Config, GPT2LMHeadModel

    rank = int(os.environ["RANK"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if args.device == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    dist.init_process_group(args.backend, timeout=timedelta(seconds=args.pg_timeout))
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2, n_embd=128, n_head=4, vocab_size=1024, n_positions=2 * SEQ,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    model = GPT2LMHeadModel(config).to(device)
    if args.strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        wrapped = DistributedDataParallel(
            model, device_ids=[local] if args.device == "cuda" else None
        )
    else:
        from torch.distributed.fsdp import fully_shard

        for block in model.transformer.h:
            fully_shard(block)
        wrapped = fully_shard(model)
    step = torch.compile(wrapped, backend=args.compile_backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for i in range(args.steps):
        seq = 2 * SEQ if args.plant and rank == 1 and i == args.steps - 1 else SEQ
        batch = torch.Generator().manual_seed(i)  # the same batches on every rank
        ids = torch.randint(0, config.vocab_size, (4, seq), generator=batch).to(device)
        t0 = time.perf_counter()
        loss = step(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        if args.device == "cuda":
            torch.cuda.synchronize()
        times.append(round(time.perf_counter() - t0, 3))
    dist.barrier()
    print("RANK_TIMES " + json.dumps({"rank": rank, "step_seconds": times}), flush=True)
    dist.destroy_process_group()


# ---------------------------------------------------------------- the launcher
def launch(
    args: argparse.Namespace, strategy: str, trace: Path | None, caches: list[Path], plant: bool
) -> dict:
    """Start ``args.nproc`` ranks of one run; wait for all; what each printed."""
    port = str(_free_port())
    procs = []
    for rank in range(args.nproc):
        env = dict(
            os.environ, RANK=str(rank), WORLD_SIZE=str(args.nproc), LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(args.nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
            TORCHINDUCTOR_CACHE_DIR=str(caches[rank] / "inductor"),
            TRITON_CACHE_DIR=str(caches[rank] / "triton"),
        )  # fmt: skip
        env.pop("TORCH_TRACE", None)
        if trace is not None:
            env["TORCH_TRACE"] = str(trace)
        command = [
            sys.executable, __file__, "--worker", "--strategy", strategy,
            "--backend", args.backend, "--device", args.device,
            "--compile-backend", args.compile_backend, "--steps", str(args.steps),
            "--pg-timeout", str(args.pg_timeout), *(["--plant"] if plant else []),
        ]  # fmt: skip
        procs.append(
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        )  # fmt: skip
    t0 = time.perf_counter()
    outs = [p.communicate(timeout=args.run_timeout)[0] for p in procs]
    wall = round(time.perf_counter() - t0, 1)
    ranks = []
    for rank, (p, out) in enumerate(zip(procs, outs, strict=True)):
        line = next((x for x in out.splitlines() if x.startswith("RANK_TIMES ")), "")
        ranks.append(
            {"rank": rank, "returncode": p.returncode,
             "step_seconds": json.loads(line[11:])["step_seconds"] if line else None,
             "tail": "" if p.returncode == 0 else out[-3000:]}
        )  # fmt: skip
        if p.returncode:
            print(f"rank {rank} of {strategy} failed:\n{out[-3000:]}", file=sys.stderr)
    return {"wall_seconds": wall, "ranks": ranks}


def _compress_logs(folder: Path) -> None:
    """Each rank's log as ``dedicated_log_torch_trace_rank_<N>.log.xz``: xz keeps a run's
    repeated graphs and kernels about 5x smaller than gzip (0.1 MB against 0.6 MB a rank
    for the DDP run on 2 x H200)."""
    for log in sorted(folder.glob("*.log")):
        name = re.sub(r"(rank_\d+)_.*", r"\1", log.name)
        with log.open("rb") as src, lzma.open(folder / f"{name}.log.xz", "wb",
                                               preset=9 | lzma.PRESET_EXTREME) as dst:
            shutil.copyfileobj(src, dst)
        log.unlink()


def record(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ranks_caches_"))
    summary: dict = {"argv": sys.argv, "nproc": args.nproc, "runs": {}}
    try:
        import torch

        summary["torch"] = torch.__version__
        summary["gpus"] = (
            [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            if args.device == "cuda" else []
        )  # fmt: skip
        for strategy in args.strategies:
            for run in args.runs:
                name = f"{strategy}_{run}"
                fresh = [scratch / name / f"rank{r}" for r in range(args.nproc)]
                info: dict = {}
                if run == "skew":
                    # the untraced run that fills rank 0's caches; the others' are thrown away
                    warm = [fresh[0]] + [scratch / name / f"warm{r}" for r in range(1, args.nproc)]
                    info["warm_run"] = launch(args, strategy, None, warm, plant=False)
                trace = out / name
                shutil.rmtree(trace, ignore_errors=True)
                print(f"{name}: {args.nproc} ranks ...", file=sys.stderr, flush=True)
                info.update(launch(args, strategy, trace, fresh, plant=run == "plant"))
                _compress_logs(trace)
                info["bytes"] = sum(f.stat().st_size for f in trace.glob("*"))
                summary["runs"][name] = info
                print(f"{name}: {json.dumps(info)[:400]}", file=sys.stderr, flush=True)
                write_json(out / "summary.json", summary)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="ranks_gpu_out")
    parser.add_argument("--nproc", type=int, default=2, help="ranks, one GPU each (2 or 4)")
    parser.add_argument("--backend", default="nccl", help="process-group backend")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--compile-backend", default="inductor")
    parser.add_argument("--strategies", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    parser.add_argument("--runs", nargs="+", choices=RUNS, default=list(RUNS))
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--pg-timeout", type=float, default=600.0)
    parser.add_argument("--run-timeout", type=float, default=300.0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--strategy", choices=STRATEGIES, help=argparse.SUPPRESS)
    parser.add_argument("--plant", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
    else:
        record(args)


if __name__ == "__main__":
    main()
