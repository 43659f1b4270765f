"""What the benchmarks that measure the explorer against tlparse share: tlparse's wall
time on the same log, and a child Python process whose peak memory is its own.

``load_trace.py``, ``ranks_open.py`` and ``views.py`` import it (run as scripts, this
folder is on ``sys.path``); their child processes import ``rss_kb`` from it too.

Example:
    >>> tlparse_seconds("/work/traces/t5_infer/dedicated_log.log")  # doctest: +SKIP
    0.33
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def tlparse_exe(script: str) -> str:
    """tlparse on PATH or beside this Python; SystemExit naming ``script`` if neither."""
    exe = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not os.access(exe, os.X_OK):
        raise SystemExit(f"benchmarks/{script} needs tlparse: pip install tlparse")
    return exe


def tlparse_seconds(*args: str | os.PathLike[str], exe: str = "tlparse") -> float:
    """Wall time of ``tlparse ARGS -o TMP --overwrite --no-browser``."""
    with tempfile.TemporaryDirectory(prefix="tce-tlparse-") as out:
        start = time.perf_counter()
        subprocess.run(
            [exe, *map(str, args), "-o", out, "--overwrite", "--no-browser"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start


def rss_kb() -> int:
    """This process's resident memory now, in kB (``VmRSS``; 0 where /proc has none)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child_run(code: str, *args: str | os.PathLike[str]) -> dict[str, Any]:
    """Run ``code`` in a fresh Python (``sys.argv[1:]`` = ``args``, this folder on its
    path) and return the JSON object its last output line prints."""
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result
