"""The one protocol between this process and a worker process (live recompiles, the
kernel lab), and the worker's side of it.

Messages are frames on the worker's stdin and stdout: an 8-byte length, then a pickle.
A conversation: the parent sends a hello (a dict of warm-up settings); the worker warms
up and answers ``{"ready": True, "pid": ...}``; then each request (a dict with an
``"id"``) gets one reply (a dict with the same ``"id"`` and the worker's peak resident
size, ``"rss_mb"``). The worker ends when its stdin closes. Anything the worker prints
goes to its stderr, so that a print of the code it runs cannot corrupt a frame.

Example:
    >>> import io
    >>> pipe = io.BytesIO()
    >>> write_frame(pipe, {"id": 1})
    >>> _ = pipe.seek(0)
    >>> read_frame(pipe), read_frame(pipe)
    ({'id': 1}, None)
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import signal
import struct
import sys
from collections.abc import Callable
from typing import IO, Any

HEADER = struct.Struct("<Q")


def read_frame(stream: IO[bytes]) -> Any:
    """One message, or None at end of stream."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (size,) = HEADER.unpack(head)
    return pickle.loads(stream.read(size))


def write_frame(stream: IO[bytes], message: Any) -> None:
    """Send one message (flushed)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def error(kind: str, message: str, line: int | None = None) -> dict[str, Any]:
    """A reply saying why a request failed (``kind``), at ``line`` of its source if known.

    >>> error("syntax", "SyntaxError: invalid syntax", 3)["ok"]
    False
    """
    return {"ok": False, "kind": kind, "message": message, "line": line}


def serve(
    handle: Callable[[dict[str, Any]], dict[str, Any]],
    warm_up: Callable[[dict[str, Any]], None],
    name: str,
) -> None:
    """A worker's main: warm up with the hello, then answer requests until stdin closes.

    A request that raises is answered as a ``crash`` reply and the worker serves on; a
    failed warm-up leaves a worker with a cold compiler, which still works. ``name`` (the
    "kernel lab worker") says whose failure it was.
    """
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints of the code the worker runs must not land in a frame
    sys.stdout = sys.stderr
    # the Python stack into the log on a crash, and on SIGUSR1 (which the parent sends to
    # a request past its timeout): the parent reads it back. chain: a handler the worker
    # set for SIGUSR1 before (the live worker's line report) runs too.
    faulthandler.enable()
    faulthandler.register(signal.SIGUSR1, chain=True)
    stdin = sys.stdin.buffer
    hello = read_frame(stdin) or {}
    try:
        warm_up(hello)
    except Exception as exc:
        print(f"{name}: warm-up failed: {exc}", file=sys.stderr)
    write_frame(out, {"ready": True, "pid": os.getpid()})
    while (req := read_frame(stdin)) is not None:
        try:
            reply = handle(req)
        except BaseException as exc:  # the worker's own failure: report, keep serving
            reply = error("crash", f"the {name} failed: {type(exc).__name__}: {exc}")
        reply["id"] = req.get("id")
        reply["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        write_frame(out, reply)


__all__ = ["HEADER", "error", "read_frame", "serve", "write_frame"]
