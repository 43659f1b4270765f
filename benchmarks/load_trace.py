"""How fast and how lean is ``compiler.load_trace`` on real model traces, against tlparse?

For each trace folder (default: those of ``benchmarks/model_traces.py``, the four large
ones and the four small ones, 1-3 MB), in one run:

- ``tlparse LOG -o DIR`` (tlparse's own report of the same log), wall time;
- ``load_trace`` in a fresh Python process (torch imported before the clock starts, so
  the figure is the load, not the import), wall time and peak RSS over the load
  (``ru_maxrss`` after minus the RSS before it, so the interpreter and torch are not
  counted);
- the same process then reads the nodes of the largest graph (what opening its pane
  costs on the Python side: ``Graph.nodes`` is parsed and linked on first read), then
  every graph's nodes (what opening every graph pane would cost).

Runs alternate tlparse and load_trace, ``--repeat`` times each; medians are printed.
- then ``load_trace`` again and the offline page (``explorer.export.to_html``), as
  ``python -m explorer report`` does: load + page against tlparse.

- then ``python -m explorer report TRACE`` as a whole process (interpreter start-up and
  imports counted, as a user meets it; ``against_tlparse.whole_process``) against tlparse's
  process: ``report s`` and its ratio.

Targets (issue 12): load_trace well under tlparse's time; peak RSS at most 3x the log.
(issue 25): load + page at most 1.0x tlparse on every trace of ``model_traces.py``; (issue
32) the small ones too, whose page used to carry a fixed cost. (issue 45) the whole
process at most 1.0x tlparse from 10 MB up, under 0.5 s for a 1 MB log.

Run: ``python benchmarks/load_trace.py [TRACE_DIR ...] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from against_tlparse import (
    child_run,
    explorer_argv,
    explorer_env,
    tlparse_exe,
    tlparse_seconds,
    whole_process,
)
from model_traces import SMALL

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACES = [
    ROOT.parent / "traces" / n
    for n in ("gpt2_train", "bert_infer", "resnet_infer", "t5_infer", *SMALL)
]

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import torch  # noqa: F401  (imported before the clock, as a user's session has it)
import compiler
from explorer.export import to_html  # (the explorer too: imported when the session loads it)
from against_tlparse import rss_kb

before = rss_kb()
t0 = time.perf_counter()
exp = compiler.load_trace(sys.argv[1])
load_s = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
graphs = [
    g for c in exp.compiles
    for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
]
largest = max(graphs, key=lambda g: g.text.count("\n"))
t0 = time.perf_counter()
largest_nodes = len(largest.nodes)
open_s = time.perf_counter() - t0
t0 = time.perf_counter()
nodes = sum(
    len(g.nodes)
    for c in exp.compiles
    for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
)
parse_s = time.perf_counter() - t0
# load + page: a fresh load then the offline page, as ``python -m explorer report`` does
n_compiles = len(exp.compiles)
del exp, graphs, largest
t0 = time.perf_counter()
to_html(compiler.load_trace(sys.argv[1]), sys.argv[3])
page_s = time.perf_counter() - t0
print(json.dumps({"load_s": load_s, "page_s": page_s, "peak_kb": peak - before, "before_kb": before,
                  "parse_s": parse_s, "nodes": nodes, "compiles": n_compiles,
                  "open_s": open_s, "largest_nodes": largest_nodes}))
"""


def log_bytes(trace: Path) -> int:
    files = [trace] if trace.is_file() else list(trace.rglob("*.log"))
    return sum(p.stat().st_size for p in files)


def tlparse_logs_seconds(trace: Path, exe: str) -> float:
    """tlparse on each log of ``trace`` (its report is one log's), one after another."""
    logs = [trace] if trace.is_file() else sorted(trace.rglob("*.log"))
    return sum(tlparse_seconds(log, exe=exe) for log in logs)


def load_trace_run(trace: Path) -> dict[str, float]:
    env = explorer_env()  # with bytecode caches, as an installed copy has them
    with tempfile.TemporaryDirectory(prefix="tce-page-") as tmp:
        run = child_run(_CHILD, trace, ROOT, Path(tmp) / "page.html")
        run["report_s"] = whole_process(explorer_argv(trace, f"{tmp}/report"), env)["wall_s"]
        return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    exe = tlparse_exe("load_trace.py")
    import torch

    print(f"torch {torch.__version__}, CPU; medians of {args.repeat} interleaved runs")
    header = (
        f"{'trace':14s} {'log MB':>7s} {'tlparse s':>10s} {'load_trace s':>13s} "
        f"{'ratio':>7s} {'peak RSS/log':>13s} {'open largest s':>15s} {'parse all s':>12s} "
        f"{'nodes':>7s} {'load+page s':>12s} {'ratio':>7s} {'report s':>9s} {'ratio':>7s}"
    )
    print(header)
    for trace in args.traces:
        if not trace.exists():
            print(f"{trace.name:14s} skipped: {trace} does not exist (benchmarks/model_traces.py)")
            continue
        size = log_bytes(trace)
        tl, loads = [], []
        for _ in range(args.repeat):
            tl.append(tlparse_logs_seconds(trace, exe))
            loads.append(load_trace_run(trace))
        tl_s = statistics.median(tl)
        load_s = statistics.median(r["load_s"] for r in loads)
        peak = statistics.median(r["peak_kb"] for r in loads) * 1024
        parse_s = statistics.median(r["parse_s"] for r in loads)
        open_s = statistics.median(r["open_s"] for r in loads)
        page_s = statistics.median(r["page_s"] for r in loads)
        report_s = statistics.median(r["report_s"] for r in loads)
        largest = f"{open_s:.2f} ({int(loads[0]['largest_nodes'])})"
        print(
            f"{trace.name:14s} {size / 1e6:7.1f} {tl_s:10.2f} {load_s:13.2f} "
            f"{load_s / tl_s:6.2f}x {peak / size:12.2f}x {largest:>15s} {parse_s:12.2f} "
            f"{int(loads[0]['nodes']):7d} {page_s:12.2f} {page_s / tl_s:6.2f}x "
            f"{report_s:9.2f} {report_s / tl_s:6.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
