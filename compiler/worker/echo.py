"""A worker that answers at once: the smallest user of ``compiler.worker.frames.serve``,
for the examples and tests of the worker base (``python -m compiler.worker.echo``).

A request ``{"say": x}`` is answered ``{"ok": True, "said": x}``; ``{"sleep": s}``
sleeps first (a hang, to a short timeout); ``{"exit": n}`` ends the process at once (a
crash).
"""

from __future__ import annotations

import os
import time
from typing import Any

from compiler.worker.frames import serve


def answer(req: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request.

    >>> answer({"say": "hi"})
    {'ok': True, 'said': 'hi'}
    """
    if "exit" in req:
        os._exit(int(req["exit"]))
    time.sleep(float(req.get("sleep", 0)))
    return {"ok": True, "said": req.get("say")}


if __name__ == "__main__":
    serve(answer, lambda _hello: None, "echo worker")
