"""What CUDA graphs did per compiled call site: ``compiler.cudagraphs(exp)``.

Per compile: recorded, partitioned (some partitions kept out) or skipped; the skip's
cause with the user's line and the graph nodes on that line (``mutated`` input, ``cpu``
op, ``dynamic`` shapes); one recorded tree per distinct symint key (a batch size under
``dynamic=True``); warm-ups, recordings and re-recordings with their reasons. The
sources are the compile's ``cudagraph_skip_reason`` and torch's ``cudagraphs`` and
``perf_hints`` messages where a recording kept them in its notes, read in
``compiler.parse.words.cudagraphs``; each call a recording script timed (batch, time,
CUDA graph pool bytes) comes from the same notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.model import Compile, Exploration
from compiler.parse.words.cudagraphs import CudagraphLog, PartitionOp, Skip, UserFrame, read, skip


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


@dataclass(frozen=True)
class CudaGraphs:
    """``compiler.cudagraphs(exp)``: per compile, and what the whole run said."""

    sites: tuple[SiteGraphs, ...] = ()
    pending_backwards: int = 0
    calls: tuple[tuple[int, float, int], ...] = ()  # (batch, ms, pool bytes) per timed call

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
    log = read(list(exp.notes))
    sites = []
    for i, c in enumerate(exp.compiles):
        site = _site(c, log, only=len(exp.compiles) == 1 or i == 0)
        if site is not None:
            sites.append(site)
    return CudaGraphs(tuple(sites), log.pending_backwards, log.calls)


def _site(c: Compile, log: CudagraphLog, only: bool) -> SiteGraphs | None:
    cid = str(c.compile_id)
    reason = c.metrics.cudagraph_skip_reason
    sk = skip(reason) if reason else None
    if sk is not None and not sk.frames:
        # the compile's metric keeps the reason's words; the log keeps the stack
        sk = next((s for s in log.skips if s.reason == sk.reason and s.frames), sk)
    if sk is None and only and log.skips:
        sk = log.skips[0]
    trees = [key for tcid, key in log.trees if tcid == cid or (not tcid and only)]
    ops = log.partition_ops if only else ()
    recordings = log.recordings.get(cid, c.metrics.cudagraph_recordings)
    warmups = log.warmups.get(cid, c.metrics.cudagraph_warmups)
    if sk is not None:
        status = "skipped"
    elif ops or any(no for _, _, no in log.partitions if only):
        status = "partitioned"
    elif trees or recordings:
        status = "recorded"
    else:
        return None
    lines = [f for f in (sk.frames if sk else ()) if f.filename] + [
        f for op in ops for f in op.frames
    ]
    return SiteGraphs(
        compile_id=cid,
        status=status,
        skip=sk,
        kept_out=tuple(ops),
        nodes=_nodes_on(c, lines),
        keys=tuple(dict.fromkeys(trees)),
        trees=len(trees),
        recordings=recordings,
        warmups=warmups,
        rerecords=tuple(r for rc, r in log.rerecords if rc == cid),
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
            line += f"; {len(s.keys)} trees, one per symint key: " + ", ".join(s.keys)
        if s.recordings or s.warmups:
            line += f"; {s.warmups} warm-ups, {s.recordings} recordings"
        out.append(line)
        for op in s.kept_out:
            out.append(f"  - kept out of CUDA graphs: `{op.buffer}` ({op.reason}){_at(op.frames)}")
    if graphs.calls:
        calls = ", ".join(f"{b}: {ms:.1f} ms" for b, ms, _ in graphs.calls)
        out.append(f"- calls (batch: time): {calls}")
    if graphs.pool_bytes:
        out.append(f"- CUDA graph pool: {graphs.pool_bytes / 2**20:.1f} MiB")
    if graphs.pending_backwards:
        out.append(f"- {graphs.pending_backwards} calls missed the fast path: pending backwards")
    return "\n".join(out)


def _at(frames: tuple[UserFrame, ...]) -> str:
    """`` at `code` (file.py:12)`` for the innermost frame with code, else ""."""
    user = next((f for f in reversed(frames) if f.code), None)
    return f" at `{user.code}` ({user.filename.rsplit('/', 1)[-1]}:{user.line})" if user else ""
