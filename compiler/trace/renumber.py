"""Compile ids as a fresh process would number them: a capture compiles beside what the
process compiled before, so torch's frame and compile numbers go on from there; the
Exploration numbers its own from ``0/0`` (torch's ids kept in a note)."""

from __future__ import annotations

import dataclasses

from compiler.trace.events import Event


def as_if_reset(
    events: list[Event], before: dict[int, int]
) -> tuple[list[Event], list[tuple[str, str]]]:
    """Events with compile ids numbered as if Dynamo had been reset before the capture:
    frames from 0 in the order of torch's frame ids, each frame's compiles from 0. The
    capture compiles beside what the process compiled before, so torch's own numbering
    goes on from there. Returns the events and (new id, torch's id) of each compile
    renumbered.

    Example:
        >>> from compiler.model import CompileId
        >>> from compiler.trace.events import Event
        >>> e = Event("dynamo_start", {}, compile_id=CompileId(frame_id=3, frame_compile_id=1))
        >>> events, renamed = as_if_reset([e], {3: 1})
        >>> str(events[0].compile_id), renamed
        ('0/0', [('0/0', '3/1')])
    """
    ids = [e.compile_id for e in events if e.compile_id is not None]
    frames = sorted({c.frame_id for c in ids if c.frame_id is not None})
    first = {f: min(c.frame_compile_id or 0 for c in ids if c.frame_id == f) for f in frames}
    # a frame's compile numbers start after what it had before; a compile of an attempt
    # the capture saw start is never below its first
    shift = {f: min(before.get(f, 0), first[f]) for f in frames}
    new_frame = {f: i for i, f in enumerate(frames)}
    if all(new_frame[f] == f and shift[f] == 0 for f in frames):
        return events, []
    renamed: dict[str, str] = {}
    rebased = []
    for event in events:
        cid = event.compile_id
        if cid is None or cid.frame_id is None:
            rebased.append(event)
            continue
        new = dataclasses.replace(
            cid,
            frame_id=new_frame[cid.frame_id],
            frame_compile_id=None
            if cid.frame_compile_id is None
            else cid.frame_compile_id - shift[cid.frame_id],
        )
        renamed.setdefault(str(new), str(cid))
        rebased.append(dataclasses.replace(event, compile_id=new))
    return rebased, [(new, old) for new, old in renamed.items() if new != old]
