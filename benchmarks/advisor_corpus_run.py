"""``python benchmarks/advisor_models.py --corpus``: the advisor judged against the public
graph-break corpus (penguinwu/oss-model-graph-break-corpus), its labels the expected causes.

For each model built by ``benchmarks/advisor_corpus_models.py`` it prints the corpus's
label, torch's own record of the run here (Dynamo's graph-break counters: whether the
label's break types still occur with this torch and transformers), the advisor's findings,
whether the first finding names the label's cause, any cause key or title reported twice,
and with ``--try`` each tried fix's before/after; then the agreement per cause and the
issue's targets, over every model and over the models whose label torch still shows.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

LABELS = Path(__file__).resolve().parent / "data" / "oss_graph_break_corpus_labels.json"


def _counted(findings: list[Any]) -> list[Any]:
    return [f for f in findings if f.severity in ("problem", "warning")]


def _judge(name: str, label: dict[str, Any], try_fix: bool) -> dict[str, Any]:
    import torch
    from advisor_corpus_models import CAUSES, build, names_cause, registry_ids
    from torch._dynamo.utils import counters

    import compiler
    from compiler.advise.findings import tried_summary
    from compiler.remedy.tried import try_fixes

    cause = label["cause"]
    m = build(name, label["mode"])
    counters.clear()
    t0 = time.perf_counter()
    with torch.set_grad_enabled(m.grad):
        exp = compiler.explore(m.target, *m.inputs, backend="eager")
        torch_breaks = {k.split("\n")[0]: v for k, v in counters["graph_break"].items()}
        if try_fix:
            exp = try_fixes(exp, m.target, *m.inputs, runs=3)
    seconds = time.perf_counter() - t0
    findings = list(exp.findings())
    counted = _counted(findings)
    ids = registry_ids(CAUSES[cause].gb_types)
    gb_types = CAUSES[cause].gb_types
    holds = not torch_breaks if cause == "full_graph" else any(t in gb_types for t in torch_breaks)
    first = counted[0] if counted else None
    ok = first is None if cause == "full_graph" else first is not None and names_cause(
        first, cause, ids
    )
    keys = Counter(getattr(f, "cause", "") or "" for f in findings if getattr(f, "cause", ""))
    titles = Counter(f.title for f in findings)
    dupes = [k for k, n in keys.items() if n > 1] + [t for t, n in titles.items() if n > 1]
    # one line per distinct fix: findings of one cause that each carry the same try would
    # repeat it (the repetition itself shows in ``kinds_repeated``)
    tried = list(dict.fromkeys(
        f"{f.kind}: {tried_summary(f)}" for f in findings if f.tried or f.tried_note
    ))  # fmt: skip
    kinds = Counter(f.kind for f in counted)
    fix = next((f.fix.kind for f in counted if f.fix is not None), "")
    return {
        "name": name, "mode": label["mode"], "cause": cause, "ids": ids, "holds": holds,
        "torch_breaks": torch_breaks, "findings": findings, "first": first, "ok": ok,
        "dupes": dupes, "kinds_repeated": [f"{k} x{n}" for k, n in kinds.items() if n > 1],
        "tried": tried, "fix": fix, "seconds": seconds,
        "compiles": len(exp.compiles),
    }  # fmt: skip


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def run_corpus(names: list[str], try_fix: bool) -> None:
    """Judge the advisor on the corpus's models (``names``: some only)."""
    import torch
    from advisor_corpus_models import available

    doc = json.loads(LABELS.read_text())
    labels: dict[str, Any] = doc["models"]
    print(f"torch {torch.__version__}; corpus {doc['source']} @ {doc['commit'][:10]} "
          f"({doc['license'].split(' ')[0]}); backend eager, as the corpus compiled")  # fmt: skip
    rows = []
    for name in names or list(labels):
        why = available(name)
        if why:
            print(f"\n# {name}: skipped, {why}")
            continue
        try:
            r = _judge(name, labels[name], try_fix)
        except Exception as e:  # a model this transformers cannot build: say so, go on
            print(f"\n# {name}: could not run: {type(e).__name__}: {str(e)[:200]}")
            continue
        rows.append(r)
        first = r["first"]
        print(f"\n# {name} ({r['mode']}, {r['compiles']} compiles, {r['seconds']:.1f} s)")
        print(f"  expected (corpus): {r['cause']}  [registry ids here: "
              f"{', '.join(r['ids']) or '-'}]")  # fmt: skip
        print(f"  torch's breaks now: {r['torch_breaks'] or 'none'}; label holds: "
              f"{'yes' if r['holds'] else 'NO'}")  # fmt: skip
        for f in r["findings"]:
            print(f"  found: {f.severity}:{f.kind}: {f.title}"
                  + (f"  [cause {f.cause}]" if getattr(f, "cause", "") else ""))  # fmt: skip
        for t in r["tried"]:
            print(f"  tried: {t}")
        print(f"  first finding is the known cause: {'yes' if r['ok'] else 'NO'}"
              f" (first: {f'{first.kind}: {first.title}' if first else 'nothing flagged'})"
              + (f"; reported twice: {r['dupes']}" if r["dupes"] else "")
              + (f"; kinds flagged more than once: {r['kinds_repeated']}"
                 if r["kinds_repeated"] else ""))  # fmt: skip
    _summary(rows)


def _summary(rows: list[dict[str, Any]]) -> None:
    print("\n| model | mode | expected (corpus label) | torch's breaks now | label holds "
          "| found first | known cause first | twice | kinds flagged more than once | fix "
          "| tried before -> after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        first = r["first"]
        breaks = ", ".join(f"{k} x{v}" for k, v in r["torch_breaks"].items()) or "none"
        found = f"{first.kind}: {first.title}" if first else "clean"
        print("| " + " | ".join(_cell(c) for c in (
            r["name"], r["mode"], r["cause"], breaks, "yes" if r["holds"] else "no", found,
            "yes" if r["ok"] else "NO", "; ".join(r["dupes"]) or "-",
            ", ".join(r["kinds_repeated"]) or "-", r["fix"] or "-",
            "; ".join(r["tried"]) or "-",
        )) + " |")  # fmt: skip
    print("\n| corpus cause | models | label holds here | known cause first (all) "
          "| known cause first (label holds) |")
    print("|---|---|---|---|---|")
    for cause in sorted({r["cause"] for r in rows}):
        rs = [r for r in rows if r["cause"] == cause]
        hs = [r for r in rs if r["holds"]]
        print(f"| {cause} | {len(rs)} | {len(hs)} | {sum(r['ok'] for r in rs)}/{len(rs)} "
              f"| {sum(r['ok'] for r in hs)}/{len(hs)} |")  # fmt: skip
    n, holds = len(rows), [r for r in rows if r["holds"]]
    clean = [r for r in rows if r["cause"] == "full_graph"]
    first_ok = sum(r["ok"] for r in rows)
    first_ok_h = sum(r["ok"] for r in holds)
    clean_ok = sum(r["ok"] for r in clean)
    print(f"\ntargets: known cause first {first_ok}/{n} = {first_ok / max(n, 1):.0%} of all "
          f"(label holds: {first_ok_h}/{len(holds)} = {first_ok_h / max(len(holds), 1):.0%}; "
          f"target >= 95%); a cause twice: {sum(bool(r['dupes']) for r in rows)} programs "
          f"(target 0); clean programs clean: {clean_ok}/{len(clean)}")  # fmt: skip
