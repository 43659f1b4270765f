"""How the target's own run called its compiled code, per compiled frame, and the one rule
``explore(..., measure=True)`` decides by: time from the run itself, or call the target
again.

Dynamo records a ``Torch-Compiled Region: <compile id>`` event around each call of
compiled code. A compiled frame (one code object) keeps its frame id over all its
recompiles (``3/0``, ``3/1``, ... are frame 3), so a loop whose compiled step recompiles
on every call (an optimizer step under a float learning rate, a module whose shapes
change) calls its frame once per step, each time in a new compile. Counting per compile
id would call that loop "one call" and run it again; counting per frame does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compiler.model import CompileId

_FrameKey = tuple[int | None, int | None]  # (compiled autograd id, frame id)


@dataclass(frozen=True, slots=True)
class FrameCalls:
    """One compiled frame's calls in the run: ``compiles`` in the order the run first
    called them (the exploration's ids), and ``calls``, the compile each call ran
    (a call is a warm-up where it is its compile's first)."""

    compiles: tuple[str, ...]
    calls: tuple[str, ...]

    @property
    def warm_ups(self) -> tuple[int, ...]:
        """The 1-based calls that were their compile's first (compile, autotuning).

        >>> FrameCalls(("0/0", "0/1"), ("0/0", "0/0", "0/1")).warm_ups
        (1, 3)
        """
        seen: set[str] = set()
        first = []
        for n, cid in enumerate(self.calls, start=1):
            if cid not in seen:
                seen.add(cid)
                first.append(n)
        return tuple(first)


def frame_calls(
    region_calls: Iterable[str], torch_ids: Mapping[str, str] | None = None
) -> dict[str, FrameCalls]:
    """The run's compiled-region calls (torch's compile ids, in call order) grouped by
    compiled frame, keyed by the frame's first compile (the exploration's id; ``torch_ids``
    maps torch's ids to the exploration's where a capture renumbered them). Ids that are
    not compile ids (torch's ``Unknown``) are left out.

    >>> calls = frame_calls(["0/0", "1/0", "0/1", "1/0"])
    >>> {key: (len(f.calls), f.compiles) for key, f in calls.items()}
    {'0/0': (2, ('0/0', '0/1')), '1/0': (2, ('1/0',))}
    """
    ids = torch_ids or {}
    grouped: dict[_FrameKey, list[str]] = {}
    for raw in region_calls:
        try:
            cid = CompileId.from_string(raw)
        except ValueError:
            continue
        grouped.setdefault((cid.compiled_autograd_id, cid.frame_id), []).append(
            ids.get(raw, raw)
        )
    out = {}
    for calls in grouped.values():
        compiles = tuple(dict.fromkeys(calls))
        out[compiles[0]] = FrameCalls(compiles=compiles, calls=tuple(calls))
    return out


def calls_again(frames: Mapping[str, FrameCalls]) -> bool:
    """The one rule for "call the target again" (the same on every device): only where the
    run called every compiled frame exactly once, a one-step target (a graph break's
    resume function is a frame of its own, called once too). Where any frame ran more
    than once, even each time in a new compile, the run itself is what gets timed; where
    no compiled code ran, there is nothing to time.

    Example (12 calls of one frame over 8 compiles: the target is not called again):
        >>> ids = [f"0/{min(n, 7)}" for n in range(12)]
        >>> calls_again(frame_calls(ids)), calls_again(frame_calls(["0/0", "1/0"]))
        (False, True)
    """
    return bool(frames) and all(len(f.calls) == 1 for f in frames.values())


def untimed_note(frames: Mapping[str, FrameCalls]) -> str:
    """What the notes say where the run's calls gave no kernel time: which calls were
    warm-up (each compile's first), and that no steady call could be timed.

    >>> note = untimed_note(frame_calls(["0/0", "0/1", "0/2"]))
    >>> note.split(":")[0]
    'No steady call could be timed'
    >>> "Frame 0/0 ran 3 times in 3 compiles (0/0, 0/1, 0/2), warm-up calls 1, 2, 3" in note
    True
    """
    parts = []
    for key, f in frames.items():
        warm = f.warm_ups
        what = f"Frame {key} ran {_times(len(f.calls))} in {len(f.compiles)} compile"
        what += f"s ({', '.join(f.compiles)})" if len(f.compiles) > 1 else f" ({key})"
        if len(warm) == len(f.calls):
            listed = ", ".join(str(n) for n in warm)
            tail = ": it recompiled on each call" if len(f.calls) > 1 else ""
            parts.append(f"{what}, warm-up call{'s' if len(warm) > 1 else ''} {listed}{tail}")
        else:
            parts.append(f"{what}, warm-up calls {', '.join(str(n) for n in warm)}")
    again = (
        "The target was not called again, since your run called its compiled code more than "
        "once (explore() a target that runs one step to have its kernels timed from extra "
        "calls)."
    )
    if any(len(f.warm_ups) < len(f.calls) for f in frames.values()):
        return (
            "No kernel ran in your run's steady calls that the profiler links to an explored "
            "kernel (a backend that generates none, such as eager or aot_eager, runs none): "
            f"nothing was timed. {'; '.join(parts)}. {again}"
        )
    return (
        "No steady call could be timed: every kernel ran only in warm-up calls (a compile's "
        f"first call: compile, autotuning). {'; '.join(parts)}. {again}"
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"
