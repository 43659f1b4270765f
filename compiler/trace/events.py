"""Structured trace events: one shape for live log records and ``TORCH_TRACE`` lines.

torch's structured trace writes one JSON object per event, whose single
non-context key names the event (``dynamo_output_graph``, ``artifact``, ...), plus
an optional text payload. Live capture receives the same objects as log records.
Both become ``Event``s here, and ``build`` turns Events into an Exploration.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from compiler.model import CompileId

# Keys torch adds around every event (torch/_logging/_internal.py trace_structured).
CONTEXT_KEYS = frozenset(
    {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "severity",
     "timestamp", "pathname", "thread", "subgraph_name", "has_payload", "stack"}
)  # fmt: skip

# "V1122 19:50:00.123456 4242 torch/_dynamo/convert_frame.py:1234] {...}"
_GLOG = re.compile(r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^\]]*\] (?P<json>\{.*)$")


@dataclass
class Event:
    """One structured trace event."""

    key: str
    metadata: Any
    payload: str | None = None
    compile_id: CompileId | None = None
    rank: int | None = None
    line: int = 0
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The artifact name for ``artifact`` events, else the event key."""
        if self.key == "artifact" and isinstance(self.metadata, dict):
            return str(self.metadata.get("name", "artifact"))
        return self.key


def event_from_dict(record: dict[str, Any], payload: str | None, line: int = 0) -> Event | None:
    """Build an Event from a trace object (the JSON of one line, or ``record.metadata``)."""
    key = next((k for k in record if k not in CONTEXT_KEYS), None)
    if key is None:
        return None
    compile_id = None
    if record.get("frame_id") is not None or record.get("compiled_autograd_id") is not None:
        compile_id = CompileId(
            frame_id=record.get("frame_id"),
            frame_compile_id=record.get("frame_compile_id"),
            attempt=int(record.get("attempt") or 0),
            compiled_autograd_id=record.get("compiled_autograd_id"),
        )
    context = {k: v for k, v in record.items() if k in CONTEXT_KEYS}
    return Event(
        key=key,
        metadata=record[key],
        payload=payload,
        compile_id=compile_id,
        rank=record.get("rank"),
        line=line,
        context=context,
    )


@dataclass
class ParseStats:
    """What the trace reader saw: lines read, events kept, and the bad ones."""

    lines: int = 0
    events: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    # the header line of the last good event: a bad event after it ended the file
    last_event_line: int = 0


# the line break that ends a payload block: the next line does not start with a tab
_PAYLOAD_END = re.compile(r"\n(?!\t)")


def parse_trace_chunks(chunks: Iterable[str], stats: ParseStats) -> Iterator[Event]:
    """Events from a ``TORCH_TRACE`` log read in pieces of any size (``fh.read(n)``).

    Each piece is cut before its last event, whose payload may go on in the next one,
    so at most one piece and the payloads kept are in memory at a time.
    """
    pending = ""
    number = 1
    for chunk in chunks:
        text = pending + chunk
        cut = _last_event_start(text)
        if cut <= 0:
            pending = text
            continue
        yield from parse_trace_text(text, stats, number, stop=cut)
        number += text.count("\n", 0, cut)
        pending = text[cut:]
    if pending:
        yield from parse_trace_text(pending, stats, number)


def _last_event_start(text: str) -> int:
    """Index of the start of the last line that is not a payload line (0 if none)."""
    i = text.rfind("\n", 0, len(text) - 1)
    while i >= 0 and text.startswith("\t", i + 1):
        i = text.rfind("\n", 0, i)
    return i + 1 if i >= 0 else 0


def parse_trace_text(
    text: str, stats: ParseStats, first_line: int = 1, *, stop: int | None = None
) -> Iterator[Event]:
    """Events from the text of a ``TORCH_TRACE`` log up to ``stop`` (``first_line`` is the
    line number of its first line), with payloads cut out of the text in one slice each
    (the lines of a payload are contiguous and start with a tab), not line by line."""
    n = len(text) if stop is None else stop
    pos = 0
    number = first_line
    while pos < n:
        end = text.find("\n", pos)
        if end < 0:
            end = n
        line = text[pos:end].rstrip("\r")
        if line.startswith("\t"):
            stats.lines += 1
            stats.bad.append((number, "payload line with no event before it"))
            pos, number = end + 1, number + 1
            continue
        header_number = number
        stats.lines += 1
        pos, number = end + 1, number + 1
        # the payload: every following line that starts with a tab, up to the first line
        # break not followed by one (one search, not a step per line)
        payload_start = pos
        if pos < n and text.startswith("\t", pos):
            end_of_block = _PAYLOAD_END.search(text, pos, n)
            pos = n if end_of_block is None else end_of_block.end()
            count = text.count("\n", payload_start, pos) + (end_of_block is None)
            number += count
            stats.lines += count
        payload_lines = None
        if pos > payload_start:
            block = text[payload_start + 1 : pos]
            if block.endswith("\n"):
                block = block[:-1]
            payload_lines = block.replace("\n\t", "\n")
            if "\r" in payload_lines:
                payload_lines = "\n".join(ln.rstrip("\r") for ln in payload_lines.split("\n"))
        if not line.strip():
            if payload_lines is not None:
                stats.bad.append((header_number + 1, "payload line with no event before it"))
            continue
        record = _header(line, header_number, stats)
        if record is None:
            # as line by line: a payload after a bad header belongs to no event
            if payload_lines is not None:
                stats.bad.extend(
                    (k, "payload line with no event before it")
                    for k in range(header_number + 1, number)
                )
            continue
        event = _checked_event(record, header_number, payload_lines, stats)
        if event is not None:
            stats.events += 1
            stats.last_event_line = header_number
            yield event


def _header(line: str, number: int, stats: ParseStats) -> dict[str, Any] | None:
    m = _GLOG.match(line)
    if not m:
        stats.bad.append((number, "not a structured trace line"))
        return None
    try:
        record = json.loads(m["json"])
    except json.JSONDecodeError as exc:
        stats.bad.append((number, f"bad JSON: {exc.msg}"))
        return None
    if not isinstance(record, dict):
        stats.bad.append((number, "JSON is not an object"))
        return None
    return record


def _checked_event(
    record: dict[str, Any], number: int, payload: str | None, stats: ParseStats
) -> Event | None:
    expected = record.get("has_payload")
    if expected:
        if payload is None:
            payload = ""
        digest = hashlib.md5(payload.encode("utf-8"), usedforsecurity=False).hexdigest()
        if digest != expected:
            stats.bad.append((number, "payload does not match its md5 (truncated file?)"))
            return None
    event = event_from_dict(record, payload, number)
    if event is None:
        stats.bad.append((number, "object names no event"))
    return event
