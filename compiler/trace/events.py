"""Structured trace events: one shape for live log records and ``TORCH_TRACE`` lines.

torch's structured trace writes one JSON object per event, whose single
non-context key names the event (``dynamo_output_graph``, ``artifact``, ...), plus
an optional text payload. Live capture receives the same objects as log records.
Both become ``Event``s here, and ``build`` turns Events into an Exploration.

This is the one reader of ``TORCH_TRACE`` logs, with two modes over one grammar (the
glog prefix, the JSON header, payload lines led by a tab, the ``has_payload`` md5) and
one count of bad lines (``ParseStats``): ``parse_trace_chunks`` reads every event with
its payload (``load_trace``); ``skim_trace`` reads only the events a ``Skim`` names and
streams every other payload past, never gathering it, so memory stays a few pieces
whatever the log (the rank outline, ``compiler.ranks.scan``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from compiler.model import CompileId
from compiler.parse.words.trace_lines import GLOG as _GLOG
from compiler.parse.words.trace_lines import GLOG_HEAD as _GLOG_HEAD
from compiler.parse.words.trace_lines import HEADER_START as _HEADER_START
from compiler.parse.words.trace_lines import PAYLOAD_END as _PAYLOAD_END

# Keys torch adds around every event (torch/_logging/_internal.py trace_structured).
CONTEXT_KEYS = frozenset(
    {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "severity",
     "timestamp", "pathname", "thread", "subgraph_name", "has_payload", "stack"}
)  # fmt: skip



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
    """What the trace reader saw: lines read, events kept (``skim_trace``: events whose
    header it read or passed), and the bad ones (line number, why)."""

    lines: int = 0
    events: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    # the header line of the last good event: a bad event after it ended the file
    last_event_line: int = 0


_NO_EVENT = "payload line with no event before it"


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
            stats.bad.append((number, _NO_EVENT))
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
                stats.bad.append((header_number + 1, _NO_EVENT))
            continue
        record = _header(line, header_number, stats)
        if record is None:
            # as line by line: a payload after a bad header belongs to no event
            if payload_lines is not None:
                stats.bad.extend(
                    (k, _NO_EVENT)
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
    if payload is None and record.get("has_payload"):
        payload = ""
    if not _md5_matches(record, payload, number, stats):
        return None
    event = event_from_dict(record, payload, number)
    if event is None:
        stats.bad.append((number, "object names no event"))
    return event


def _md5_matches(
    record: dict[str, Any], payload: str | None, number: int, stats: ParseStats
) -> bool:
    """Whether ``payload`` is what the header's ``has_payload`` md5 says (a bad line if not)."""
    expected = record.get("has_payload")
    if not expected:
        return True
    digest = hashlib.md5((payload or "").encode("utf-8"), usedforsecurity=False).hexdigest()
    if digest != expected:
        stats.bad.append((number, "payload does not match its md5 (truncated file?)"))
        return False
    return True


# --- the skip-payload mode --------------------------------------------------------------



