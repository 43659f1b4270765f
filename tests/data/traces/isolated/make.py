"""The fixture ``colliding_ids.log``: two ``isolate_recompiles=True`` regions of one function,
with compile ids as newer torch numbers them (pytorch issue #196495).

torch 2.13 numbers every compile of a code object in one sequence, regions or not: the
program below compiles ``0/0`` (region a), ``0/1`` and ``0/2`` (region b, a recompile for a
second shape). Newer torch numbers each region's compiles apart, so region b's compiles
are ``0/0`` and ``0/1`` too and the ids collide in the trace. This script takes the real
2.13 trace and renumbers region b as newer torch does: every compile id after the first
compile of frame 0 goes down by one (headers and the payloads that name an id; each
edited payload's md5 written again). Nothing else is changed.

    TORCH_TRACE=/tmp/iso python make.py            # torch 2.13 CPU: the real trace
    python make.py /tmp/iso/*.log > colliding_ids.log
"""

import hashlib
import json
import re
import sys

import torch


def step(x):
    return torch.sin(x) * 2


def collide(lines: list[str]) -> list[str]:
    """Region b's compile ids one lower, payload md5s recomputed."""
    out: list[str] = []
    header_at = -1
    payload: list[str] = []

    def flush() -> None:
        if header_at < 0 or not payload:
            return
        head = out[header_at]
        prefix, _, record = head.partition("] ")
        meta = json.loads(record)
        if "has_payload" in meta:
            text = "\n".join(p[1:] for p in payload)
            meta["has_payload"] = hashlib.md5(text.encode()).hexdigest()
            out[header_at] = f"{prefix}] {json.dumps(meta)}"

    for line in lines:
        if line.startswith("\t"):
            fixed = re.sub(r'"0/([1-9]\d*)', lambda m: f'"0/{int(m[1]) - 1}', line)
            payload.append(fixed)
            out.append(fixed)
            continue
        flush()
        payload = []
        fixed = re.sub(
            r'("frame_id": 0, "frame_compile_id": )([1-9]\d*)',
            lambda m: f"{m[1]}{int(m[2]) - 1}",
            line,
        )
        header_at = len(out)
        out.append(fixed)
    flush()
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            sys.stdout.write("\n".join(collide(f.read().split("\n"))))
    else:
        a = torch.compile(step, backend="eager", isolate_recompiles=True)
        b = torch.compile(step, backend="eager", isolate_recompiles=True)
        a(torch.randn(4))
        b(torch.randn(4))
        b(torch.randn(4, 2))
