"""What Inductor's ``cudagraphs`` and ``perf_hints`` log artifacts say about CUDA graphs
(torch 2.11/2.13 ``cudagraph_trees.py``, ``cudagraph_utils.py``, ``scheduler.py``):

- ``skipping cudagraphs due to mutated inputs (1 instances). Found from : <stack>``;
- ``Created 3 graph partitions: 2 cudagraphable, 1 non-cudagraphable``, then per op of a
  non-cudagraphable partition ``buf3: reason=cpu ops, ir=..., fx=...`` and its stack;
- ``[0/0] Recording cudagraph tree for symint key 8`` (or ``for graph without symints``);
- ``Unable to hit fast path of CUDAGraphs because of pending, uninvoked backwards``.

Messages arrive as ``"<artifact>: <message>"`` lines (how a recording keeps them in its
notes); stacks as torch prints them (``File "x.py", line 9, in f`` then the code line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compiler.parse.words.settings import cudagraph_skip_cause

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>.]+)')
_PARTITIONS = re.compile(
    r"Created (?P<n>\d+) graph partitions: (?P<ok>\d+) cudagraphable, (?P<no>\d+) non-cudagraphable"
)
_OP = re.compile(r"^\s*(?P<buf>\w+): reason=(?P<reason>[^,]+)(?:, ir=[^,]*)?(?:, fx=(?P<fx>.*))?$")
_TREE = re.compile(
    r"^(?:\[(?P<cid>[^\]]+)\] )?Recording cudagraph tree for "
    r"(?:symint key (?P<key>.+)|graph without symints)$"
)
_RECORDING = re.compile(r"^\[(?P<cid>[^\]]+)\] Recording function=")
_WARMUP = re.compile(r"^\[(?P<cid>[^\]]+)\] Running warmup function=")
_RERECORD = re.compile(r"^\[(?P<cid>[^\]]+)\] Re-recording function=.*reason=(?P<reason>.*)$")
_PENDING = "pending, uninvoked backward"
_CALL = re.compile(r"^call: batch (?P<b>\d+), (?P<ms>[\d.]+) ms, pool (?P<pool>\d+) bytes$")


@dataclass(frozen=True)
class UserFrame:
    """One frame of a stack torch printed: file, line, function and the code line."""

    filename: str
    line: int
    function: str
    code: str = ""


@dataclass(frozen=True)
class Skip:
    """Why CUDA graphs were skipped: ``cause`` (``mutated``, ``cpu``, ``dynamic``, ...,
    ``""`` for another), the reason's first line, and the user's frames it names."""

    cause: str
    reason: str
    frames: tuple[UserFrame, ...] = ()


@dataclass(frozen=True)
class PartitionOp:
    """An op that kept its partition out of CUDA graphs: its buffer, torch's reason
    (``cpu ops``), the FX call and the user's frames."""

    buffer: str
    reason: str
    fx: str = ""
    frames: tuple[UserFrame, ...] = ()


@dataclass(frozen=True)
class CudagraphLog:
    """Everything the messages said, in order. ``trees`` holds ``(compile id, key)`` per
    recorded tree (key ``""``: a graph without symints); ``calls`` ``(batch, ms, pool
    bytes)`` per call a recording script timed."""

    skips: tuple[Skip, ...] = ()
    partitions: tuple[tuple[int, int, int], ...] = ()
    partition_ops: tuple[PartitionOp, ...] = ()
    trees: tuple[tuple[str, str], ...] = ()
    recordings: dict[str, int] = field(default_factory=dict)
    warmups: dict[str, int] = field(default_factory=dict)
    rerecords: tuple[tuple[str, str], ...] = ()
    pending_backwards: int = 0
    calls: tuple[tuple[int, float, int], ...] = ()