class Digest(Protocol):
    """A fingerprint of a payload fed piece by piece (``hashlib``'s shape)."""

    def update(self, piece: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


@dataclass(frozen=True)
class Skim:
    """What ``skim_trace`` reads of a log. ``heads``: how the JSON of the events it reads
    starts (``{"dynamo_start"``); any other header is only checked to be a trace line,
    and its payload streamed past. Of the events read, those named in ``texts`` (event
    key or artifact name) get their payload whole (small ones: it is gathered), those in
    ``digests`` the hex digest of their raw payload bytes, fed piece by piece; the rest
    none."""

    heads: tuple[bytes, ...]
    texts: frozenset[str] = frozenset()
    digests: Mapping[str, Callable[[], Digest]] = field(default_factory=dict)


# what a header line is, where it is not an event read: passed (a good trace line
# ``Skim`` does not read), blank, a payload line with no header, or bad (why, a string)
_PASS, _BLANK, _ORPHAN = range(3)
_Head = Event | int | str


def skim_trace(pieces: Iterable[bytes], stats: ParseStats, skim: Skim) -> Iterator[Event]:
    """The events ``skim`` names, from a ``TORCH_TRACE`` log read in pieces of any size
    (``fh.read(n)`` in binary), with bad lines counted in ``stats`` as
    ``parse_trace_chunks`` counts them. Only the headers ``skim`` names are decoded; an
    event's payload it does not read is streamed past (a graph of tens of MB is never
    held), so memory stays a few pieces whatever the log. Payloads passed are not
    checked against their md5; the text ones read are.

    Example:
        >>> log = b'V1122 19:50:00.1 1 a.py:1] {"str": ["f.py", 0]}\\n\\tskipped\\nnot a line\\n'
        >>> stats = ParseStats()
        >>> [e.key for e in skim_trace([log[:30], log[30:]], stats, Skim(heads=(b'{"str"',)))]
        ['str']
        >>> stats.bad
        [(3, 'not a structured trace line')]
    """
    pending = b""  # the start of an event that goes on in the next piece
    passing: _Passing | None = None
    at_line_start = True  # whether the last piece ended a line
    number = 1  # the line number of the first line of ``pending``
    glog, heads = _GLOG_HEAD.match, skim.heads
    for piece in pieces:
        if passing is not None:
            # the payload goes on to the next line that starts with no tab
            if at_line_start and piece[:1] != b"\t":
                cut = 0
            else:
                m = _HEADER_START.search(piece)
                cut = -1 if m is None else m.end()
            at_line_start = piece.endswith(b"\n")
            passing.feed(piece if cut < 0 else piece[:cut])
            if cut < 0:
                continue
            event = passing.end(stats)
            if event is not None:
                yield event
            number = passing.number + passing.newlines
            passing, piece = None, piece[cut:]
        data = pending + piece
        at_line_start = data.endswith(b"\n")
        starts = [0, *(m.end() for m in _HEADER_START.finditer(data))]
        counted = 0  # ``number`` is the line of ``data[counted]``
        good = -1  # where the last good event of ``data`` starts
        for a, b in itertools.pairwise(starts):
            line_end = data.find(b"\n", a, b)
            # most events are passed: a trace line whose JSON ``skim`` does not read
            m = glog(data, a, line_end)
            if m is not None and not data.startswith(heads, m.end() - 1, line_end):
                stats.events += 1
                good = a
                continue
            number += data.count(b"\n", counted, a)
            counted = a
            event = _skimmed(data, a, b, number, stats, skim)
            if event is not None:
                good = a
                yield event
        if good > counted:
            stats.last_event_line = number + data.count(b"\n", counted, good)
        # the last event may go on in the next piece: kept whole where its payload is
        # read (small ones) or its header is not all here, else streamed past
        last = starts[-1]
        number += data.count(b"\n", counted, last)
        line_end = data.find(b"\n", last)
        head = _head(data, last, line_end, number, skim) if line_end >= 0 else _BLANK
        if line_end < 0 or (isinstance(head, Event) and head.name in skim.texts):
            pending = data[last:]
            continue
        passing = _Passing(head, number, skim, skip=max(0, line_end + 2 - len(data)))
        _count(head, number, stats)
        passing.feed(data[last:], header=line_end + 1 - last)
        pending = b""
    if passing is not None:
        event = passing.end(stats)
        number = passing.number + passing.newlines + (not passing.ended)
        if event is not None:
            yield event
    elif pending:
        event = _skimmed(pending, 0, len(pending), number, stats, skim)
        number += pending.count(b"\n") + (not pending.endswith(b"\n"))
        if event is not None:
            yield event
    # every line, the last one with no line break too
    stats.lines += number - 1


class _Passing:
    """An event whose header is read and whose payload goes on into the next pieces:
    the payload is streamed past (fed to the event's digest, where ``Skim`` asks for
    one) and the event made at its end."""

    def __init__(self, head: _Head, number: int, skim: Skim, skip: int) -> None:
        self.head = head
        self.number = number  # the header's line
        self.newlines = 0  # line breaks fed, the header's included
        self.ended = True  # whether the bytes fed end a line
        self.skip = skip  # bytes of the next piece still before the payload ("\t")
        make = skim.digests.get(head.name) if isinstance(head, Event) else None
        self.digest = make() if make is not None else None

    def feed(self, part: bytes, header: int = 0) -> None:
        """The next bytes of the event; the first ``header`` are its header line."""
        if not part:
            return
        self.newlines += part.count(b"\n")
        self.ended = part.endswith(b"\n")
        if self.digest is None:
            return
        payload = part[header + 1 :] if header else part
        if self.skip and not header:
            payload, self.skip = payload[self.skip :], max(0, self.skip - len(payload))
        self.digest.update(payload)

    def end(self, stats: ParseStats) -> Event | None:
        _orphans(self.head, self.number, self.newlines + (not self.ended) - 1, stats)
        if not isinstance(self.head, Event):
            return None
        if self.digest is not None:
            self.head.payload = self.digest.hexdigest()
        return self.head


def _head(data: bytes, start: int, line_end: int, number: int, skim: Skim) -> _Head:
    """What the line ``data[start:line_end]`` is: the event it heads where ``skim`` reads
    it (no payload yet), else ``_PASS``, ``_BLANK``, ``_ORPHAN`` or why it is bad."""
    if data.startswith(b"\t", start):
        return _ORPHAN
    m = _GLOG_HEAD.match(data, start, line_end)
    if m is None:
        return _BLANK if not data[start:line_end].strip() else "not a structured trace line"
    brace = m.end() - 1
    if not data.startswith(skim.heads, brace, line_end):
        return _PASS
    try:
        record = json.loads(data[brace:line_end].decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        return f"bad JSON: {exc.msg}"
    if not isinstance(record, dict):
        return "JSON is not an object"
    event = event_from_dict(record, None, number)
    return "object names no event" if event is None else event


def _count(head: _Head, number: int, stats: ParseStats) -> None:
    if isinstance(head, str):
        stats.bad.append((number, head))
    elif isinstance(head, Event) or head == _PASS:
        stats.events += 1
        stats.last_event_line = number


def _orphans(head: _Head, number: int, payload_lines: int, stats: ParseStats) -> None:
    """Count the payload lines of a header that heads no event, as the full mode does."""
    if head == _ORPHAN:
        stats.bad.extend((k, _NO_EVENT) for k in range(number, number + payload_lines + 1))
    elif isinstance(head, str) and payload_lines > 0:
        stats.bad.extend((k, _NO_EVENT) for k in range(number + 1, number + payload_lines + 1))
    elif head == _BLANK and payload_lines > 0:
        stats.bad.append((number + 1, _NO_EVENT))


def _skimmed(
    data: bytes, start: int, end: int, number: int, stats: ParseStats, skim: Skim
) -> Event | None:
    """The event of the lines ``data[start:end]`` (whole) where ``skim`` reads it."""
    line_end = data.find(b"\n", start, end)
    line_end = end if line_end < 0 else line_end
    head = _head(data, start, line_end, number, skim)
    if not isinstance(head, Event):
        _count(head, number, stats)
        if line_end + 1 < end:  # the lines of its payload
            lines = data.count(b"\n", line_end + 1, end) + (data[end - 1 : end] != b"\n")
            _orphans(head, number, lines, stats)
        else:
            _orphans(head, number, 0, stats)
        return None
    if head.name in skim.texts:
        text = None  # as ``parse_trace_text``: none without payload lines, unless promised
        if line_end + 1 < end:
            text = data[line_end + 2 : end].decode("utf-8", errors="replace")
            text = (text[:-1] if text.endswith("\n") else text).replace("\n\t", "\n")
            if "\r" in text:
                text = "\n".join(ln.rstrip("\r") for ln in text.split("\n"))
        elif head.context.get("has_payload"):
            text = ""
        if not _md5_matches(head.context, text, number, stats):
            return None
        head.payload = text
    else:
        make = skim.digests.get(head.name)
        if make is not None:
            digest = make()
            digest.update(data[line_end + 2 : end])
            head.payload = digest.hexdigest()
    _count(head, number, stats)
    return head
