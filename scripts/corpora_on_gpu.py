"""The advisor's three corpora in one run, for the GPU machine (torch 2.11, Python 3.12,
transformers and timm; no IPython, ipywidgets or depyf needed): the public graph-break
corpus (``benchmarks/advisor_corpus_run.py``: 34 models, the corpus's labels), the team
corpus (``tests/advisor_corpus``: planted and clean programs and the GPU recordings,
``benchmarks/advisor_corpus.py``) and the torch-test oracle
(``benchmarks/advisor_torch_oracle.py``).

Each corpus runs in a worker process of its own (the public one in three parts), all at
once, each with a share of the cores (the programs run on the CPU, as the corpora are
written: what differs on the GPU machine is its torch). A worker writes one JSON line per
program as it finishes, so whatever is done by the time budget is reported and the rest
is listed as not reached. It prints one compact table (set, program, expected, first finding, agree)
and a summary per set, and writes the same as JSON to ``-o``.

    python scripts/corpora_on_gpu.py -o OUT [--budget-s 330] [--sets public,team,oracle]
                                     [--names NAME ...] [--workers N]

``--workers N`` runs at most N workers at a time (the others wait their turn within the
same budget): on a small shared machine, ``--workers 1`` or ``2``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETS = ("public", "team", "oracle")
# workers per set: the public corpus is the longest (34 transformers and timm models)
SHARDS = {"public": 3, "team": 1, "oracle": 1}


def _paths() -> None:
    # tests/ first: tests/advisor_corpus (the package) before benchmarks/advisor_corpus.py
    sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]


def _cell(text: object, width: int = 80) -> str:
    s = " ".join(str(text).replace("|", "/").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _finding(f: Any) -> str:
    return f"{f.kind}: {f.title}" if f is not None else "(nothing flagged)"


def _every(findings: Any) -> list[list[str]]:
    """Each finding as [kind, cause key, title], for comparing torch versions in the JSON."""
    return [[f.kind, getattr(f, "cause", "") or "", f.title] for f in findings]


# --- workers: one set (or a shard of it), one JSON line per program ----------------------


def _public(names: list[str], emit: Any) -> None:
    from advisor_corpus_models import available
    from advisor_corpus_run import LABELS, _judge

    labels = json.loads(LABELS.read_text())["models"]
    emit({"plan": names})
    for name in names:
        why = available(name)
        expected = f"{labels[name]['cause']} ({labels[name]['mode']})"
        if why:
            emit({"program": name, "expected": expected, "first": f"skipped: {why}",
                  "agree": None, "seconds": 0.0})  # fmt: skip
            continue
        t0 = time.perf_counter()
        r = _judge(name, labels[name], False)
        emit({"program": name, "expected": expected, "first": _finding(r["first"]),
              "agree": bool(r["ok"]), "seconds": time.perf_counter() - t0,
              "note": "" if r["holds"] else "label does not hold with this torch",
              "findings": _every(r["findings"]),
              # torch's own record (Dynamo's graph-break counters): tells a break torch
              # stopped making from one the advisor stopped finding
              "torch_breaks": r["torch_breaks"]})  # fmt: skip


def _team(names: list[str], emit: Any) -> None:
    from advisor_corpus.check import GPU_ALSO, GPU_RECORDINGS, load_case, load_recording, verdict

    emit({"plan": names})
    for name in names:
        t0 = time.perf_counter()
        if name.startswith("recording:"):
            rec = name.split(":", 1)[1]
            expect, also, exp = GPU_RECORDINGS[rec], GPU_ALSO.get(rec, set()), load_recording(rec)
        else:
            mod = load_case(name)
            expect, also, exp = mod.EXPECT, set(), mod.run()
        ok_first, clean = verdict(exp, expect, also)
        findings = exp.findings()
        emit({"program": name, "expected": expect or "clean",
              "first": _finding(findings[0] if findings else None),
              "agree": ok_first and clean, "seconds": time.perf_counter() - t0,
              "findings": _every(findings)})  # fmt: skip


def _oracle(names: list[str], emit: Any) -> None:
    from advisor_torch_oracle import CASES, judge

    emit({"plan": names})
    for case in [c for c in CASES if c.name in names]:
        t0 = time.perf_counter()
        o = judge(case)
        emit({"program": case.name, "expected": f"{case.kind}: {o.expected}",
              "first": o.first, "agree": o.agrees, "seconds": time.perf_counter() - t0,
              "note": "" if o.torch_agrees else "torch printed other than its test says",
              "findings": [list(f) for f in o.findings]})  # fmt: skip


def _names(which: str) -> list[str]:
    """Every program of a set, in order (imports only what lists them)."""
    if which == "public":
        from advisor_corpus_run import LABELS

        return list(json.loads(LABELS.read_text())["models"])
    if which == "team":
        from advisor_corpus import CASES as TEAM
        from advisor_corpus.check import GPU_RECORDINGS

        return [*TEAM, *(f"recording:{n}" for n in GPU_RECORDINGS)]
    from advisor_torch_oracle import CASES

    return [c.name for c in CASES]


def worker(which: str, shard: int, shards: int, only: list[str], rows: Path) -> None:
    """Run one set's programs (every ``shards``-th from ``shard``; ``only`` some) and append
    a JSON line per program to ``rows``. A program that raises is a row saying so."""
    _paths()
    names = [n for i, n in enumerate(_names(which)) if i % shards == shard]
    names = [n for n in names if not only or n in only]
    with rows.open("a", encoding="utf-8") as out:

        def emit(row: dict[str, Any]) -> None:
            out.write(json.dumps({"set": which, **row}, default=str) + "\n")
            out.flush()

        run = {"public": _public, "team": _team, "oracle": _oracle}[which]
        done: set[str] = set()

        def tracked(row: dict[str, Any]) -> None:
            if "program" in row:
                done.add(row["program"])
            emit(row)

        remaining = names
        while remaining:  # a program that raises is reported, the rest go on
            try:
                run(remaining, tracked)
                return
            except Exception as e:  # a benchmark reports and goes on
                failed = next(n for n in remaining if n not in done)
                emit({"program": failed, "expected": "", "agree": False, "seconds": 0.0,
                      "first": f"raised {type(e).__name__}: {str(e)[:160]}"})  # fmt: skip
                done.add(failed)
                remaining = [n for n in remaining if n not in done]


# --- the parent: start the workers, stop at the budget, print and write -------------------


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("torch", "transformers", "timm"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # report what is missing, go on
            out[mod] = f"not importable ({type(e).__name__})"
    import torch

    out["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", type=Path, required=False, help="folder for the JSON")
    parser.add_argument("--budget-s", type=float, default=330.0,
                        help="wall-clock budget for all workers together (seconds)")  # fmt: skip
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ",".join(SETS))
    parser.add_argument("--names", nargs="*", default=[], help="only these programs")
    parser.add_argument("--workers", type=int, default=0,
                        help="at most this many at a time (default: all at once)")  # fmt: skip
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--shard", default="0/1", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        shard, shards = (int(v) for v in args.shard.split("/"))
        worker(args.worker, shard, shards, args.names, args.rows)
        return 0
    if args.out is None:
        parser.error("-o OUT is required: the folder the JSON is written to")
    sets = [s for s in args.sets.split(",") if s]
    unknown = sorted(set(sets) - set(SETS))
    if unknown:
        parser.error(f"unknown sets {unknown}: choose from {', '.join(SETS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    return run(sets, args.names, args.out.resolve(), args.budget_s, args.workers)


def run(sets: list[str], names: list[str], out: Path, budget_s: float, workers: int = 0) -> int:
    """Start a worker per set and shard, at most ``workers`` at a time (0: all), wait up
    to ``budget_s`` in all, report. A worker not started by the budget is reported as not
    reached, like the programs of a worker stopped at it."""
    t0 = time.perf_counter()
    jobs = [(s, i, SHARDS[s]) for s in sets for i in range(SHARDS[s])]
    # the short sets first: when workers wait their turn, a budget cut lands on the long one
    jobs.sort(key=lambda job: SHARDS[job[0]])
    at_once = min(len(jobs), workers) if workers > 0 else len(jobs)
    threads = str(max(1, (os.cpu_count() or 2) // max(1, at_once)))
    env = dict(os.environ, OMP_NUM_THREADS=threads, PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))  # fmt: skip
    deadline = t0 + budget_s
    procs: list[Any] = []
    waiting = list(jobs)
    running: list[Any] = []
    while waiting or running:
        while waiting and len(running) < at_once and time.perf_counter() < deadline:
            which, shard, shards = waiting.pop(0)
            rows = out / f"rows_{which}_{shard}.jsonl"
            rows.write_text("")
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", which, "--shard",
                   f"{shard}/{shards}", "--rows", str(rows), "--names", *names]  # fmt: skip
            log = (out / f"worker_{which}_{shard}.log").open("w")
            job = (subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    cwd=ROOT, start_new_session=True), rows, log)  # fmt: skip
            procs.append(job)
            running.append(job)
        if time.perf_counter() >= deadline:
            for p, _, _ in running:
                # the budget is spent: this worker and the compile workers it started (its
                # own session's process group), nothing else
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            running = []
            break
        time.sleep(0.5)
        running = [j for j in running if j[0].poll() is None]
    for which, shard, _ in waiting:  # never started: its programs were not reached
        rows = out / f"rows_{which}_{shard}.jsonl"
        rows.write_text("")
        procs.append((_NotStarted(), rows, None))
    for (which, shard, shards), (_, rows, log) in zip(jobs, procs, strict=True):
        if log is not None:
            log.close()
        if '"plan"' not in rows.read_text():
            # stopped (or never started) before it listed its programs: list them here
            _paths()
            plan = [n for i, n in enumerate(_names(which)) if i % shards == shard]
            plan = [n for n in plan if not names or n in names]
            with rows.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"set": which, "plan": plan}) + "\n")
    return report(sets, procs, out, time.perf_counter() - t0, budget_s)


class _NotStarted:
    """A worker the budget did not reach (stands in for its process in the report)."""

    returncode = None


def report(sets: list[str], procs: list[Any], out: Path, wall: float, budget_s: float) -> int:
    rows: list[dict[str, Any]] = []
    planned: list[tuple[str, str]] = []
    for p, path, _ in procs:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if "plan" in row:
                planned.extend((row["set"], n) for n in row["plan"])
            else:
                rows.append(row)
        if p.returncode not in (0, None, -signal.SIGKILL):
            rows.append({"set": path.stem, "program": "(worker)", "expected": "",
                         "first": f"worker exited {p.returncode}: see {path.stem}.log",
                         "agree": None, "seconds": 0.0})  # fmt: skip
    planned = list(dict.fromkeys(planned))  # a worker that went on after a failure plans again
    seen = {(r["set"], r["program"]) for r in rows}
    for which, name in planned:
        if (which, name) not in seen:
            rows.append({"set": which, "program": name, "expected": "", "agree": None,
                         "first": f"not reached within the {budget_s:.0f} s budget",
                         "seconds": 0.0})  # fmt: skip
    order = {s: i for i, s in enumerate(SETS)}
    rows.sort(key=lambda r: (order.get(r["set"], 9), planned.index((r["set"], r["program"]))
                             if (r["set"], r["program"]) in planned else 0))  # fmt: skip
    versions = _versions()
    print(f"torch {versions['torch']}  python {versions['python']}  {versions['device']}  "
          f"transformers {versions['transformers']}  timm {versions['timm']}  "
          f"wall {wall:.0f} s (budget {budget_s:.0f} s)")  # fmt: skip
    print("| set | program | expected | first finding | agree | s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        agree = {True: "yes", False: "NO", None: "-"}[r["agree"]]
        note = f" ({r['note']})" if r.get("note") else ""
        print(f"| {r['set']} | {_cell(r['program'], 28)} | {_cell(r['expected'], 44)} | "
              f"{_cell(r['first'], 90)}{note} | {agree} | {r['seconds']:.1f} |")  # fmt: skip
    summary = {}
    for which in sets:
        rs = [r for r in rows if r["set"] == which]
        judged = [r for r in rs if r["agree"] is not None]
        summary[which] = {"programs": len(rs), "judged": len(judged),
                          "agree": sum(bool(r["agree"]) for r in judged)}  # fmt: skip
        s = summary[which]
        print(f"{which}: first finding agrees {s['agree']}/{s['judged']} judged "
              f"({s['programs']} programs)")  # fmt: skip
    doc = {"versions": versions, "wall_s": wall, "budget_s": budget_s, "summary": summary,
           "rows": rows}  # fmt: skip
    name = f"corpora_torch{versions['torch'].split('+')[0]}.json"
    (out / name).write_text(json.dumps(doc, indent=1, default=str))
    print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
