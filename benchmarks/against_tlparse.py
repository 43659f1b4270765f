"""What the benchmarks that measure the explorer against tlparse share: tlparse's wall
time on the same log, a child Python process whose peak memory is its own, and both tools
timed as whole processes, start-up included, as a user meets them.

``load_trace.py``, ``ranks_open.py`` and ``views.py`` import it (run as scripts, this
folder is on ``sys.path``); their child processes import ``rss_kb`` from it too.

Run as a script, it is the whole-process benchmark of issue 45: for each log (a file, a
one-log folder, or a rank directory), ``tlparse LOG -o TMP`` (``--all-ranks-html`` for a
rank directory) against ``python -m explorer report LOG -o TMP`` in a fresh Python (imports
and interpreter start-up counted), alternating, ``--repeat`` times each; medians of wall
and CPU seconds (user + sys, from the OS's accounting of the finished child: on a shared
machine CPU time drifts less than wall time) and peak RSS, after one untimed run of each
with Python's bytecode caches allowed, as an installed copy has them (``explorer_env``).
Targets: at most 1.0x tlparse from 10 MB up, under 0.5 s for a 1 MB log.

Run: ``python benchmarks/against_tlparse.py LOG_OR_DIR ... [--repeat 5]``.

Example:
    >>> tlparse_seconds("/work/traces/t5_infer/dedicated_log.log")  # doctest: +SKIP
    0.33
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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


def whole_process(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``argv`` to its end, output thrown away: its wall seconds, CPU seconds (user +
    sys, children of it included) and peak RSS in kB, from ``os.wait4``. Raises
    ``CalledProcessError`` when it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_kb": usage.ru_maxrss}


def logs_of(trace: Path) -> list[Path]:
    """The logs of a trace: itself for a file, else every ``*.log`` under it."""
    return [trace] if trace.is_file() else sorted(trace.rglob("*.log"))


def tlparse_argv(trace: Path, out: str, exe: str) -> list[str]:
    """tlparse's command for the report of ``trace``: its one log, or every rank's."""
    logs = logs_of(trace)
    target = [str(logs[0])] if len(logs) == 1 else [str(trace), "--all-ranks-html"]
    return [exe, *target, "-o", out, "--overwrite", "--no-browser"]


def explorer_argv(trace: Path, out: str) -> list[str]:
    """The explorer's command for the same report, in a fresh Python."""
    return [sys.executable, "-m", "explorer", "report", str(trace), "-o", out]


def explorer_env() -> dict[str, str]:
    """The explorer's environment: this checkout first on the path, and Python allowed to
    keep its bytecode caches. ``pip install`` byte-compiles a package, so a user's Python
    reads ``.pyc`` files; with ``PYTHONDONTWRITEBYTECODE`` set (as in some shells and
    containers) a checkout has none, and every run compiles ~160 modules from source
    again (0.15 s more CPU on a 1 MB log), a cost no installed copy pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(HERE.parent)
    return env


def compare_processes(trace: Path, exe: str, repeat: int) -> dict[str, float]:
    """Medians of tlparse's and the explorer's whole processes on ``trace``, alternating,
    after one untimed run of each (it writes the bytecode caches and reads the log into
    the OS's file cache for both)."""
    env = explorer_env()
    runs: dict[str, list[dict[str, float]]] = {"tl": [], "ex": []}
    with tempfile.TemporaryDirectory(prefix="tce-whole-") as tmp:
        whole_process(tlparse_argv(trace, f"{tmp}/tl", exe))
        whole_process(explorer_argv(trace, f"{tmp}/ex"), env)
        for _ in range(repeat):
            runs["tl"].append(whole_process(tlparse_argv(trace, f"{tmp}/tl", exe)))
            runs["ex"].append(whole_process(explorer_argv(trace, f"{tmp}/ex"), env))
    return {
        f"{who}_{what}": statistics.median(r[what] for r in rs)
        for who, rs in runs.items()
        for what in ("wall_s", "cpu_s", "rss_kb")
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="tlparse against python -m explorer report")
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    exe = tlparse_exe("against_tlparse.py")
    print(f"whole processes, start-up included; medians of {args.repeat} alternating runs")
    print(
        f"{'trace':22s} {'log MB':>7s} {'tlparse s':>10s} {'explorer s':>11s} {'ratio':>6s} "
        f"{'tlparse cpu':>12s} {'explorer cpu':>13s} {'ratio':>6s} {'RSS MB':>7s}"
    )
    for trace in args.traces:
        size = sum(p.stat().st_size for p in logs_of(trace)) / 1e6
        m = compare_processes(trace, exe, args.repeat)
        print(
            f"{trace.name[:22]:22s} {size:7.1f} {m['tl_wall_s']:10.3f} {m['ex_wall_s']:11.3f} "
            f"{m['ex_wall_s'] / m['tl_wall_s']:5.2f}x {m['tl_cpu_s']:12.3f} {m['ex_cpu_s']:13.3f} "
            f"{m['ex_cpu_s'] / max(m['tl_cpu_s'], 1e-3):5.2f}x {m['ex_rss_kb'] / 1024:7.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
