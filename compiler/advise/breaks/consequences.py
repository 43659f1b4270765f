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


_Stack = tuple[str, tuple[SourceLoc, ...]]


def _propagated(
    exp: Exploration, breaks: list[Finding], sites: dict[str, set[SrcKey]]
) -> dict[str, str]:
    """Each break that is another's exception leaving an enclosing frame -> that break's
    cause key: its stack is the other's down to the enclosing function, where it stops at or
    after the line that called down, with the same registry id."""
    stacks: dict[str, list[_Stack]] = {}
    for c in exp.compiles:
        for g in c.graph_breaks:
            if g.location is None or len(g.user_stack) < 2:
                continue
            at = src_key(g.location.filename, g.location.line)
            for b in breaks:
                if at in sites[b.cause]:
                    stacks.setdefault(b.cause, []).append((_kind(g), g.user_stack))
    into: dict[str, str] = {}
    for outer in breaks:
        inner = next((b for b in breaks if b is not outer and any(
            _encloses(o, i) for o in stacks.get(outer.cause, ()) for i in stacks.get(b.cause, ())
        )), None)  # fmt: skip
        if inner is not None:
            into[outer.cause] = inner.cause
    return into


def _kind(g: GraphBreak) -> str:
    return gb_id_of(g.documentation) or gb_id_of(g.reason) or g.summary


def _encloses(outer: _Stack, inner: _Stack) -> bool:
    """Whether ``outer`` stopped in a frame that ``inner``'s stack passes through: the
    same calls down to that function, at or after the line it called down from, with the
    same registry id.

    Example:
        >>> loc = lambda f, n, fn: SourceLoc(filename=f, line=n, function=fn)
        >>> caller, body = loc("m.py", 3, "run"), loc("w.py", 10, "wrapper")
        >>> out = ("GB0088", (caller, loc("w.py", 14, "wrapper")))
        >>> inn = ("GB0088", (caller, body, loc("m.py", 40, "forward")))
        >>> before = ("GB0088", (caller, loc("w.py", 6, "wrapper")))
        >>> _encloses(out, inn), _encloses(inn, out), _encloses(before, inn)
        (True, False, False)
        >>> _encloses(("GB0001", out[1]), inn)
        False
    """
    (kind, above), (kind_in, below) = outer, inner
    n = len(above)
    if kind != kind_in or len(below) <= n:
        return False
    calls = all(
        (a.filename, a.line) == (b.filename, b.line)
        for a, b in zip(above[:-1], below[: n - 1], strict=True)
    )
    last, through = above[-1], below[n - 1]
    same_function = (last.filename, last.function) == (through.filename, through.function)
    # an exception leaves a call at its line or later (a ``finally``, a handler)
    return calls and same_function and last.line >= through.line

