"""How small an Exploration's JSON and page are: the compact form (schema 3.0 on) against plain.

For each recording (``notebooks/recordings``, ``tests/data/recordings``) and, with
``--gpt2``, a 4-layer GPT-2 training step captured here (the ``record_gpu.py --large``
program, on this machine's device; minutes on a CPU), measured in one run:

- bytes of the plain form (``to_json(compact=False)``, as schema 2.0 wrote) and of the
  compact form, and their ratio;
- bytes of the exported page (``explorer.export.to_html``) over the compact JSON;
- save and load time, compact over plain (interleaved, median of ``--repeat``);
- with ``--fields``, where the bytes go: the largest fields of each form, list indices
  and dictionary keys folded (``compiles[].graphs.*.text``).

Issue 15's target: a 4-layer transformer training step under 5 MB of JSON, page no larger.

Run: ``python benchmarks/json_size.py [--gpt2] [--fields] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import compiler  # noqa: E402
from explorer.export import to_html  # noqa: E402

_FOLDED = ("graphs", "artifacts", "info", "config", "kwargs", "counters", "options")


def field_sizes(value: Any, path: str = "", acc: Counter[str] | None = None) -> Counter[str]:
    """Bytes of JSON text under each field path, leaves only."""
    acc = Counter() if acc is None else acc
    if isinstance(value, dict):
        for key, v in value.items():
            field_sizes(v, f"{path}.*" if path.endswith(_FOLDED) else f"{path}.{key}", acc)
    elif isinstance(value, list) and value and isinstance(value[0], (dict, list)):
        for v in value:
            field_sizes(v, f"{path}[]", acc)
    else:
        acc[path] += len(json.dumps(value, ensure_ascii=False).encode())
    return acc


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(name: str, exp: compiler.Exploration, repeat: int, fields: bool) -> None:
    small, plain = exp.to_json(), exp.to_json(compact=False)
    if compiler.Exploration.from_json(small) != exp:
        raise SystemExit(f"{name}: the compact form did not read back equal")
    page = len(to_html(exp).encode())
    saves: tuple[list[float], list[float]] = ([], [])
    loads: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for i, compact in enumerate((False, True)):
            saves[i].append(timed(lambda c=compact: exp.to_json(compact=c)))
            text = small if compact else plain
            loads[i].append(timed(lambda t=text: compiler.Exploration.from_json(t)))
    s, p = len(small.encode()), len(plain.encode())
    save = statistics.median(saves[1]) / statistics.median(saves[0])
    load = statistics.median(loads[1]) / statistics.median(loads[0])
    print(
        f"{name:<28} plain {p:>10,} B  compact {s:>9,} B  {p / s:4.1f}x smaller  "
        f"page {page:>9,} B = {page / s:4.2f} x JSON  save {save:4.2f}x  load {load:4.2f}x",
        flush=True,
    )
    if fields:
        for label, text in (("plain", plain), ("compact", small)):
            top = field_sizes(json.loads(text)).most_common(8)
            print(f"  {label}: " + "; ".join(f"{k.lstrip('.')} {v / 1e3:.0f} kB" for k, v in top))


def gpt2() -> compiler.Exploration:
    """The ``record_gpu.py --large`` program on this machine's device."""
    import torch
    from record_gpu import gpt2_training_step

    device = "cuda" if torch.cuda.is_available() else "cpu"
    step = gpt2_training_step(device)
    with torch.enable_grad():
        exp = compiler.explore(step, wrap=False)
    return compiler.with_sass(exp) if device == "cuda" else exp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--gpt2", action="store_true", help="also capture a 4-layer GPT-2 step")
    parser.add_argument("--fields", action="store_true", help="print the largest fields")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import torch

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    print(f"torch {torch.__version__}, {device}, schema {compiler.SCHEMA_VERSION}")
    files = sorted(
        p
        for folder in ("notebooks/recordings", "tests/data/recordings")
        for p in (ROOT / folder).glob("*.json")
        if p.name != "environment.json"
    )
    for path in files:
        exp = compiler.Exploration.from_json(path.read_text())
        measure(path.name, exp, args.repeat, args.fields)
    if args.gpt2:
        measure(f"gpt2_training_step ({device})", gpt2(), args.repeat, args.fields)


if __name__ == "__main__":
    main()
