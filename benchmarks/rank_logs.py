"""Make a production-size multi-rank TORCH_TRACE directory from real compiles.

Each rank is a fresh Python process that joins a process group as rank ``r`` of
``--ranks`` (torch's ``fake`` backend: the process believes it is one of N ranks, so torch
names its log ``..._rank_<r>_...`` and stamps ``"rank": r`` on every event, as in a real
run) and compiles a GPT-2 training step (built from a ``transformers`` config, no
weights) with Inductor, ``--rounds`` times: round ``k`` builds the model with a different
depth, and each rank uses its own sequence length, so no two compiles are the same
graph. Ranks run one after another (one CPU process at a time); together they are a real
multi-rank run repeated with different shapes per rank.

Every compile logs all its stages (Inductor's FX and AOT caches off, provenance on, as
``benchmarks/model_traces.py`` does). With Inductor, ``dynamic=True`` makes the C++ kernels
size-generic, so the C++ builds of rank 0 are reused by the later ranks from the on-disk
kernel cache; every rank still traces, lowers and generates its code in full.

Run: ``python benchmarks/rank_logs.py --out /work/traces-ranks/gpt2_8ranks --ranks 8
--rounds 2 --jobs 2`` (Inductor: about 35 MB a rank and round, minutes each on a busy
2-core CPU), or ``--backend aot_eager --depth 24`` (Dynamo and AOTAutograd only, no C++
builds: 7 MB or more a rank and round, several times faster). The 8-rank directory over
500 MB of issue 25 came from a 16-core host, every rank at once: ``--backend aot_eager
--depth 24 --rounds 11 --jobs 8 --budget 500``. Do not commit the output.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def child(rank: int, world: int, rounds: int, depth: int, backend: str, budget: float) -> None:
    """One rank: join the fake process group, then compile the step ``rounds`` times, or
    fewer where the next round would end past ``budget`` seconds (0: no budget)."""
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from transformers import GPT2Config, GPT2LMHeadModel

    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())
    # each round's model recompiles the same frames: past torch's default of 8 a frame
    # falls back to eager and logs nothing more, so a long job raises the limit
    torch._dynamo.config.recompile_limit = rounds + 8
    seq = 16 + 8 * rank  # each rank its own shape
    start = last = time.perf_counter()
    for k in range(rounds):
        now = time.perf_counter()
        # a round takes a little longer than the one before (two layers more): stop
        # before one that would not end in time, so every log holds whole rounds
        if budget and k and now + 1.2 * (now - last) > start + budget:
            print(f"rank {rank}: {k} rounds within {budget:.0f} s", flush=True)
            break
        last = now
        torch.manual_seed(k)
        config = GPT2Config(
            n_layer=depth + 2 * k, n_head=4, n_embd=128, vocab_size=512, n_positions=256,
            bos_token_id=0, eos_token_id=0,
        )  # fmt: skip
        model = GPT2LMHeadModel(config).train()
        # Inductor: shape-generic kernels, so later ranks reuse rank 0's C++ builds; other
        # backends: static shapes, so the graphs carry each rank's sizes and the log is
        # mostly graphs (dynamic shapes fill it with symbol-creation stacks instead)
        forward = torch.compile(model, backend=backend, dynamic=backend == "inductor")
        ids = torch.randint(0, config.vocab_size, (2, seq))
        # a new model each round: its frames recompile under new compile ids (0/1, 0/2,
        # ...), as a long job's do; no dynamo reset, which would reuse the ids
        forward(input_ids=ids, labels=ids).loss.backward()
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=1, help="ranks compiled at the same time")
    parser.add_argument("--depth", type=int, default=10, help="GPT-2 layers in round 0")
    parser.add_argument(
        "--backend", default="inductor", help="inductor, or aot_eager (no C++ builds: faster)"
    )
    parser.add_argument(
        "--budget", type=float, default=0, help="seconds a rank may take (0: all --rounds)"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.ranks, args.rounds, args.depth, args.backend, args.budget)
        return
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    cache = out.parent / (out.name + ".inductor-cache")
    env = dict(
        os.environ,
        TORCH_TRACE=str(out),
        INDUCTOR_PROVENANCE="1",
        TORCHINDUCTOR_FX_GRAPH_CACHE="0",
        TORCHINDUCTOR_AUTOGRAD_CACHE="0",
        TORCHINDUCTOR_CACHE_DIR=str(cache),
    )
    todo = [r for r in range(args.ranks) if not any(out.glob(f"*rank_{r}_*.log"))]
    for rank in sorted(set(range(args.ranks)) - set(todo)):
        print(f"rank {rank}: already there, kept", flush=True)
    start = time.perf_counter()
    running: list[tuple[int, subprocess.Popen[bytes]]] = []
    while todo or running:
        # up to --jobs ranks at a time, each its own process
        while todo and len(running) < args.jobs:
            rank = todo.pop(0)
            command = [
                sys.executable, __file__, "--child", str(rank), "--ranks", str(args.ranks),
                "--rounds", str(args.rounds), "--depth", str(args.depth), "--out", str(out),
                "--backend", args.backend, "--budget", str(args.budget),
            ]  # fmt: skip
            running.append((rank, subprocess.Popen(command, env=env)))
        rank, proc = running.pop(0)
        if proc.wait() != 0:
            raise SystemExit(f"rank {rank} failed with status {proc.returncode}")
        size = sum(p.stat().st_size for p in out.glob(f"*rank_{rank}_*.log"))
        print(
            f"rank {rank}: done at {time.perf_counter() - start:.0f} s, {size / 1e6:.1f} MB",
            flush=True,
        )
    total = sum(p.stat().st_size for p in out.glob("*.log"))
    print(f"{out}: {total / 1e6:.0f} MB in {args.ranks} ranks")


if __name__ == "__main__":
    main()
