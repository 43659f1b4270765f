"""What CUDA graphs did per compiled call site: ``compiler.cudagraphs(exp)``.

Per compile: recorded, partitioned (some partitions kept out) or skipped; the skip's
cause with the user's line and the graph nodes on that line (``mutated`` input, ``cpu``
op, ``dynamic`` shapes); one recorded tree per distinct symint key (a batch size under
``dynamic=True``) with the graphs recorded for it and their input sizes; warm-ups and
re-recordings with their reasons. The sources are the compile's
``cudagraph_skip_reason`` and torch's ``cudagraphs``/``perf_hints`` messages, which
capture keeps per compile under the capture's own compile id (the artifact
``compiler.parse.words.cudagraphs.ARTIFACT``); recordings made before that kept them in
their notes with torch's ids, translated here through the capture's id note. Each call a
recording script timed (batch, time, CUDA graph pool bytes) comes from the notes, and
torch's run-time "output overwritten" error from the Exploration's errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.model import Compile, Exploration
from compiler.model.stages import DYNAMO_GRAPH
from compiler.parse.words.cudagraphs import (
    ARTIFACT,
    CudagraphLog,
    Overwritten,
    PartitionOp,
    Skip,
    UserFrame,
    calls,
    messages,
    overwritten,
    read,
    skip,
    tagged,
    torch_ids,
)
from compiler.parse.words.names import (
    attribute_of_placeholder,
    descriptors,
    input_index,
    input_name,
    input_target,
)


@dataclass(frozen=True)
class ShapeRecordings:
    """What one distinct symint key cost: ``key`` as torch logged it (a batch size;
    ``""`` for a graph without symints), its trees (forward and backward each have one),
    warm-ups and graphs recorded, the input sizes of its first recording, and the calls
    at that batch a script timed, in order (ms: the warm-up, the recording, replays)."""

    key: str
    trees: int = 0
    warmups: int = 0
    recordings: int = 0
    sizes: tuple[str, ...] = ()
    calls_ms: tuple[float, ...] = ()

    @property
    def first_ms(self) -> float | None:
        """The first call at this size (its warm-up), where a script timed it."""
        return self.calls_ms[0] if self.calls_ms else None


@dataclass(frozen=True)
class SiteGraphs:
    """CUDA graphs of one compile. ``status``: ``recorded``, ``partitioned``, ``skipped``
    or ``none`` (nothing said); ``nodes`` the Dynamo graph's nodes on the lines the skip
    or the kept-out ops name; ``keys`` the distinct symint keys recorded, in order."""

    compile_id: str
    status: str
    skip: Skip | None = None
    kept_out: tuple[PartitionOp, ...] = ()
    nodes: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    trees: int = 0
    recordings: int = 0
    warmups: int = 0
    rerecords: tuple[str, ...] = ()
    shapes: tuple[ShapeRecordings, ...] = ()
    partitions: tuple[tuple[int, int, int], ...] = ()
    op_nodes: tuple[tuple[str, ...], ...] = ()  # per kept-out op, the nodes on its lines
    # for a ``mutated`` skip: the user's names of the inputs the graph writes into
    # (``mutated_inputs``: ``buf``, not AOT's ``arg0_1``)
    mutated: tuple[str, ...] = ()


@dataclass(frozen=True)
class CudaGraphs:
    """``compiler.cudagraphs(exp)``: per compile, and what the whole run said."""

    sites: tuple[SiteGraphs, ...] = ()
    pending_backwards: int = 0
    calls: tuple[tuple[int, float, int], ...] = ()  # (batch, ms, pool bytes) per timed call
    overwritten: Overwritten | None = None
    overwritten_nodes: tuple[tuple[str, str], ...] = ()  # (compile id, node) on its line

    @property
    def pool_bytes(self) -> int:
        """The largest CUDA graph pool seen after a timed call (0 where none was)."""
        return max((c[2] for c in self.calls), default=0)

    def first_call_ms(self) -> dict[int, float]:
        """Per distinct batch, the time of its first call (warm-up or recording)."""
        out: dict[int, float] = {}
        for batch, ms, _ in self.calls:
            out.setdefault(batch, ms)
        return out


def cudagraphs(exp: Exploration) -> CudaGraphs:
    """CUDA graphs per compiled call site, from what torch logged.

    >>> cudagraphs(Exploration(source="")).sites
    ()
    """
    per = compile_messages(exp)
    timed = calls(list(exp.notes))
    per_batch: dict[int, tuple[float, ...]] = {}
    for batch, ms, _ in timed:
        per_batch[batch] = (*per_batch.get(batch, ()), ms)
    sites = []
    pending = 0
    for c in exp.compiles:
        log = read(per.get(str(c.compile_id), []))
        pending += log.pending_backwards
        site = _site(c, log, per_batch)
        if site is not None:
            sites.append(site)
    # the fullest telling of torch's error: a classified one may have cut its advice off
    told = [o for e in exp.errors if (o := overwritten(e.message)) is not None]
    over = max(told, key=lambda o: (bool(o.advice), o.frame is not None), default=None)
    nodes: tuple[tuple[str, str], ...] = ()
    if over is not None and over.frame is not None:
        nodes = tuple(
            (str(c.compile_id), n) for c in exp.compiles for n in _nodes_on(c, [over.frame])
        )
    return CudaGraphs(tuple(sites), pending, timed, over, nodes)


def compile_messages(exp: Exploration) -> dict[str, list[str]]:
    """Per compile id (the Exploration's own), torch's CUDA graph messages about it.

    A recording made before capture kept them per compile has them in its notes, with
    torch's ids: a message torch tagged goes to the compile the capture's id note maps
    that id to (the same id where no note is); an untagged one to the compile of the
    next tagged message (torch logs a tree just before warming up its function), the
    rest to the last compile named, or the first compile.

    >>> compile_messages(Exploration(source=""))
    {}
    """
    per = {str(c.compile_id): messages(c.artifacts.get(ARTIFACT, "")) for c in exp.compiles}
    if any(per.values()) or not exp.compiles:
        return {k: v for k, v in per.items() if v}
    ours = torch_ids(exp.notes)
    out: dict[str, list[str]] = {}
    waiting: list[str] = []
    last = str(exp.compiles[0].compile_id)
    for line in exp.notes:
        found = tagged(line)
        if found is None:
            continue
        cid, message = found
        if not cid:
            waiting.append(message)
            continue
        last = ours.get(cid, cid)
        out.setdefault(last, []).extend([*waiting, message])
        waiting.clear()
    if waiting:
        out.setdefault(last, []).extend(waiting)
    return out


def _site(c: Compile, log: CudagraphLog, timed: dict[int, tuple[float, ...]]) -> SiteGraphs | None:
    cid = str(c.compile_id)
    reason = c.metrics.cudagraph_skip_reason
    sk = skip(reason) if reason else None
    if sk is not None and not sk.frames:
        # the compile's metric keeps the reason's words; the log keeps the stack
        sk = next((s for s in log.skips if s.reason == sk.reason and s.frames), sk)
    if sk is None and log.skips:
        sk = log.skips[0]
    ops = log.partition_ops
    recordings = len(log.recorded) or c.metrics.cudagraph_recordings
    warmups = log.warmups or c.metrics.cudagraph_warmups
    if sk is not None:
        status = "skipped"
    elif ops or any(no for _, _, no in log.partitions):
        status = "partitioned"
    elif log.trees or recordings:
        status = "recorded"
    else:
        return None
    lines = [f for f in (sk.frames if sk else ()) if f.filename] + [
        f for op in ops for f in op.frames
    ]
    return SiteGraphs(
        compile_id=cid,
        status=status,
        skip=_with_code(c, sk) if sk else None,
        kept_out=tuple(_op_with_code(c, op) for op in ops),
        nodes=_nodes_on(c, lines),
        keys=tuple(dict.fromkeys(log.trees)),
        trees=len(log.trees),
        recordings=recordings,
        warmups=warmups,
        rerecords=placed_rerecords(log),
        shapes=_shapes(log, timed),
        partitions=log.partitions,
        op_nodes=tuple(_nodes_on(c, list(op.frames)) for op in ops),
        mutated=mutated_inputs(c) if sk is not None and sk.cause == "mutated" else (),
    )


def placed_rerecords(log: CudagraphLog) -> tuple[str, ...]:
    """Each re-recording's reason with where it fell in the compile's CUDA graph events
    (pytorch #156820): which recording it made, of which symint key's tree. torch logs a
    re-recording just before the recording it makes.

    >>> from compiler.parse.words.cudagraphs import read
    >>> log = read(["cudagraphs: Recording cudagraph tree for symint key 8",
    ...             "cudagraphs: Running warmup function=partition_0",
    ...             "cudagraphs: Recording function=partition_0, cuda_graph_id=0",
    ...             "cudagraphs: [0/0] Re-recording function=partition_0, mode=FORWARD, "
    ...             "reason=static input data pointer changed.",
    ...             "cudagraphs: Recording function=partition_0, cuda_graph_id=1"])
    >>> placed_rerecords(log)
    ('static input data pointer changed. (recording 2 of this compile, symint key 8)',)
    """
    out = []
    trees, reasons = iter(log.trees), iter(log.rerecords)
    key, recordings = "", 0
    for kind in log.order:
        if kind == "tree":
            key = next(trees, key)
        elif kind == "recording":
            recordings += 1
        elif kind == "rerecord":
            tree = f", symint key {key}" if key else ""
            out.append(f"{next(reasons)} (recording {recordings + 1} of this compile{tree})")
    return tuple(out)


_AOT_GRAPHS = ("aot_inference_graph", "aot_forward_graph")


def mutated_inputs(c: Compile) -> tuple[str, ...]:
    """The user's names of the inputs compile ``c``'s graph writes into: the AOT graph's
    ``copy_`` into a placeholder (``arg0_1``), taken to the Dynamo graph's placeholder it
    is (its descriptor ``PlainAOTInput(idx=N)``, else its position) and that placeholder's
    user name (``L_buf_``: ``buf``); a lifted parameter or buffer by its module path
    (``ParamAOTInput(target='lin.weight')``).

    >>> from compiler.model import CompileId
    >>> mutated_inputs(Compile(compile_id=CompileId.from_string("0/0")))
    ()
    """
    dynamo = c.graphs.get(DYNAMO_GRAPH)
    placeholders = [n.target for n in dynamo.nodes if n.op == "placeholder"] if dynamo else []
    for stage in _AOT_GRAPHS:
        graph = c.graphs.get(stage)
        if graph is None:
            continue
        inputs = {n.name for n in graph.nodes if n.op == "placeholder"}
        written = [n.inputs[0] for n in graph.nodes
                   if "copy_" in n.target and n.inputs and n.inputs[0] in inputs]  # fmt: skip
        if not written:
            continue
        desc, _ = descriptors(graph.text)
        names = []
        for name in dict.fromkeys(written):
            target = input_target(desc.get(name, ""))
            index = input_index(desc.get(name, ""), name)
            if target is None and 0 <= index < len(placeholders):
                target = attribute_of_placeholder(placeholders[index]) or input_name(
                    placeholders[index]
                )
            names.append(target or name)
        return tuple(names)
    return ()


def _shapes(log: CudagraphLog, timed: dict[int, tuple[float, ...]]) -> tuple[ShapeRecordings, ...]:
    """Per distinct symint key, its trees, warm-ups and recordings. torch logs a key's
    tree just before the first call's warm-up, in order; a recording comes at a later
    call, so it goes to the key its input sizes carry (else to the last key logged)."""
    if not log.trees:
        return ()
    counts: dict[str, dict[str, int]] = {k: {"trees": 0, "warmups": 0, "recordings": 0}
                                         for k in log.trees}  # fmt: skip
    sizes: dict[str, tuple[str, ...]] = {}
    trees = iter(log.trees)
    recorded = iter(log.recorded)
    key = log.trees[0]
    for kind in log.order:
        if kind == "tree":
            key = next(trees)
            counts[key]["trees"] += 1
        elif kind == "warmup":
            counts[key]["warmups"] += 1
        elif kind == "recording":
            r = next(recorded)
            to = next((k for k in counts if r.shaped_for(k)), key)
            counts[to]["recordings"] += 1
            sizes.setdefault(to, r.sizes)
    return tuple(
        ShapeRecordings(
            key=k,
            trees=v["trees"],
            warmups=v["warmups"],
            recordings=v["recordings"],
            sizes=sizes.get(k, ()),
            calls_ms=timed.get(int(k), ()) if k.isdigit() else (),
        )
        for k, v in counts.items()
    )


def _nodes_on(c: Compile, frames: list[UserFrame]) -> tuple[str, ...]:
    """The Dynamo graph's nodes whose source is one of ``frames``' lines."""
    graph = c.graphs.get("dynamo_output_graph")
    if graph is None or not frames:
        return ()
    want = {(f.filename, f.line) for f in frames}
    return tuple(
        n.name
        for n in graph.nodes
        if n.source is not None and (n.source.filename, n.source.line) in want
    )


def _code_at(c: Compile, f: UserFrame) -> UserFrame:
    """``f`` with its code line from the Dynamo graph's nodes where torch printed none
    (the scheduler's partition listing names file and line only)."""
    graph = c.graphs.get("dynamo_output_graph")
    if f.code or graph is None:
        return f
    for n in graph.nodes:
        src = n.source
        if src is not None and src.code and (src.filename, src.line) == (f.filename, f.line):
            return UserFrame(f.filename, f.line, f.function, src.code.strip())
    return f


def _with_code(c: Compile, sk: Skip) -> Skip:
    return Skip(sk.cause, sk.reason, tuple(_code_at(c, f) for f in sk.frames))


def _op_with_code(c: Compile, op: PartitionOp) -> PartitionOp:
    return PartitionOp(op.buffer, op.reason, op.fx, tuple(_code_at(c, f) for f in op.frames))


def user_frame(frames: tuple[UserFrame, ...]) -> UserFrame | None:
    """The innermost frame with a code line (the user's), or None.

    >>> user_frame((UserFrame("a.py", 3, "f", "y.cpu()"),)).code
    'y.cpu()'
    """
    return next((f for f in reversed(frames) if f.code), None)


def markdown(graphs: CudaGraphs) -> str:
    """CUDA graphs per call site as Markdown lines ("" where torch said nothing).

    >>> markdown(CudaGraphs())
    ''
    """
    out = []
    for s in graphs.sites:
        line = f"- compile `{s.compile_id}`: **{s.status}**"
        if s.skip is not None:
            line += f", {s.skip.reason}{_at(s.skip.frames)}"
        if s.nodes:
            line += ", nodes " + ", ".join(f"`{n}`" for n in s.nodes)
        if s.keys:
            line += f"; {len(s.keys)} distinct symint keys: " + ", ".join(k or "-" for k in s.keys)
        if s.recordings or s.warmups:
            line += f"; {s.warmups} warm-ups, {s.recordings} recordings"
        out.append(line)
        for op in s.kept_out:
            out.append(f"  - kept out of CUDA graphs: `{op.buffer}` ({op.reason}){_at(op.frames)}")
        for sh in s.shapes:
            ms = f", calls {', '.join(f'{t:.1f}' for t in sh.calls_ms)} ms" if sh.calls_ms else ""
            sizes = f", inputs {' / '.join(f'[{x}]' for x in sh.sizes[:2])}" if sh.sizes else ""
            out.append(
                f"  - symint key {sh.key or '(none)'}: {sh.trees} trees, {sh.warmups} "
                f"warm-ups, {sh.recordings} recordings{sizes}{ms}"
            )
        for r in s.rerecords[:3]:
            out.append(f"  - re-recorded: {r}")
    if graphs.calls:
        calls_ = ", ".join(f"{b}: {ms:.1f} ms" for b, ms, _ in graphs.calls)
        out.append(f"- calls (batch: time): {calls_}")
    if graphs.pool_bytes:
        out.append(f"- CUDA graph pool: {graphs.pool_bytes / 2**20:.1f} MiB")
    if graphs.pending_backwards:
        out.append(f"- {graphs.pending_backwards} calls missed the fast path: pending backwards")
    if graphs.overwritten is not None:
        at = _at((graphs.overwritten.frame,)) if graphs.overwritten.frame else ""
        out.append(f"- a CUDA graph output was read after a later run overwrote it{at}")
    return "\n".join(out)


def _at(frames: tuple[UserFrame, ...]) -> str:
    """`` at `code` (file.py:12)`` for the innermost frame with code, else the innermost
    frame's place, else ""."""
    user = user_frame(frames) or (frames[-1] if frames else None)
    if user is None:
        return ""
    where = f"{user.filename.rsplit('/', 1)[-1]}:{user.line}"
    return f" at `{user.code}` ({where})" if user.code else f" at {where}"
