"""Reading a ``torch.profiler`` Chrome trace: the file (plain or gzip, or the newest of a
``tensorboard_trace_handler`` folder) and its events, as plain dicts. Nothing in it runs."""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import TraceFormatError


@dataclass(frozen=True, slots=True)
class Span:
    """One complete (``ph == "X"``) event: where and when it ran, and what it said."""

    name: str
    cat: str
    tid: str
    ts: float
    dur: float
    args: dict[str, Any]

    @property
    def end(self) -> float:
        return self.ts + self.dur


def trace_file(path: str | os.PathLike[str]) -> tuple[Path, tuple[str, ...]]:
    """The trace file at ``path``: the file itself, or the newest ``*.json``/``*.json.gz``
    of a folder; with a note when the folder held several."""
    p = Path(path)
    if p.is_file():
        return p, ()
    if not p.is_dir():
        raise TraceFormatError(f"no profiler trace at {p}: no such file or folder")
    found = sorted(
        (f for f in p.iterdir() if f.name.endswith((".json", ".json.gz")) and f.is_file()),
        key=lambda f: (f.stat().st_mtime, f.name),
    )
    if not found:
        raise TraceFormatError(f"no profiler trace in {p}: no .json or .json.gz file there")
    note = (f"{p} holds {len(found)} traces; read the newest, {found[-1].name}",)
    return found[-1], note if len(found) > 1 else ()


def read_spans(path: Path) -> list[Span]:
    """The complete events of a Chrome trace (``traceEvents``), in file order."""
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
    except (OSError, ValueError, EOFError) as err:
        raise TraceFormatError(f"{path} is not a readable profiler trace: {err}") from err
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceFormatError(f"{path} has no traceEvents: not a torch.profiler Chrome trace")
    spans = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0))
        except (TypeError, ValueError):
            continue
        args = e.get("args")
        spans.append(
            Span(
                name=str(e.get("name", "")),
                cat=str(e.get("cat", "")),
                tid=str(e.get("pid", "")) + "/" + str(e.get("tid", "")),
                ts=ts,
                dur=dur,
                args=args if isinstance(args, dict) else {},
            )
        )
    return spans
