"""What a graph break causes besides itself, folded into it: each consequence takes the
break's cause key, so ``diagnose`` merges it into the break's finding as evidence.

A break at ``history.append(loss.item())`` leaves the rest of the function to a resume
function that Python runs between graphs. What follows from that is not a cause of its
own: the resume function's recompiles (``Cache line invalidated because L['___stack0']
got deallocated``), guards on what the break made Python-visible at its line (the list
appended to: ``len(G['history']) == 1``, ``not G['history']``), and a call Dynamo
cannot trace at the same line (``<unknown module>.list.append`` on torch 2.11).

An exception a break observed inside a call is also reported, on some torch versions, at
each enclosing frame it leaves through a ``finally`` (transformers' output-capturing
wrapper, on 2.13): the same registry id at the caller's line is that break again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from compiler.advise._common import Ranked, resume_of
from compiler.advise.findings import Evidence, Finding
from compiler.link.ids import SrcKey, key_of, src_key
from compiler.model import Compile, Exploration, GraphBreak, SourceLoc
from compiler.parse.words.breaks import gb_id_of

# breaks that only say a call could not be traced: where a more specific break shares
# their line, they are what that break left behind
_GENERIC = ("graph_break.unsupported_call", "graph_break.other")
_TENSOR_KINDS = ("size", "dtype", "device", "stride", "storage_offset", "requires_grad", "rank")
_Ordered = list[tuple[int, Ranked]]
_Frame = tuple[int | None, int | None, int | None]


def fold(exp: Exploration, ranked: _Ordered) -> _Ordered:
    """``ranked`` with each consequence of a break under that break's cause key, as a
    note (so the break stays the head when ``merge_causes`` joins them) that names what
    it was.

    Example:
        >>> import compiler
        >>> fold(compiler.Exploration(source="live"), [])
        []
    """
    compiles = {key_of(c): c for c in exp.compiles}
    breaks = [
        r.finding
        for _, r in ranked
        if r.finding.cause.startswith("break|") and r.finding.kind != "graph_break.torch_own"
    ]
    if not breaks:
        return ranked
    sites = {b.cause: {e.src for e in b.evidence if e.src} for b in breaks}
    frames = {b.cause: {_frame(compiles[e.compile]) for e in b.evidence
                        if e.compile in compiles} for b in breaks}  # fmt: skip
    into: dict[str, str] = _propagated(exp, breaks, sites)  # a consequence's key -> its break's
    for b in breaks:
        if b.kind in _GENERIC:
            specific = next((h for h in breaks if h.kind not in _GENERIC
                             and sites[h.cause] & sites[b.cause]), None)  # fmt: skip
            if specific is not None:
                into[b.cause] = specific.cause
    for _, r in ranked:
        f = r.finding
        if not f.kind.startswith("recompile.") or f.kind == "recompile.limit":
            continue
        # a tensor's guard at a break's line is the tensor's own cause (its size changes
        # whether or not the frame breaks); a Python object's is what the break exposed
        at_line = f.kind.removeprefix("recompile.") not in _TENSOR_KINDS
        heads = [_break_of(compiles[e.compile], e, breaks, sites, frames, at_line)
                 for e in f.evidence if e.compile in compiles]  # fmt: skip
        if heads and all(heads):
            into[f.cause] = Counter(heads).most_common(1)[0][0]
    if not into:
        return ranked
    out: _Ordered = []
    for order, r in ranked:
        f = r.finding
        head = f.cause
        while head in into and into[head] != head:
            head = into[head]
        if head == f.cause:
            out.append((order, r))
            continue
        note = Evidence(text=f"follows from this break: {f.title}")
        folded: Finding = replace(f, cause=head, severity="info",
                                  evidence=(note, *f.evidence), fix=None)  # fmt: skip
        out.append((order, Ranked(folded, 0.0)))
    return out


def _break_of(
    c: Compile,
    e: Evidence,
    breaks: list[Finding],
    sites: dict[str, set[SrcKey]],
    frames: dict[str, set[_Frame]],
    at_line: bool = True,
) -> str:
    """The cause key of the break a recompile of ``c`` follows from, else "": a guard
    at a break's own line in the frame that broke (what the break made Python-visible),
    or any recompile of the resume function a break made."""
    for b in breaks:
        if at_line and e.src and e.src in sites[b.cause] and _frame(c) in frames[b.cause]:
            return b.cause
    r = resume_of(c)
    if r is not None and c.filename:
        at = src_key(c.filename, r[1])
        for b in breaks:
            if at in sites[b.cause]:
                return b.cause
    return ""


def _frame(c: Compile) -> _Frame:
    return (c.rank, c.compile_id.compiled_autograd_id, c.compile_id.frame_id)


# a frame a break's stack reaches: its registry id, the calls above the frame (file, line)
# and the frame's function (file, function)
_FrameKey = tuple[str, tuple[tuple[str, int], ...], str, str]


def _propagated(
    exp: Exploration, breaks: list[Finding], sites: dict[str, set[SrcKey]]
) -> dict[str, str]:
    """Each break that is another's exception leaving an enclosing frame -> that break's
    cause key: its stack is the other's down to the enclosing function, where it stops at or
    after the line that called down, with the same registry id. Each stack is indexed by
    the frames it passes through, so the stacks are never compared pairwise."""
    order = {b.cause: i for i, b in enumerate(breaks)}
    at_site: dict[SrcKey, list[str]] = {}
    for b in breaks:
        for site in sites[b.cause]:
            at_site.setdefault(site, []).append(b.cause)
    passes: dict[_FrameKey, list[tuple[int, str]]] = {}  # -> (line called down from, cause)
    stops: list[tuple[_FrameKey, int, str]] = []
    for c in exp.compiles:
        for g in c.graph_breaks:
            if g.location is None or len(g.user_stack) < 2:
                continue
            at = src_key(g.location.filename, g.location.line)
            causes = at_site.get(at, []) if at is not None else []
            if not causes:
                continue
            stop, through = _frames(_kind(g), g.user_stack)
            for cause in causes:
                stops.append((*stop, cause))
                for key, line in through:
                    passes.setdefault(key, []).append((line, cause))
    inners: dict[str, set[str]] = {}
    for key, line, outer in stops:
        # an exception leaves a call at its line or later (a ``finally``, a handler)
        inners.setdefault(outer, set()).update(
            cause for called, cause in passes.get(key, ()) if cause != outer and line >= called
        )
    return {outer: min(found, key=order.__getitem__) for outer, found in inners.items() if found}


def _kind(g: GraphBreak) -> str:
    return gb_id_of(g.documentation) or gb_id_of(g.reason) or g.summary


def _frames(
    kind: str, stack: tuple[SourceLoc, ...]
) -> tuple[tuple[_FrameKey, int], list[tuple[_FrameKey, int]]]:
    """The frame a break of registry id ``kind`` stopped in, with its line, and each frame
    its stack passes through on the way, with the line that called down.

    Example (a break at w.py:14 stops where another, called from w.py:10, passes):
        >>> loc = lambda f, n, fn: SourceLoc(filename=f, line=n, function=fn)
        >>> caller = loc("m.py", 3, "run")
        >>> stop, _ = _frames("GB0088", (caller, loc("w.py", 14, "wrapper")))
        >>> inner = (caller, loc("w.py", 10, "wrapper"), loc("m.py", 40, "f"))
        >>> _, through = _frames("GB0088", inner)
        >>> stop
        (('GB0088', (('m.py', 3),), 'w.py', 'wrapper'), 14)
        >>> through[1]
        (('GB0088', (('m.py', 3),), 'w.py', 'wrapper'), 10)
    """
    calls = tuple((s.filename, s.line) for s in stack)

    def key(depth: int) -> _FrameKey:
        return (kind, calls[:depth], stack[depth].filename, stack[depth].function)

    last = len(stack) - 1
    return (key(last), stack[last].line), [(key(d), stack[d].line) for d in range(last)]