def frames(text: str) -> tuple[UserFrame, ...]:
    """The frames of a stack torch printed, each with the code line under it.

    >>> frames('File "a.py", line 3, in f\\n    buf.add_(1)')
    (UserFrame(filename='a.py', line=3, function='f', code='buf.add_(1)'),)
    """
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = _FRAME.search(line)
        if m is None:
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        code = "" if _FRAME.search(nxt) else nxt
        out.append(UserFrame(m["file"], int(m["line"]), m["func"], code))
    return tuple(out)


def skip(reason: str) -> Skip:
    """A skip reason as a cause, its first line and the frames after ``Found from``.

    >>> s = skip('skipping cudagraphs due to mutated inputs (1 instances). Found from : \\n'
    ...          ' File "a.py", line 3, in f\\n    buf.add_(1)')
    >>> s.cause, s.frames[0].code
    ('mutated', 'buf.add_(1)')
    """
    head, _, rest = reason.partition("Found from")
    first = head.strip().split("\n")[0].rstrip(". ")
    return Skip(cudagraph_skip_cause(first), first, frames(rest))


def read(lines: tuple[str, ...] | list[str]) -> CudagraphLog:
    """Read ``"<artifact>: <message>"`` lines (other lines are skipped).

    >>> log = read(["cudagraphs: [0/0] Recording cudagraph tree for symint key 8",
    ...             "cudagraphs: Created 3 graph partitions: 2 cudagraphable, 1 non-cudagraphable"])
    >>> log.trees, log.partitions
    ((('0/0', '8'),), ((3, 2, 1),))
    """
    skips: list[Skip] = []
    parts: list[tuple[int, int, int]] = []
    ops: list[PartitionOp] = []
    trees: list[tuple[str, str]] = []
    recordings: dict[str, int] = {}
    warmups: dict[str, int] = {}
    rerecords: list[tuple[str, str]] = []
    pending = 0
    calls: list[tuple[int, float, int]] = []
    for raw in lines:
        kind, sep, msg = raw.partition(": ")
        if not sep:
            continue
        if kind == "call" and (c := _CALL.match(raw)):
            calls.append((int(c["b"]), float(c["ms"]), int(c["pool"])))
            continue
        if kind not in ("cudagraphs", "perf_hints"):
            continue
        if "skipping cudagraphs due to" in msg:
            skips.append(skip(msg[msg.index("skipping cudagraphs due to") :]))
        elif m := _PARTITIONS.search(msg):
            parts.append((int(m["n"]), int(m["ok"]), int(m["no"])))
        elif (m := _OP.match(msg)) and "reason=" in msg:
            ops.append(PartitionOp(m["buf"], m["reason"].strip(), (m["fx"] or "").strip()))
        elif _FRAME.search(msg) and ops:
            # the op's stack arrives one line a message: file line, then code line
            last = ops[-1]
            f = frames(msg)
            ops[-1] = PartitionOp(last.buffer, last.reason, last.fx, (*last.frames, *f))
        elif ops and ops[-1].frames and not ops[-1].frames[-1].code and msg.strip():
            last = ops[-1]
            done = last.frames[-1]
            fixed = UserFrame(done.filename, done.line, done.function, msg.strip())
            ops[-1] = PartitionOp(last.buffer, last.reason, last.fx, (*last.frames[:-1], fixed))
        elif m := _TREE.match(msg.strip()):
            trees.append((m["cid"] or "", (m["key"] or "").strip()))
        elif m := _RERECORD.match(msg):
            rerecords.append((m["cid"], m["reason"].strip()))
        elif m := _RECORDING.match(msg):
            recordings[m["cid"]] = recordings.get(m["cid"], 0) + 1
        elif m := _WARMUP.match(msg):
            warmups[m["cid"]] = warmups.get(m["cid"], 0) + 1
        if _PENDING in msg:
            pending += 1
    return CudagraphLog(
        tuple(skips), tuple(parts), tuple(ops), tuple(trees), recordings, warmups,
        tuple(rerecords), pending, tuple(calls),
    )  # fmt: skip
