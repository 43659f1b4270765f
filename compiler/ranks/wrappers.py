"""Graph breaks that a distributed wrapper (DDP, FSDP2) makes, not the user's code.

Which frames are DDP's or FSDP's is read from torch's own source: the files that define
``DistributedDataParallel`` and ``fully_shard`` (found where this torch installed them,
then matched by their path inside the ``torch`` package, so a trace recorded on another
machine matches too). A break whose stack passes through those files is the wrapper's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from compiler._torch_files import torch_dir
from compiler.link.user_code import owner_of
from compiler.model import GraphBreak


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A distributed wrapper: its name, the files that are its source (paths inside the
    ``torch`` package), and what its breaks are, in words."""

    name: str
    files: tuple[str, ...]
    explanation: str
    suggestion: str


def _torch_path(relative: str) -> str:
    """``torch/nn/parallel/distributed.py``: where torch keeps a module's source (a
    folder ends in ``/``), relative to the folder holding ``torch``; "" where the
    installed torch has no such file. Looked up without importing torch (a trace is read
    where torch may be absent: then the path is taken as torch 2.11 to 2.14.1 have it)."""
    where = torch_dir()
    if where is not None and not (where / relative).exists():
        return ""
    return f"torch/{relative}"


@cache
def wrappers() -> tuple[Wrapper, ...]:
    """The wrappers this torch has, with their source files."""
    ddp = _torch_path("nn/parallel/distributed.py")
    fsdp = _torch_path("distributed/fsdp/")
    return (
        Wrapper(
            name="DDP",
            files=(ddp,) if ddp else (),
            explanation=(
                "DistributedDataParallel's own forward runs Python bookkeeping that Dynamo "
                "does not trace (its logger's `set_runtime_stats_and_log`, the "
                "`_inside_ddp_forward` context manager), so compiling the DDP module compiles "
                "those pieces as small frames of their own (`inner`, `helper`, `__init__` and "
                "a resume function) before your model's forward compiles as one graph."
            ),
            suggestion=(
                "Nothing in your code causes these; they cost a few tiny graphs per rank, "
                "once. To leave DDP's wrapper out of compilation, compile the module it "
                "wraps instead: `model = DDP(torch.compile(model))`."
            ),
        ),
        Wrapper(
            name="FSDP2",
            files=(fsdp,) if fsdp else (),
            explanation=(
                "fully_shard runs its pre- and post-forward hooks (all-gather and reshard of "
                "each sharded module's parameters) under `torch._dynamo.disable` "
                "(`_dynamo_disable`, 'skipping FSDP hooks'), so Dynamo stops at every "
                "sharded submodule's call and resumes after it: one graph per region "
                "between sharded modules, on every rank."
            ),
            suggestion=(
                "Nothing in your code causes these: FSDP2 runs its hooks eagerly by design. "
                "Fewer sharded submodules mean fewer breaks; or compile each block before "
                "sharding it (`block.compile(); fully_shard(block)`), so every block is "
                "one graph between its hooks."
            ),
        ),
    )


def wrapper_of(gb: GraphBreak) -> Wrapper | None:
    """The wrapper whose source the break's stack passes through, innermost first, before
    any frame of the user's or a library's code; None for a break of their own making
    (a library's ``logger.warning_once`` inside a DDP-wrapped model is the library's)."""
    frames = (gb.location, *reversed(gb.user_stack))
    for loc in frames:
        if loc is None:
            continue
        name = loc.filename.replace("\\", "/")
        for w in wrappers():
            if any(f and (name.endswith(f) or (f.endswith("/") and f in name)) for f in w.files):
                return w
        if owner_of(loc.filename)[0] not in ("torch", "python"):
            return None
    return None
