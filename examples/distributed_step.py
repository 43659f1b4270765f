"""A compiled training step on several ranks (DDP or FSDP2), on the CPU with gloo.

Each rank runs a small MLP's training step under ``torch.compile`` for two batches. With
``--plant``, only rank 1's second batch has a different size, so rank 1 compiles the step
again (compile ``0/1``) and rank 0 does not: the divergence that hangs a collective in a
real run. Run it under ``TORCH_TRACE`` and open the directory in the explorer:

    TORCH_TRACE=/tmp/ddp_trace python examples/distributed_step.py --strategy ddp --plant
    python -c "import compiler as c; print(c.divergence(c.load_trace('/tmp/ddp_trace')).summary)"

or let ``python -m compiler report examples/distributed_step.py --nproc 2`` launch it.
Launched by ``torchrun`` (``RANK``/``WORLD_SIZE`` set) it runs the rank it was given;
run plainly, it starts ``--nproc`` ranks itself with ``torch.multiprocessing``.
"""

from __future__ import annotations

import argparse
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MLP(nn.Module):
    """The model: its forward is user code, so Dynamo compiles it (torch.nn's own
    Sequential would be skipped as a torch file when DDP calls it)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def _model(strategy: str) -> nn.Module:
    torch.manual_seed(0)
    model = MLP()
    if strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)
    from torch.distributed.fsdp import fully_shard

    fully_shard(model.fc1)
    fully_shard(model.fc2)
    return fully_shard(model)


def reduce_sizes(rank: int, world: int, args: argparse.Namespace) -> None:
    """A compiled function that all-reduces a tensor (functional collectives, traced into
    the graph). With ``args.plant`` rank 1's tensor is larger: the collectives differ in
    size across ranks. Each rank reduces within a group of its own, so the run completes
    and the trace shows what a real group would have hung on."""
    import torch.distributed._functional_collectives as funcol

    groups = [dist.new_group([r]) for r in range(world)]

    def step(x: torch.Tensor) -> torch.Tensor:
        return funcol.all_reduce(x * 2, "sum", groups[rank]) + 1

    size = 8 + (4 if args.plant and rank == 1 else 0)
    torch.compile(step, backend=args.backend, dynamic=False)(torch.randn(size, 16))


def train(rank: int, world: int, args: argparse.Namespace) -> None:
    """Run ``rank``'s part (training steps, or the all-reduce) in a gloo group."""
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        if args.strategy == "allreduce":
            reduce_sizes(rank, world, args)
        else:
            _steps(rank, args)
        # every rank arrives before any tears its group down: a rank that destroys its
        # group while a peer still finishes the last collective can abort at exit (gloo)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _steps(rank: int, args: argparse.Namespace) -> None:
    """The training steps on ``rank``: two by default, rank 1's second batch larger with
    ``args.plant``."""
    model = _model(args.strategy)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # dynamic=False: a new batch size recompiles instead of going symbolic, as a
    # real run with mark_static or fixed-size buckets does
    step = torch.compile(model, backend=args.backend, dynamic=False)
    for batch in range(args.steps):
        size = 8 + (4 if args.plant and rank == 1 and batch >= 1 else 0)
        x = torch.randn(size, 16)
        loss = step(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", choices=("ddp", "fsdp", "allreduce"), default="ddp")
    parser.add_argument("--nproc", type=int, default=2, help="ranks to start (2 to 4)")
    parser.add_argument("--plant", action="store_true", help="rank 1's second batch changes size")
    parser.add_argument("--backend", default="aot_eager", help="torch.compile backend")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args(argv)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun started us
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    mp.spawn(train, args=(args.nproc, args), nprocs=args.nproc, join=True)


if __name__ == "__main__":
    main()
