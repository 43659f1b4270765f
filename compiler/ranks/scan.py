"""The outline of a multi-rank log directory, read without parsing any graph.

A production run leaves one log per rank, tens of MB each. Its outline — every compile of
every rank, why it recompiled, where it broke, and a fingerprint of each graph and guard
set — is in the event headers and a few small payloads. ``scan_ranks`` streams each file
in pieces, finds the header lines with one regular-expression search per piece (payload
lines start with a tab), decodes only the small payloads it needs, and stands in a short
fingerprint for each graph and guard text (the ``has_payload`` md5 torch wrote, or the
digest of the guards with per-process ids masked). The result is an ``Exploration`` of
outline compiles, which ``compiler.divergence`` compares like any other; a rank's real
compiles come from ``load_trace`` on its file when it is opened.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import TraceFormatError
from compiler.model import Exploration, StageError
from compiler.model.stages import GUARDS, STAGES
from compiler.ranks.fingerprint import GuardsDigest, guards_digest
from compiler.trace.build import build_compiles
from compiler.trace.events import Event, event_from_dict
from compiler.trace.fold import COMPILE_GRAPHS
from compiler.trace.load import environment_of, rank_from_name, trace_files

# the start of every line that is not a payload line (payload lines start with a tab)
_HEADER_START = re.compile(rb"\n(?=[^\t])")
_GLOG_START = re.compile(rb"[VIWEC]\d{4} ")
# events whose payload is small and read in full: they carry why and where
_PAYLOAD_KEPT = frozenset(
    {"recompile_reasons", "dynamo_graph_break_reason", "inductor_collective_schedule"}
)
# events kept without a payload: the compile's identity and its metrics
_HEADER_ONLY = frozenset({"str", "dynamo_start", "compilation_metrics", "bwd_compilation_metrics"})
# graphs whose text is the same in every process of one program: their md5 stands in
_SAME_ACROSS_PROCESSES = COMPILE_GRAPHS - {s.key for s in STAGES if s.per_process}
# the guard tree (``GUARDS``) is kept as a digest
_KEPT_PREFIXES = tuple(
    f'{{"{key}"'.encode() for key in (*_HEADER_ONLY, *COMPILE_GRAPHS, GUARDS)
) + tuple(f'{{"artifact": {{"name": "{name}"'.encode() for name in _PAYLOAD_KEPT)
OUTLINE_MARK = "not loaded: "
# bytes read at a time: memory stays a few pieces whatever the log, since a payload the
# outline does not read is streamed past, not gathered
_PIECE = 1 << 20


@dataclass(frozen=True, slots=True)
class RankFile:
    """One rank's log: its rank, path and size."""

    rank: int | None
    path: str
    bytes: int


@dataclass(frozen=True, slots=True)
class Outline:
    """Every rank's compiles in outline (``exploration``), and the file of each rank."""

    exploration: Exploration
    files: tuple[RankFile, ...]

    def file_of(self, rank: int | None) -> RankFile:
        """The log of ``rank``; KeyError names the ranks there are."""
        for f in self.files:
            if f.rank == rank:
                return f
        raise KeyError(f"no log for rank {rank}; ranks: {[f.rank for f in self.files]}")


def rank_logs(path: str | os.PathLike[str]) -> list[Path]:
    """The log files of a ``TORCH_TRACE`` directory (one per rank)."""
    return trace_files(Path(path))


def scan_ranks(
    path: str | os.PathLike[str], *, progress: Callable[[str], None] | None = None
) -> Outline:
    """The outline of every rank's log under ``path``, streamed, no graph parsed.

    Example:
        >>> outline = scan_ranks("/work/traces-ranks/gpt2_8ranks")  # doctest: +SKIP
        >>> compiler.divergence(outline.exploration).summary  # doctest: +SKIP
    """
    root = Path(path)
    files = trace_files(root)
    errors: list[StageError] = []
    ranked: list[RankFile] = []
    # one event at a time into the compiles: no rank's events are ever held as a list
    result = build_compiles(_every_event(files, ranked, errors, progress), source="trace")
    return Outline(
        exploration=Exploration(
            source="trace",
            target=str(root),
            environment=environment_of(result.facts),
            compiles=tuple(result.compiles),
            errors=tuple(errors),
            notes=(
                "Outline of every rank (compile ids, recompile reasons, graph breaks, "
                "fingerprints): a rank's graphs are read when one of its panes is opened.",
            ),
        ),
        files=tuple(ranked),
    )


def _every_event(
    files: list[Path],
    ranked: list[RankFile],
    errors: list[StageError],
    progress: Callable[[str], None] | None,
) -> Iterator[Event]:
    """The outline events of each file in turn; a file that cannot be read is named in
    ``errors`` and the other files still give theirs."""
    for index, file in enumerate(files):
        rank = rank_from_name(file)
        rank = index if rank is None and len(files) > 1 else rank
        size = file.stat().st_size
        ranked.append(RankFile(rank=rank, path=str(file), bytes=size))
        if progress is not None:
            where = f"{index + 1} of {len(files)}"
            progress(f"scanning rank {rank} ({where}): {file.name}, {size / 1e6:.0f} MB")
        try:
            yield from _file_events(file, rank)
        except (OSError, TraceFormatError) as exc:
            why = f"rank {rank}: cannot read {file}: {exc}; the other ranks are shown"
            errors.append(StageError(stage="trace", message=why))


Head = tuple[dict[str, Any], str, str]  # an outline event's header: record, key, name


class _Passing:
    """An event whose header is read and whose payload goes on into the next pieces:
    the outline needs none of it but a guard tree's digest, so the payload is streamed
    past (a graph of tens of MB is never held) and the event made at its end."""

    def __init__(self, head: Head | None, number: int, skip: int) -> None:
        self.head = head
        self.number = number
        self.skip = skip  # bytes of the next piece still before the payload ("\t")
        self.guards = GuardsDigest() if head is not None and head[1] == GUARDS else None

    def feed(self, piece: bytes) -> None:
        if self.skip:
            piece, self.skip = piece[self.skip :], max(0, self.skip - len(piece))
        if self.guards is not None:
            self.guards.update(piece)

    def event(self, rank: int | None) -> Event | None:
        if self.head is None:
            return None
        text = self.guards.hexdigest() if self.guards is not None else None
        return _made(self.head, text, rank, self.number)


def _file_events(file: Path, rank: int | None) -> Iterator[Event]:
    pending = b""  # the start of an event that goes on in the next piece
    passing: _Passing | None = None
    at_line_start = True  # whether the last piece ended a line
    number = 0
    with file.open("rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            msg = "gzip logs are read in full by load_trace; the outline reads plain .log files"
            raise TraceFormatError(msg)
        fh.seek(0)
        while piece := fh.read(_PIECE):
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
                event = passing.event(rank)
                if event is not None:
                    yield event
                passing, piece = None, piece[cut:]
            data = pending + piece
            at_line_start = data.endswith(b"\n")
            starts = [0, *(m.end() for m in _HEADER_START.finditer(data))]
            for a, b in itertools.pairwise(starts):
                number += 1
                event = _event(data, a, b, rank, number)
                if event is not None:
                    yield event
            # the last event may go on in the next piece: kept whole where its payload is
            # read (small ones) or its header is not all here, else streamed past
            last = starts[-1]
            line_end = data.find(b"\n", last)
            head = _head(data, last, line_end) if line_end >= 0 else None
            if line_end < 0 or (head is not None and head[2] in _PAYLOAD_KEPT):
                pending = data[last:]
                continue
            number += 1
            passing = _Passing(head, number, skip=max(0, line_end + 2 - len(data)))
            passing.feed(data[line_end + 2 :])
            pending = b""
        if passing is not None:
            event = passing.event(rank)
            if event is not None:
                yield event
        elif pending:
            event = _event(pending, 0, len(pending), rank, number + 1)
            if event is not None:
                yield event


def _head(data: bytes, start: int, line_end: int) -> Head | None:
    """The header of the event whose first line is ``data[start:line_end]``, where it is
    one the outline keeps; else None."""
    # the JSON starts after the glog prefix's "] "; most events (timings, tensor and
    # symbol descriptions with their stacks, Inductor's texts) are not part of the
    # outline: only the kept kinds are looked at further, by their first bytes
    brace = data.find(b"] {", start, min(line_end, start + 512))
    if brace < 0 or not data.startswith(_KEPT_PREFIXES, brace + 2, line_end):
        return None
    if _GLOG_START.match(data, start, brace) is None:
        return None
    try:
        record: dict[str, Any] = json.loads(data[brace + 2 : line_end])
    except json.JSONDecodeError:
        return None
    key = next(iter(record), "")
    meta = record.get(key)
    name = meta.get("name", "") if key == "artifact" and isinstance(meta, dict) else key
    return record, key, name


def _event(data: bytes, start: int, end: int, rank: int | None, number: int) -> Event | None:
    line_end = data.find(b"\n", start, end)
    line_end = end if line_end < 0 else line_end
    head = _head(data, start, line_end)
    if head is None:
        return None
    text: str | None = None
    if head[2] in _PAYLOAD_KEPT:
        text = _payload(data, line_end, end)
    elif head[1] == GUARDS:
        text = guards_digest(data[line_end + 2 : end])
    return _made(head, text, rank, number)


def _made(head: Head, text: str | None, rank: int | None, number: int) -> Event | None:
    """The outline event of ``head``; ``text``: the payload where it is kept, the guard
    tree's digest for guards."""
    record, key, name = head
    payload: str | None = None
    if name in _PAYLOAD_KEPT:
        payload = text
    elif key == GUARDS:
        payload = OUTLINE_MARK + (text or "")
    elif key in _SAME_ACROSS_PROCESSES:
        payload = f"{OUTLINE_MARK}md5 {record.get('has_payload', '')}"
    elif key in COMPILE_GRAPHS:
        payload = OUTLINE_MARK + "per-process text"
    elif key not in _HEADER_ONLY:
        return None
    record.pop("has_payload", None)
    event = event_from_dict(record, payload, number)
    if event is not None and event.rank is None:
        event.rank = rank
    return event


def _payload(data: bytes, line_end: int, end: int) -> str:
    block = data[line_end + 2 : end].decode("utf-8", errors="replace")
    return block.rstrip("\n").replace("\n\t", "\n")
