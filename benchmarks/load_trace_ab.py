"""Load + offline page of two checkouts of the explorer against tlparse, in one sitting.

A change's before and after are measured on the same traces, alternating: each repeat
runs tlparse, then the two checkouts' load + page children (``load_trace.py``'s) in turn,
their order swapped every repeat, so a machine that slows down mid-run slows both.
Medians are printed, each as a ratio to tlparse's median.

Run: ``git worktree add /tmp/before <commit>``, then
``python benchmarks/load_trace_ab.py --before /tmp/before [--repeat 5] TRACE_DIR ...``
(the traces of ``benchmarks/model_traces.py``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from against_tlparse import child_run, tlparse_exe
from load_trace import _CHILD, log_bytes, tlparse_logs_seconds

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path, help="TORCH_TRACE folders")
    ap.add_argument("--before", type=Path, required=True, help="the other checkout's root")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": ROOT}
    exe = tlparse_exe("load_trace_ab")
    for trace in args.traces:
        tl: list[float] = []
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in roots}
        for i in range(args.repeat):
            tl.append(tlparse_logs_seconds(trace, exe))
            for k in list(roots) if i % 2 == 0 else list(roots)[::-1]:
                with tempfile.TemporaryDirectory() as tmp:
                    runs[k].append(child_run(_CHILD, trace, roots[k], Path(tmp) / "p.html"))
        t = statistics.median(tl)
        line = f"{trace.name:18s} {log_bytes(trace) / 1e6:5.1f} MB  tlparse {t:.3f} s"
        for k, got in runs.items():
            page = statistics.median(r["page_s"] for r in got)
            line += f" | {k}: load + page {page:.3f} s = {page / t:.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
