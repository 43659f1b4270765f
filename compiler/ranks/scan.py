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
from compiler.ranks.fingerprint import guards_digest
from compiler.trace.build import COMPILE_GRAPHS, build_compiles
from compiler.trace.events import Event, event_from_dict
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
_SAME_ACROSS_PROCESSES = COMPILE_GRAPHS - {"before_pre_grad_graph", "after_pre_grad_graph"}
_KEPT_PREFIXES = tuple(
    f'{{"{key}"'.encode()
    for key in (*_HEADER_ONLY, *COMPILE_GRAPHS, "dynamo_cpp_guards_str")
) + tuple(f'{{"artifact": {{"name": "{name}"'.encode() for name in _PAYLOAD_KEPT)
OUTLINE_MARK = "not loaded: "
_PIECE = 4 << 20  # bytes read at a time: memory stays a few pieces whatever the log


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
    events: list[Event] = []
    for index, file in enumerate(files):
        rank = rank_from_name(file)
        rank = index if rank is None and len(files) > 1 else rank
        ranked.append(RankFile(rank=rank, path=str(file), bytes=file.stat().st_size))
        if progress is not None:
            progress(f"scanning rank {rank}: {file.name} ({file.stat().st_size / 1e6:.0f} MB)")
        try:
            events.extend(_file_events(file, rank))
        except (OSError, TraceFormatError) as exc:
            why = f"rank {rank}: cannot read {file}: {exc}; the other ranks are shown"
            errors.append(StageError(stage="trace", message=why))
    result = build_compiles(events, source="trace")
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


def _file_events(file: Path, rank: int | None) -> Iterator[Event]:
    pending = b""
    number = 0
    with file.open("rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            msg = "gzip logs are read in full by load_trace; the outline reads plain .log files"
            raise TraceFormatError(msg)
        fh.seek(0)
        while piece := fh.read(_PIECE):
            data = pending + piece
            starts = [0, *(m.end() for m in _HEADER_START.finditer(data))]
            # the last event may go on in the next piece: keep it for then
            for a, b in itertools.pairwise(starts):
                number += 1
                event = _event(data, a, b, rank, number)
                if event is not None:
                    yield event
            pending = data[starts[-1] :]
        if pending:
            event = _event(pending, 0, len(pending), rank, number + 1)
            if event is not None:
                yield event


def _event(data: bytes, start: int, end: int, rank: int | None, number: int) -> Event | None:
    line_end = data.find(b"\n", start, end)
    line_end = end if line_end < 0 else line_end
    # the JSON starts after the glog prefix's "] "; most events (timings, tensor and
    # symbol descriptions with their stacks, Inductor's texts) are not part of the
    # outline: only the kept kinds are looked at further, by their first bytes
    brace = data.find(b"] {", start, min(line_end, start + 512))
    if brace < 0 or not data.startswith(_KEPT_PREFIXES, brace + 2, line_end):
        return None
    if _GLOG_START.match(data, start, brace) is None:
        return None
    head = data[brace + 2 : line_end]
    try:
        record: dict[str, Any] = json.loads(head)
    except json.JSONDecodeError:
        return None
    key = next(iter(record), "")
    meta = record.get(key)
    name = meta.get("name", "") if key == "artifact" and isinstance(meta, dict) else key
    payload: str | None = None
    if name in _PAYLOAD_KEPT:
        payload = _payload(data, line_end, end)
    elif key == "dynamo_cpp_guards_str":
        payload = OUTLINE_MARK + guards_digest(data[line_end + 2 : end])
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
