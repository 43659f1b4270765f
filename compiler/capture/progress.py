"""Progress of running compiles, as torch reports it: which phase runs, for how long.

torch announces the start and end of each compile phase (``entire_frame_compile``,
``bytecode_tracing``, ``backend_compile``, ``inductor_compile``, the C++ or Triton
builds ...) as ``chromium_event`` records of its structured trace, while the compile
runs. ``reporting(callback)`` listens to them and calls ``callback`` with a
``Progress`` at every phase boundary, so a notebook or a script can say what the
compiler is doing during a long compile. It works with or without ``recording()``
around it, and leaves the trace logger as it found it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from compiler import _compat

__all__ = ["Progress", "reporting"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Progress:
    """Where the compiler is, at one phase boundary.

    ``running`` holds the phases now open, outermost first, by torch's names
    (``("entire_frame_compile", "backend_compile", "inductor_compile")``); ``event`` is
    ``"start"`` or ``"end"`` of ``phase``; ``elapsed_s`` counts from the start of
    ``reporting``; ``compiles`` is how many frame compiles have started so far.
    """

    phase: str
    event: str
    running: tuple[str, ...]
    compile_id: str
    elapsed_s: float
    compiles: int


class _PhaseHandler(logging.Handler):
    def __init__(self, callback: Callable[[Progress], None], start: float) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback
        self.start = start
        self.running: list[str] = []
        self.compiles = 0
        self.state_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict) or "chromium_event" not in metadata:
            return
        try:
            event = json.loads(getattr(record, "payload", None) or "{}")
        except ValueError:
            return
        kind, name = event.get("ph"), str(event.get("name", ""))
        if kind not in ("B", "E") or not name:
            return
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        with self.state_lock:
            if kind == "B":
                self.running.append(name)
                if name == "entire_frame_compile":
                    self.compiles += 1
            elif name in self.running:
                # Close the innermost phase of that name (and anything left open in it).
                del self.running[len(self.running) - 1 - self.running[::-1].index(name) :]
            progress = Progress(
                phase=name,
                event="start" if kind == "B" else "end",
                running=tuple(self.running),
                compile_id=str(args.get("compile_id", "")),
                elapsed_s=time.perf_counter() - self.start,
                compiles=self.compiles,
            )
        try:
            self.callback(progress)
        except Exception:  # a broken progress display must never break the user's compile
            self.callback = _ignore


def _ignore(_: Progress) -> None:
    return None


@contextlib.contextmanager
def reporting(callback: Callable[[Progress], None]) -> Iterator[None]:
    """Call ``callback(progress)`` at every compile phase start and end inside the block.

    Args:
        callback: receives a ``Progress``; it runs on the compiling thread, so keep it
            quick (throttle any display). An exception it raises turns it off.

    Example:
        >>> import torch, compiler
        >>> seen = []
        >>> with compiler.reporting(lambda p: seen.append(p.phase)):
        ...     _ = torch.compile(torch.cos, backend="eager")(torch.randn(3))
        >>> "backend_compile" in seen
        True
    """
    log = _compat.trace_logger()
    handler = _PhaseHandler(callback, time.perf_counter())
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    # Trace records are DEBUG and large: keep them away from the user's root handlers.
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate
