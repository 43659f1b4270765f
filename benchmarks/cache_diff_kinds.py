"""Target of issue 35: ``compiler.cache_diff`` names the one thing two processes differ in.

Each case runs the same small program in two fresh processes that share one Inductor cache
folder and write ``TORCH_TRACE`` logs; the second differs from the first in one thing (an
Inductor config value, a constant, an input dtype, the graph, the torch version). Both logs
are loaded with ``compiler.load_trace`` and compared with ``compiler.cache_diff``.

    nice -n 10 /work/main/.venv/bin/python benchmarks/cache_diff_kinds.py [--other-python PY]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OTHER_PYTHON = "/work/wt/_venv2141/bin/python"

# (case, what the second process changes, the component kind cache_diff must name)
CASES = (
    ("config", ["--config", "max_fusion_size=32"], "config"),
    ("constant", ["--constant", "3.0"], "constant"),
    ("dtype", ["--dtype", "float64"], "input"),
    ("graph", ["--op", "cos"], "graph"),
    ("torch version", ["--python", OTHER_PYTHON], "torch version"),
)


def child(args: argparse.Namespace) -> None:
    """The program both processes compile; TORCH_TRACE is set by the parent."""
    import torch

    if args.config:
        name, value = args.config.split("=")
        setattr(torch._inductor.config, name, type(getattr(torch._inductor.config, name))(value))
    constant = float(args.constant)
    op = getattr(torch, args.op)

    def f(x: torch.Tensor) -> torch.Tensor:
        return op(x * constant) + 1

    x = torch.randn(8, 8, dtype=getattr(torch, args.dtype))
    torch.compile(f)(x)


def run(python: str, trace: Path, cache: Path, extra: list[str]) -> float:
    env = {**os.environ, "TORCH_TRACE": str(trace), "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
    t0 = time.perf_counter()
    subprocess.run(
        [python, str(Path(__file__).resolve()), "--child", *extra], env=env, check=True
    )
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--child", action="store_true")
    p.add_argument("--config", default="")
    p.add_argument("--constant", default="2.0")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--op", default="sin")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--other-python", default=OTHER_PYTHON)
    p.add_argument("--keep", default="", help="write the traces under this folder")
    p.add_argument("--only", default="", help="run only this case")
    p.add_argument("--reuse", action="store_true", help="diff traces already under --keep")
    args = p.parse_args()
    if args.child:
        child(args)
        return
    sys.path.insert(0, str(ROOT))
    import compiler

    work = Path(args.keep or tempfile.mkdtemp(prefix="cache_diff_kinds_"))
    named = 0
    shown = False
    for case, change, kind in CASES:
        if args.only and case != args.only:
            continue
        folder = work / case.replace(" ", "_")
        python = sys.executable
        extra = list(change)
        if "--python" in extra:
            python = args.other_python
            extra = []
        base = other = 0.0
        if not (args.reuse and (folder / "b").is_dir()):
            base = run(sys.executable, folder / "a", folder / "cache", [])
            other = run(python, folder / "b", folder / "cache", extra)
        diff = compiler.cache_diff(
            compiler.load_trace(folder / "a"), compiler.load_trace(folder / "b")
        )
        kinds = diff.kinds()
        ok = kind in kinds
        named += ok
        print(f"{case:14s} processes {base:5.1f} s + {other:5.1f} s; differing kinds "
              f"{sorted(kinds)}; names {kind!r}: {'yes' if ok else 'NO'}")
        if not shown:
            print("----- cache_diff output, whole -----")
            print(diff)
            print("------------------------------------")
            shown = True
    print(f"{named} of {len(CASES) if not args.only else 1} kinds of change named")


if __name__ == "__main__":
    main()
