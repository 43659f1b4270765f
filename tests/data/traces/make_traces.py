"""Regenerate the trace fixtures: `python tests/data/traces/make_traces.py` from the repo root.

Each fixture is what TORCH_TRACE wrote for one of tests/programs.py, run in a fresh
process; corrupted.log is graph_break_eager's log with deliberate damage.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

PROGRAMS = {
    "graph_break_eager": (
        "import torch, programs\n"
        "f = torch.compile(programs.with_print, backend='eager')\n"
        "f(torch.randn(4)); f(torch.randn(8))\n"
    ),
}


def main() -> None:
    for name, code in PROGRAMS.items():
        out = HERE / name
        shutil.rmtree(out, ignore_errors=True)
        env = dict(os.environ, TORCH_TRACE=str(out), PYTHONPATH=f"{ROOT}:{ROOT / 'tests'}")
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        (log,) = out.glob("*.log")
        log.rename(out / "trace.log")
    lines = (HERE / "graph_break_eager" / "trace.log").read_text().split("\n")
    damaged = list(lines)
    damaged.insert(3, "this line is not a trace line")
    damaged.insert(6, 'V1122 10:00:00.000000 1 x.py:1] {"broken json": ')
    # drop the last line of the first payload: its md5 no longer matches
    first_payload_end = next(i for i in range(8, len(damaged)) if damaged[i].startswith("\t")
                             and not damaged[i + 1].startswith("\t"))  # fmt: skip
    del damaged[first_payload_end]
    (HERE / "corrupted.log").write_text("\n".join(damaged))


if __name__ == "__main__":
    main()
