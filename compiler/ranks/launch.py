"""Run a script on several ranks under ``TORCH_TRACE`` and load every rank's log.

The script is started by ``torchrun`` (``python -m torch.distributed.run``) on this
machine, ``--nproc`` processes, with ``MASTER_ADDR=127.0.0.1`` and a free port, each
writing its structured trace into one folder; the folder is then read like any
``TORCH_TRACE`` directory. A rank that fails leaves its log, and what the others wrote is
still loaded.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from compiler.errors import ExploreError
from compiler.model import Exploration
from compiler.trace.load import load_trace


def run_ranks(
    script: Path,
    nproc: int,
    args: Sequence[str] = (),
    *,
    trace_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    timeout: float = 600.0,
) -> tuple[Exploration, str]:
    """Launch ``script`` on ``nproc`` ranks with torchrun; returns every rank's compiles
    and a one-line failure message ('' when all ranks exited cleanly).

    Example:
        >>> exp, failure = run_ranks(Path("examples/distributed_step.py"), 2)  # doctest: +SKIP
        >>> exp.ranks  # doctest: +SKIP
        (0, 1)
    """
    if not script.is_file():
        raise ExploreError(f"no script at {script}: the file does not exist. Pass a .py file.")
    if nproc < 1:
        raise ExploreError(f"--nproc must be at least 1, not {nproc}.")
    folder = trace_dir or Path(tempfile.mkdtemp(prefix="torch_trace_ranks_"))
    env = dict(os.environ, TORCH_TRACE=str(folder), MASTER_ADDR="127.0.0.1")
    command = [
        sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}",
        "--master-addr=127.0.0.1", f"--master-port={_free_port()}", str(script), *args,
    ]  # fmt: skip
    if progress is not None:
        progress(f"running {script} on {nproc} ranks (torchrun), traces in {folder} ...")
    try:
        proc = subprocess.run(command, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        failure = f"{script} did not finish on {nproc} ranks in {timeout:.0f} s; reading its logs."
    else:
        failure = (
            f"{script} exited with status {proc.returncode} on some rank; reading what every "
            "rank wrote (torchrun printed which rank failed above)."
            if proc.returncode
            else ""
        )
    return load_trace(folder), failure


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
