"""What Inductor's ``cudagraphs`` and ``perf_hints`` log artifacts say about CUDA graphs
(torch 2.11/2.13 ``cudagraph_trees.py``, ``cudagraph_utils.py``, ``scheduler.py``):

- ``skipping cudagraphs due to mutated inputs (1 instances). Found from : <stack>``;
- ``Created 3 graph partitions: 2 cudagraphable, 1 non-cudagraphable``, then per op of a
  non-cudagraphable partition ``buf3: reason=cpu ops, ir=..., fx=...`` and its stack;
- ``Recording cudagraph tree for symint key 8`` (or ``for graph without symints``);
- ``Recording function=partition_0, mode=..., cuda_graph_id=0, inputs: [0]:
  Tensor(size=[8, 64], ...)``;
- ``Re-recording function=..., reason=...``;
- ``Unable to hit fast path of CUDAGraphs because of pending, uninvoked backwards``;
- at run time, ``accessing tensor output of CUDAGraphs that has been overwritten by a
  subsequent run. Stack trace: File "x.py", line 9, in forward. To prevent ...``.

Capture keeps each compile's messages as ``"<artifact>: <message>"`` lines in the
compile's artifact ``ARTIFACT`` (a JSON list), torch's compile id already taken off and
turned into the capture's own. Recordings made before that kept the lines in their notes,
with torch's id in the text (``[2/0] Recording function=...``): ``tagged`` reads that id
and ``torch_ids`` the capture's note that maps torch's ids to the recording's.
Stacks as torch prints them (``File "x.py", line 9, in f`` then the code line).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from compiler.parse.words.settings import cudagraph_skip_cause

# The compile artifact (``Compile.artifacts``) that holds a compile's CUDA graph messages.
ARTIFACT = "cudagraphs_log"

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>.]*[\w>])')
_PARTITIONS = re.compile(
    r"Created (?P<n>\d+) graph partitions: (?P<ok>\d+) cudagraphable, (?P<no>\d+) non-cudagraphable"
)
# torch's reason for every op when graph partitioning runs with CUDA graphs off
# (torch/_inductor/scheduler.py): not a cause, the mode's default
_DISABLED = "when cudagraphs is disabled"
_OP = re.compile(r"^\s*(?P<buf>\w+): reason=(?P<reason>[^,]+)(?:, ir=[^,]*)?(?:, fx=(?P<fx>.*))?$")
_TAG = re.compile(r"^\[(?P<cid>[^\]]*)\] ")
_TREE = re.compile(
    r"^Recording cudagraph tree for (?:symint key (?P<key>.+)|graph without symints)$"
)
_RECORDING = re.compile(
    r"^Recording function=(?P<fn>[^,]+),.*?cuda_graph_id=(?P<gid>\d+)(?:, inputs: (?P<inputs>.*))?",
    re.S,
)
_SIZE = re.compile(r"size=\[(?P<size>[^\]]*)\]")
_WARMUP = re.compile(r"^Running warmup function=")
# what a message (torch's format string, its id argument's ``[%s] `` aside) runs
_RUNS = (("Recording function", "recording"), ("Running warmup function", "warmup"))
_RERECORD = re.compile(r"^Re-recording function=.*reason=(?P<reason>.*)$", re.S)
_PENDING = "pending, uninvoked backward"
# torch 2.13 names a backward's output apart: "accessing gradient tensor output of ..."
_OVERWRITTEN = re.compile(
    r"accessing (?P<grad>gradient )?tensor output of CUDAGraphs that has been overwritten"
)
_CALL = re.compile(r"^call: batch (?P<b>\d+), (?P<ms>[\d.]+) ms, pool (?P<pool>\d+) bytes$")
_MAPPED = re.compile(r"(?P<ours>[\w:/]+) = (?P<torch>[\w:/]+)")
_KINDS = {"cudagraphs": "cudagraphs", "__cudagraphs": "cudagraphs", "perf_hints": "perf_hints",
          "__perf_hints": "perf_hints"}  # fmt: skip


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
class Recorded:
    """One CUDA graph torch recorded: the function (``partition_0``), torch's graph id
    and the sizes of the tensor inputs it was recorded for (``("8, 64", "64, 64")``)."""

    function: str
    graph_id: int
    sizes: tuple[str, ...] = ()

    def shaped_for(self, key: str) -> bool:
        """Whether this recording's first input has every size of symint ``key`` (the
        key a cycling batch recorded under: ``8`` for a ``[8, 64]`` input).

        >>> Recorded("partition_0", 0, ("8, 64",)).shaped_for("8")
        True
        """
        want = set(re.findall(r"\d+", key))
        return bool(want and self.sizes) and want <= set(re.findall(r"\d+", self.sizes[0]))


@dataclass(frozen=True)
class CudagraphLog:
    """Everything one compile's messages said, in order. ``trees`` holds the symint key
    per recorded tree (``""``: a graph without symints); ``calls`` ``(batch, ms, pool
    bytes)`` per call a recording script timed."""

    skips: tuple[Skip, ...] = ()
    partitions: tuple[tuple[int, int, int], ...] = ()
    partition_ops: tuple[PartitionOp, ...] = ()
    trees: tuple[str, ...] = ()
    recorded: tuple[Recorded, ...] = ()
    warmups: int = 0
    rerecords: tuple[str, ...] = ()
    pending_backwards: int = 0
    calls: tuple[tuple[int, float, int], ...] = ()
    # "tree", "warmup" and "recording" in the order torch logged them
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class Overwritten:
    """torch's runtime error for an output of a CUDA graph read after a later replay
    overwrote it: the user's frame it names, and torch's own advice sentence."""

    frame: UserFrame | None
    advice: str
    grad: bool = False  # torch said the tensor is a gradient (a ``.grad`` kept across steps)


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


def overwritten(text: str) -> Overwritten | None:
    """torch's "accessing tensor output of CUDAGraphs that has been overwritten" error in
    ``text``, with the frame it names and its advice; None where ``text`` is another.

    >>> o = overwritten('Error: accessing tensor output of CUDAGraphs that has been '
    ...     'overwritten by a subsequent run. Stack trace: File "m.py", line 7, in forward. '
    ...     'To prevent overwriting, clone the tensor outside of torch.compile() or call '
    ...     'torch.compiler.cudagraph_mark_step_begin() before each model invocation.')
    >>> o.frame.line, o.advice.startswith("To prevent overwriting")
    (7, True)
    """
    m = _OVERWRITTEN.search(text)
    if m is None:
        return None
    tail = text[m.start() :]
    found = _FRAME.search(tail)
    frame = UserFrame(found["file"], int(found["line"]), found["func"]) if found else None
    start = next((tail.index(w) for w in ("To prevent", "This can happen") if w in tail), -1)
    advice = tail[start:].split("\n")[0] if start >= 0 else ""
    return Overwritten(frame, advice.strip(), bool(m["grad"]))


def messages(artifact: str) -> list[str]:
    """A compile's ``ARTIFACT`` text as its ``"<artifact>: <message>"`` lines.

    >>> messages('["cudagraphs: Recording cudagraph tree for symint key 8"]')
    ['cudagraphs: Recording cudagraph tree for symint key 8']
    >>> messages("")
    []
    """
    try:
        found = json.loads(artifact) if artifact else []
    except json.JSONDecodeError:
        return []
    return [str(m) for m in found] if isinstance(found, list) else []


def tagged(line: str) -> tuple[str, str] | None:
    """A notes line of torch's CUDA graph logs as (torch's compile id or "", the line with
    the id taken off); None for any other line (recordings made before capture kept
    these messages per compile).

    >>> tagged("__cudagraphs: [2/0] Running warmup function=partition_0, mode=FORWARD")
    ('2/0', 'cudagraphs: Running warmup function=partition_0, mode=FORWARD')
    >>> tagged("call: batch 8, 1.0 ms, pool 0 bytes") is None
    True
    """
    kind, sep, msg = line.partition(": ")
    if not sep or kind not in _KINDS:
        return None
    m = _TAG.match(msg)
    cid = m["cid"] if m and m["cid"] != "None" else ""
    return cid, f"{_KINDS[kind]}: {msg[m.end() :] if m else msg}"


def torch_ids(notes: tuple[str, ...] | list[str]) -> dict[str, str]:
    """torch's compile id -> the recording's, from the note a capture writes when it
    numbers compiles from its own first ("... were 0/0 = 2/0, 1/0 = 3/0.").

    >>> torch_ids(["Compile ids are numbered from this capture's first compile, as after "
    ...            "a reset; torch's own ids in this process (its logs) were 0/0 = 2/0."])
    {'2/0': '0/0'}
    """
    out: dict[str, str] = {}
    for note in notes:
        if note.startswith("Compile ids are numbered from this capture"):
            for m in _MAPPED.finditer(note.partition(" were ")[2]):
                out[m["torch"].rstrip(".")] = m["ours"]
    return out


def calls(lines: tuple[str, ...] | list[str]) -> tuple[tuple[int, float, int], ...]:
    """``(batch, ms, pool bytes)`` of each ``call: batch 8, 1.2 ms, pool 0 bytes`` line
    a recording script kept in its notes.

    >>> calls(["call: batch 8, 918.5 ms, pool 88080384 bytes", "other"])
    ((8, 918.5, 88080384),)
    """
    found = (_CALL.match(line) for line in lines)
    return tuple((int(c["b"]), float(c["ms"]), int(c["pool"])) for c in found if c)


def read(lines: tuple[str, ...] | list[str]) -> CudagraphLog:
    """Read one compile's ``"<artifact>: <message>"`` lines (other lines are skipped).

    >>> log = read(["cudagraphs: Recording cudagraph tree for symint key 8",
    ...             "cudagraphs: Created 3 graph partitions: 2 cudagraphable, 1 non-cudagraphable",
    ...             "cudagraphs: Recording function=partition_0, mode=FORWARD, cuda_graph_id=0, "
    ...             "inputs: [0]: Tensor(size=[8, 64], stride=(64, 1))"])
    >>> log.trees, log.partitions, log.recorded[0].sizes
    (('8',), ((3, 2, 1),), ('8, 64',))
    """
    skips: list[Skip] = []
    parts: list[tuple[int, int, int]] = []
    ops: list[PartitionOp] = []
    trees: list[str] = []
    recorded: list[Recorded] = []
    warmups = 0
    rerecords: list[str] = []
    pending = 0
    order: list[str] = []
    listing = False  # a "Created N graph partitions" line was just read
    for raw in lines:
        kind, sep, msg = raw.partition(": ")
        if not sep or kind not in _KINDS:
            continue
        m = _TAG.match(msg)
        msg = msg[m.end() :] if m else msg
        if "skipping cudagraphs due to" in msg:
            skips.append(skip(msg[msg.index("skipping cudagraphs due to") :]))
        elif m := _PARTITIONS.search(msg):
            parts.append((int(m["n"]), int(m["ok"]), int(m["no"])))
            listing = True
        elif (m := _OP.match(msg)) and "reason=" in msg:
            if _DISABLED in m["reason"]:
                # CUDA graphs are off for this compile (torch lists every op as kept out):
                # no op is the cause, and the listing is no partition of CUDA graphs
                if listing:
                    parts.pop()
                    listing = False
                continue
            ops.append(PartitionOp(m["buf"], m["reason"].strip(), (m["fx"] or "").strip()))
        elif _FRAME.search(msg) and ops:
            # the op's stack arrives one line a message: file line, then code line
            last = ops[-1]
            ops[-1] = PartitionOp(last.buffer, last.reason, last.fx, (*last.frames, *frames(msg)))
        elif ops and ops[-1].frames and not ops[-1].frames[-1].code and _code_line(msg):
            last = ops[-1]
            done = last.frames[-1]
            fixed = UserFrame(done.filename, done.line, done.function, msg.strip())
            ops[-1] = PartitionOp(last.buffer, last.reason, last.fx, (*last.frames[:-1], fixed))
        elif m := _TREE.match(msg.strip()):
            trees.append((m["key"] or "").strip())
            order.append("tree")
        elif m := _RERECORD.match(msg):
            rerecords.append(m["reason"].strip())
            order.append("rerecord")
        elif m := _RECORDING.match(msg):
            sizes = tuple(s["size"] for s in _SIZE.finditer(m["inputs"] or ""))
            recorded.append(Recorded(m["fn"].strip(), int(m["gid"]), sizes))
            order.append("recording")
        elif _WARMUP.match(msg):
            warmups += 1
            order.append("warmup")
        if _PENDING in msg:
            pending += 1
    return CudagraphLog(
        tuple(skips), tuple(parts), tuple(ops), tuple(trees), tuple(recorded), warmups,
        tuple(rerecords), pending, calls(lines), tuple(order),
    )  # fmt: skip


def _code_line(msg: str) -> bool:
    """Whether a message is the code line torch prints under a frame (indented text that
    is no other message of the partition listing)."""
    text = msg.strip()
    return bool(text) and msg.startswith(" ") and not text.startswith("Partition ")


def run_kind(message: str) -> str:
    """"recording" or "warmup" for torch's message of a CUDA graph's recording or warm-up
    run, "" for any other.

    Example:
        >>> run_kind("[%s] Running warmup function=%s, mode=%s"), run_kind("skipping")
        ('warmup', '')
    """
    return next((kind for phrase, kind in _RUNS if phrase in message), "")
