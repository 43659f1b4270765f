"""``load_trace``: read what ``TORCH_TRACE=dir`` wrote into an Exploration.

Parsing reads text only: a trace file is never imported or executed.
"""

from __future__ import annotations

import gzip
import lzma
import os
from collections.abc import Iterator
from pathlib import Path

from compiler.errors import TraceFormatError
from compiler.model import Environment, Exploration, StageError
from compiler.parse.words.trace_lines import rank_in_name
from compiler.trace.build import build_compiles
from compiler.trace.events import Event, ParseStats, parse_trace_chunks


def load_trace(path: str | os.PathLike[str], *, strict: bool = False) -> Exploration:
    """Load a ``TORCH_TRACE`` log file or directory (one rank or many, gzip or xz too).

    Bad lines are counted and skipped; each becomes a ``StageError`` naming the file
    and line. With ``strict=True`` any bad line raises ``TraceFormatError``.

    Example:
        >>> exp = compiler.load_trace("/tmp/my_trace")  # doctest: +SKIP
        >>> exp.compiles[0].graphs["dynamo_output_graph"].nodes  # doctest: +SKIP
    """
    root = Path(path)
    files = trace_files(root)
    errors: list[StageError] = []
    seen = [0]
    # events stream into the builder, so only what it keeps stays in memory
    result = build_compiles(_events(files, errors, seen), source="trace")
    if strict and errors:
        shown = "; ".join(e.message for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise TraceFormatError(f"{len(errors)} bad line(s) in {root}: {shown}{more}")
    if not seen[0]:
        msg = (
            f"{root} holds no torch.compile structured trace events. Point load_trace at the "
            "directory given as TORCH_TRACE (or one of its .log files) of a run that compiled."
        )
        raise TraceFormatError(msg)
    return Exploration(
        source="trace",
        target=str(root),
        environment=environment_of(result.facts),
        compiles=tuple(result.compiles),
        errors=tuple(errors),
    )


def _events(files: list[Path], errors: list[StageError], seen: list[int]) -> Iterator[Event]:
    """Every file's events, ranked; bad lines go to ``errors``, the count to ``seen[0]``."""
    multi = len(files) > 1
    errors.extend(_missing_ranks(files) if multi else ())
    for index, file in enumerate(files):
        stats = ParseStats()
        # the rank in the file's name stands for events that carry none (the string
        # table's), also when one rank's file is read alone
        file_rank = rank_from_name(file)
        if multi and file_rank is None:
            file_rank = index
        try:
            for event in parse_trace_chunks(_read_chunks(file), stats):
                if event.rank is None:
                    event.rank = file_rank
                seen[0] += 1
                yield event
        except TraceFormatError as exc:
            if not multi:
                raise
            # one unreadable rank costs that rank only: the others still load
            errors.append(StageError(stage="trace", message=f"rank {file_rank}: {exc}"))
            continue
        errors.extend(bad_lines(file, file_rank, stats))
        if stats.events == 0 and not stats.bad:
            errors.append(StageError(stage="trace", message=f"{file}: no structured trace events"))


def bad_lines(file: Path, rank: int | None, stats: ParseStats) -> list[StageError]:
    """Each bad line the reader counted in ``file`` as a ``StageError``, and where the
    last one has no good event after it, that the file ends mid-event."""
    errors = [StageError(stage="trace", message=f"{file}:{line}: {why}") for line, why in stats.bad]
    if stats.events and stats.bad and stats.bad[-1][0] > stats.last_event_line:
        errors.append(StageError(stage="trace", message=_truncated(file, rank, stats)))
    return errors


def _truncated(file: Path, rank: int | None, stats: ParseStats) -> str:
    who = f"rank {rank}'s log" if rank is not None else "the log"
    return (
        f"{who} {file.name} ends in the middle of an event (line {stats.bad[-1][0]}): the "
        "file was cut short (the process died, or the copy is incomplete). Everything "
        "before that line is loaded; compiles after it are missing"
        + (", and the other ranks are loaded in full." if rank is not None else ".")
    )


def _missing_ranks(files: list[Path]) -> list[StageError]:
    """A gap in the ranks the file names give (0 and 2, no 1): that rank wrote no log."""
    ranks = sorted({r for f in files if (r := rank_from_name(f)) is not None})
    if not ranks:
        return []
    missing = sorted(set(range(ranks[-1] + 1)) - set(ranks))
    return [
        StageError(
            stage="trace",
            message=(
                f"no log for rank {r}: ranks {', '.join(map(str, ranks))} have one. That rank "
                "wrote no TORCH_TRACE file (it crashed or never compiled, or the file was not "
                "copied); the other ranks are loaded."
            ),
        )
        for r in missing
    ]


def trace_files(root: Path) -> list[Path]:
    if not root.exists():
        msg = (
            f"no trace at {root}: the path does not exist. "
            "Pass the TORCH_TRACE directory or a .log file."
        )
        raise TraceFormatError(msg)
    if root.is_file():
        return [root]
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and (p.name.endswith((".log", ".log.gz", ".log.xz")))
    )
    if not files:
        msg = (
            f"no trace logs (*.log, *.log.gz, *.log.xz) in {root}. "
            "Is it the directory TORCH_TRACE pointed at?"
        )
        raise TraceFormatError(msg)
    return files


def rank_from_name(file: Path) -> int | None:
    return rank_in_name(file.name)


_CHUNK = 1 << 20  # characters per read: large enough that per-piece work is negligible


def _read_chunks(file: Path) -> Iterator[str]:
    try:
        with file.open("rb") as probe:
            magic = probe.read(6)
        # xz: a multi-rank run's logs are 5x smaller than gzip's (repeated graphs)
        xz = magic == b"\xfd7zXZ\x00"
        opener = gzip.open if magic[:2] == b"\x1f\x8b" else lzma.open if xz else open
        with opener(file, "rt", encoding="utf-8", errors="replace", newline="") as fh:
            while chunk := fh.read(_CHUNK):
                yield chunk
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise TraceFormatError(f"cannot read trace file {file}: {exc}") from exc


def environment_of(facts: dict[str, object]) -> Environment:
    version = facts.get("torch_version")
    torch_v = str(
        facts.get("pytorch_version")
        or (version.get("pytorch_version") if isinstance(version, dict) else "")
        or ""
    )
    python = str(facts.get("python_version") or "").split(" ")[0]
    return Environment(
        torch=torch_v,
        triton=str(facts.get("triton_version") or ""),
        python=python,
        platform="",
        device=str(facts.get("device") or ""),
    )
