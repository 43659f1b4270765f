"""Precision and recall of the advisor over tests/advisor_corpus and the GPU recordings.

A planted program counts as recalled when its planted kind is the FIRST finding and
every evidence link of it resolves. Every problem or warning whose kind is not the
planted one (and any problem or warning on a clean program) counts as a false alarm,
except the second problems a recording has on purpose (``GPU_ALSO``, printed apart).

    python benchmarks/advisor_corpus.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> None:
    import torch
    from advisor_corpus import CASES
    from advisor_corpus.check import GPU_ALSO, GPU_RECORDINGS, load_case, load_recording, verdict

    print(f"torch {torch.__version__}  device cpu (GPU cases from recordings)")
    rows = []
    for name in CASES:
        mod = load_case(name)
        t0 = time.perf_counter()
        exp = mod.run()
        rows.append((name, mod.EXPECT, set(), exp, time.perf_counter() - t0))
    for name, expect in GPU_RECORDINGS.items():
        also = GPU_ALSO.get(name, set())
        rows.append((f"recording:{name}", expect, also, load_recording(name), 0.0))
    tp = fp = fn = known = 0
    for name, expect, also, exp, seconds in rows:
        findings = exp.findings()
        alarms = [f for f in findings if f.severity in ("problem", "warning")]
        ok_first, clean = verdict(exp, expect, also)
        if expect is not None:
            tp += ok_first
            fn += not ok_first
        fp += sum(1 for f in alarms if f.kind != expect and f.kind not in also)
        known += sum(1 for f in alarms if f.kind in also)
        kinds = ", ".join(f"{f.severity[0]}:{f.kind}" for f in findings) or "-"
        verdict = "ok" if ok_first and clean else "MISS"
        print(f"{name:34s} {verdict:4s} {seconds:5.1f}s  expect {expect}  got [{kinds}]")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(
        f"cases {len(rows)}  planted {tp + fn}  recalled {tp}  false alarms {fp}  "
        f"known second problems {known}"
    )
    print(f"precision {precision:.2f}  recall {recall:.2f}")


if __name__ == "__main__":
    main()
