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

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from compiler.errors import TraceFormatError
from compiler.model import Exploration, StageError
from compiler.model.stages import GUARDS, STAGES
from compiler.ranks.fingerprint import GraphDigest, GuardsDigest
from compiler.trace.build import build_compiles
from compiler.trace.events import Event, ParseStats, Skim, skim_trace
from compiler.trace.fold import CACHE_EVENTS, COMPILE_GRAPHS
from compiler.trace.load import bad_lines, environment_of, rank_from_name, trace_files

# events whose payload is small and read in full: they carry why and where
_PAYLOAD_KEPT = frozenset(
    {"recompile_reasons", "dynamo_graph_break_reason", "inductor_collective_schedule"}
)
# events kept without a payload: the compile's identity and its metrics
_HEADER_ONLY = frozenset({"str", "dynamo_start", "compilation_metrics", "bwd_compilation_metrics"})
# graphs whose text is the same in every process of one program but for the rank's own
# device (``cuda:1``): their digest with the device index masked stands in (torch's md5
# would tell two GPUs apart)
_SAME_ACROSS_PROCESSES = COMPILE_GRAPHS - {s.key for s in STAGES if s.per_process}
# the guard tree (``GUARDS``) is kept as a digest; cache hits and misses by their name
# (the ranks' cache skew)
_KEPT_PREFIXES = tuple(
    f'{{"{key}"'.encode() for key in (*_HEADER_ONLY, *COMPILE_GRAPHS, GUARDS)
) + tuple(
    f'{{"artifact": {{"name": "{name}"'.encode()
    for name in (*_PAYLOAD_KEPT, *sorted(CACHE_EVENTS))
)
OUTLINE_MARK = "not loaded: "
# the one trace reader's skip-payload mode: the events above, guards digested piece by piece
_SKIM = Skim(
    heads=_KEPT_PREFIXES,
    texts=_PAYLOAD_KEPT,
    digests={GUARDS: GuardsDigest, **dict.fromkeys(_SAME_ACROSS_PROCESSES, GraphDigest)},
)
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
        stats = ParseStats()
        try:
            yield from _file_events(file, rank, stats)
        except (OSError, TraceFormatError) as exc:
            why = f"rank {rank}: cannot read {file}: {exc}; the other ranks are shown"
            errors.append(StageError(stage="trace", message=why))
            continue
        errors.extend(bad_lines(file, rank, stats))


def _file_events(file: Path, rank: int | None, stats: ParseStats) -> Iterator[Event]:
    with file.open("rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            msg = "gzip logs are read in full by load_trace; the outline reads plain .log files"
            raise TraceFormatError(msg)
        fh.seek(0)
        # ``_PIECE`` read when the file is: tests cut the same log into other sizes
        pieces = iter(functools.partial(fh.read, _PIECE), b"")
        for event in skim_trace(pieces, stats, _SKIM):
            outline = _outline(event, rank)
            if outline is not None:
                yield outline


def _outline(event: Event, rank: int | None) -> Event | None:
    """The outline event of ``event``: the payload where it is kept, the guard tree's
    digest for guards, a graph's digest (device masked) for graphs every process prints
    alike, a cache event's name."""
    md5 = event.context.pop("has_payload", "")
    key, name = event.key, event.name
    if name in _PAYLOAD_KEPT:
        pass
    elif key == GUARDS:
        event.payload = OUTLINE_MARK + (event.payload or "")
    elif name in _SAME_ACROSS_PROCESSES:
        event.payload = f"{OUTLINE_MARK}digest {event.payload or md5}"
    elif name in CACHE_EVENTS:
        event.payload = ""
    elif key in COMPILE_GRAPHS:
        event.payload = OUTLINE_MARK + "per-process text"
    elif key not in _HEADER_ONLY:
        return None
    if event.rank is None:
        event.rank = rank
    return event
