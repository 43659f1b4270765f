"""Opening a production-size multi-rank log directory, against tlparse's all-ranks report.

For one ``TORCH_TRACE`` directory of several ranks (``benchmarks/rank_logs.py`` makes
one), in one run, alternating, ``--repeat`` times each:

- ``tlparse DIR --all-ranks-html -o OUT``: wall time;
- the explorer in a fresh Python process (torch, compiler and explorer imported before
  the clock starts): ``explorer.load(DIR)`` on a directory this size opens in outline
  (``RanksWidget``); load plus first paint is that call (scan, index, its JSON) plus
  the pane shown first (the default selection's), as JSON. Peak RSS over it is
  ``ru_maxrss`` after minus the RSS before. Then the same process opens a graph of the
  largest rank (reading that rank's log in full): its time and peak RSS are printed too.

Targets (issue 25): load + first paint at most 0.5x tlparse's time; peak RSS at most 1.5x
the largest single rank's log.

Run: ``python benchmarks/ranks_open.py DIR [--repeat 3]`` (tlparse on PATH).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from against_tlparse import child_run, tlparse_exe, tlparse_seconds

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import torch  # noqa: F401  (imported before the clock, as a user's session has it)
import compiler, explorer
from explorer.ranks_widget import RanksWidget
from against_tlparse import rss_kb

before = rss_kb()
t0 = time.perf_counter()
w = explorer.load(sys.argv[1], lazy=True)  # what a directory over 256 MB gets
sel = w.selection
first = w.pane(sel["compile"], sel["stage"])
json.dumps(w.index); json.dumps(first)
paint_s = time.perf_counter() - t0
paint_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
assert isinstance(w, RanksWidget), type(w)
largest = max(w.outline.files, key=lambda f: f.bytes)
key = next(c["key"] for c in w.index["compiles"] if c["rank"] == largest.rank
           and any(p["id"] == "dynamo_output_graph" for p in c["panes"]))
t0 = time.perf_counter()
pane = w.pane(key, "dynamo_output_graph")
json.dumps(pane)
open_s = time.perf_counter() - t0
open_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"paint_s": paint_s, "paint_kb": paint_peak, "open_s": open_s,
                  "open_kb": open_peak, "ranks": len(w.outline.files),
                  "compiles": len(w.index["compiles"]), "largest_rank": largest.rank,
                  "largest_bytes": largest.bytes}))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    exe = tlparse_exe("ranks_open.py")
    logs = sorted(args.trace.glob("*.log"))
    total = sum(p.stat().st_size for p in logs)
    print(f"{args.trace}: {len(logs)} logs, {total / 1e6:.0f} MB; medians of {args.repeat}")
    tl, runs = [], []
    for _ in range(args.repeat):
        tl.append(tlparse_seconds(args.trace, "--all-ranks-html", exe=exe))
        runs.append(child_run(_CHILD, args.trace, ROOT))
    tl_s = statistics.median(tl)
    paint = statistics.median(r["paint_s"] for r in runs)
    paint_kb = statistics.median(r["paint_kb"] for r in runs)
    open_s = statistics.median(r["open_s"] for r in runs)
    open_kb = statistics.median(r["open_kb"] for r in runs)
    largest = runs[0]["largest_bytes"]
    print(f"tlparse --all-ranks-html      {tl_s:8.2f} s")
    ratio = paint / tl_s
    print(f"explorer load + first paint   {paint:8.2f} s  {ratio:5.2f}x tlparse (target <= 0.5x)")
    print(
        f"  peak RSS                    {paint_kb / 1024:8.0f} MB  "
        f"{paint_kb * 1024 / largest:5.2f}x the largest rank's log "
        f"({largest / 1e6:.0f} MB; target <= 1.5x)"
    )
    print(
        f"open rank {int(runs[0]['largest_rank'])}'s first graph     {open_s:8.2f} s  peak RSS "
        f"{open_kb / 1024:.0f} MB ({open_kb * 1024 / largest:.2f}x its log)"
    )


if __name__ == "__main__":
    main()
