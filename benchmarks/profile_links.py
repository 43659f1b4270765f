"""What ``compiler.attach_profile`` links in a profiled run: kernel events linked out of the
kernel events of compiled regions (Triton by name, library kernels through the aten op of
the wrapper's call), the top source lines by time (each kernel at its innermost user
lines) and how much kernel time has a module. Defaults to the committed H100 GPT-2
training step (tests/data/profiles, scripts/record_profile_gpu.py).

    python benchmarks/profile_links.py [EXPLORATION.json[.gz] TRACE.json[.gz]]
"""

from __future__ import annotations

import gzip
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
DATA = ROOT / "tests" / "data" / "profiles"


def main(exploration: Path, trace: Path) -> None:
    import compiler

    raw = exploration.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    exp = compiler.Exploration.from_json(text)
    p = compiler.attach_profile(exp, trace).profile
    assert p is not None
    kinds = Counter(
        "triton" if k.name.startswith("triton_") else "library" for k in p.kernels
        for _ in range(k.events)
    )  # fmt: skip
    print(f"kernel events linked: {p.linked_events} of {p.kernel_events} in compiled regions "
          f"({kinds['triton']} Triton, {kinds['library']} library); unlinked by name: "
          f"{sum(p.unlinked.values())}")  # fmt: skip
    for name, n in list(p.unlinked.items())[:6]:
        print(f"  unlinked {n:3d}  {name[:110]}")
    linked_us = sum(k.total_us for k in p.kernels)
    print(f"kernel time linked: {linked_us:.0f} us of {p.total_us - p.outside_us:.0f} us "
          "in compiled regions")  # fmt: skip
    print("top 5 source lines by time (innermost user lines):")
    for place in p.lines[:5]:
        loc = place.loc
        where = f"{Path(loc.filename).name}:{loc.line}" if loc else place.place
        code = loc.code.strip() if loc and loc.code else ""
        print(f"  {place.total_us:8.1f} us  {where:28s} {code[:60]}")
    with_module = sum(k.total_us for k in p.kernels if k.module)
    backward = [k for k in p.kernels if k.kernel.startswith("backward/")]
    print(f"time per module covers {with_module:.0f} of {linked_us:.0f} us linked "
          f"({with_module / linked_us:.0%}); backward kernels with a module: "
          f"{sum(1 for k in backward if k.module)} of {len(backward)}")  # fmt: skip
    for place in p.modules[:5]:
        print(f"  {place.total_us:8.1f} us  {place.place[:90]}")


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]]
    if len(args) != 2:
        args = [DATA / f"gpt2_train_step.{part}.json.gz" for part in ("exploration", "trace")]
    main(*args)
