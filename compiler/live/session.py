"""Live recompiles: edited source compiled in a worker process, the latest edit winning.

Why a worker process (``compiler.worker.process`` says more): a compile of code being
edited can crash, hang or leak, and torch.compile changes process-wide state (Dynamo's
caches, configs, loggers); in a process of its own none of that reaches the user's kernel.
The worker is kept warm (torch imported, one warm-up compile done), and a spare one
waits, so that an edit pays for its compile only and a cancelled compile (the newest edit
wins, ``compiler.worker.newest``) costs no torch import.

The engine holds at most ``history_limit`` successful results (default
``HISTORY_LIMIT``); older ones are released.

Example:
    >>> from compiler.live.session import LiveEngine
    >>> import torch
    >>> engine = LiveEngine()
    >>> v = engine.submit("def f(x):\\n    return x.relu() + 1\\n", (torch.randn(4),),
    ...                   {"backend": "eager"})
    >>> engine.wait(60) and engine.latest.ok
    True
    >>> engine.close()
"""

from __future__ import annotations

import collections
import os
import pickle
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cloudpickle

from compiler.live.crossing import CrossingError, StateBox
from compiler.live.target import LiveTarget, state_for
from compiler.live.worker import LINE_REPORT
from compiler.model import Exploration
from compiler.worker.newest import Newest
from compiler.worker.process import START_TIMEOUT_S, Failure, Workers

HISTORY_LIMIT = 20
TIMEOUT_S = 300.0
# A worker past this resident size is replaced by a fresh one after its reply.
WORKER_RSS_LIMIT_MB = 3000.0
_FILENAME = "<live>"


@dataclass(frozen=True, kw_only=True, slots=True)
class LiveError:
    """Why an edit did not compile: ``kind`` is ``syntax``, ``exception``, ``compile``,
    ``option``, ``target``, ``input``, ``state`` (the notebook's state could not cross),
    ``timeout`` or ``crash``; ``line`` is the
    1-based line of the source it points at, where known."""

    kind: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        at = f"line {self.line}: " if self.line else ""
        return f"{at}{self.message}"


@dataclass(frozen=True, kw_only=True, slots=True)
class LiveResult:
    """One edit's outcome: an Exploration, or the error, and how long it took."""

    version: int
    source: str
    options: dict[str, Any]
    exploration: Exploration | None = None
    error: LiveError | None = None
    # from submit to result (queueing, transfer and compile), and the worker's compile alone
    seconds: float = 0.0
    compile_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the edit compiled."""
        return self.exploration is not None


class LiveEngine:
    """Compiles source edits in a warm worker process; the latest edit wins.

    ``submit`` returns at once with the edit's version number; a background thread sends
    the newest pending edit to the worker. An edit submitted while an older one compiles
    cancels it (the worker is killed and the spare takes over), so no stale result is
    ever delivered. ``on_result`` is called from that thread with each delivered
    ``LiveResult``.

    Args:
        on_result: called with every delivered result (success or error).
        timeout: seconds a compile may take before its worker is killed.
        history_limit: successful results kept in ``history`` (older ones released).
        backend: the backend the workers warm up with.
        spare: keep a second warm worker ready to take over after a cancel or crash.
    """

    def __init__(
        self,
        on_result: Callable[[LiveResult], None] | None = None,
        *,
        timeout: float = TIMEOUT_S,
        history_limit: int = HISTORY_LIMIT,
        backend: str = "inductor",
        spare: bool = True,
    ) -> None:
        self._on_result = on_result
        self._timeout = timeout
        self.history: collections.deque[LiveResult] = collections.deque(maxlen=history_limit)
        self.latest: LiveResult | None = None
        # what the kernel imports, the worker imports: state crosses by reference to it
        path = [p for p in sys.path if p and os.path.isdir(p)]
        self._workers = Workers(
            "compiler.live.worker", {"backend": backend}, warm=True, spare=spare,
            start_timeout=max(timeout, START_TIMEOUT_S), rss_limit_mb=WORKER_RSS_LIMIT_MB,
            path=path,
        )  # fmt: skip
        # the notebook's state the edits use: the names (small, change with the source) and
        # the module and class they edit (large, change rarely), each its own file
        self._names, self._fixed = StateBox(), StateBox()
        self._jobs: Newest[dict[str, Any], LiveResult] = Newest(
            self._run, self._deliver, name="live-compile"
        )

    def submit(
        self, source: str, inputs: tuple[Any, ...], options: dict[str, Any] | None = None,
        target: str | LiveTarget | None = None,
    ) -> int:  # fmt: skip
        """Queue an edit; returns its version. Older pending edits are dropped.

        ``target`` is the name to compile, or a ``LiveTarget`` (a module instance, a
        method, and the notebook namespace the source's names come from).
        """
        version = self._jobs.next_version()
        options = dict(options or {})
        spec = target if isinstance(target, LiveTarget) else LiveTarget(name=target)
        try:
            blob = _serialize(inputs)
            state = self._pack(source, spec)
        except (InputSendError, CrossingError) as exc:
            kind = "input" if isinstance(exc, InputSendError) else "state"
            err = LiveError(kind=kind, message=str(exc))
            self._deliver(LiveResult(version=version, source=source, options=options, error=err))
            return version
        request = {"source": source, "target": spec.name, "kind": spec.kind,
                   "module": spec.module, **state, "filename": _FILENAME,
                   "inputs": blob, "options": options}  # fmt: skip
        self._jobs.submit(version, request)
        return version

    def _pack(self, source: str, spec: LiveTarget) -> dict[str, str | None]:
        """The state files for this edit (written only when the state changed)."""
        found = state_for(source, spec)
        if found is None:  # a syntax error: the worker says so before it reads any state
            return {"names": None, "fixed": None}
        names, fixed = found
        state = {"names": self._names.pack(names), "fixed": self._fixed.pack(fixed, spec.labels())}
        # an older file is named only by requests this one supersedes
        self._names.discard_except(state["names"])
        self._fixed.discard_except(state["fixed"])
        return state

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no edit is pending or compiling; False if ``timeout`` ran out."""
        return self._jobs.wait(timeout)

    def close(self) -> None:
        """Stop the thread and the worker processes."""
        self._workers.close()  # first: a compile waiting on a worker ends as cancelled
        self._jobs.close()
        self._names.close()
        self._fixed.close()

    def _run(self, version: int, request: dict[str, Any]) -> LiveResult | None:
        """Compile one edit (on the background thread); None when a newer edit cancelled it."""
        source, options = request["source"], request["options"]
        started = time.perf_counter()
        reply = self._workers.ask(request, self._timeout, self._jobs.superseded)
        seconds = time.perf_counter() - started
        if isinstance(reply, Failure):
            if reply.kind == "cancelled":
                return None
            line = _innermost_line(reply.log)
            if reply.kind == "timeout":
                msg = (f"the compile took longer than {self._timeout:.0f} s and was stopped; "
                       "an endless loop in the code? (timeout=... sets the limit)")  # fmt: skip
                err = LiveError(kind="timeout", message=msg, line=line)
            else:
                msg = ("the live compile worker died while compiling this edit; your session "
                       f"is unaffected and a fresh worker takes over. Its last words:\n"
                       f"{reply.tail()}")  # fmt: skip
                err = LiveError(kind="crash", message=msg, line=line)
            return LiveResult(version=version, source=source, options=options, error=err,
                              seconds=seconds)  # fmt: skip
        if not reply.get("ok"):
            err = LiveError(kind=reply["kind"], message=reply["message"], line=reply.get("line"))
            return LiveResult(version=version, source=source, options=options, error=err,
                              seconds=seconds)  # fmt: skip
        exploration = Exploration.from_json(reply["json"])
        return LiveResult(version=version, source=source, options=options,
                          exploration=exploration, seconds=seconds,
                          compile_seconds=float(reply.get("seconds") or 0.0))  # fmt: skip

    def _deliver(self, result: LiveResult) -> None:
        self.latest = result
        if result.ok:
            self.history.append(result)
        if self._on_result is not None:
            self._on_result(result)


def _innermost_line(log: str) -> int | None:
    """The edited source's line where the worker stopped: what it reported on SIGUSR1
    (a timeout), else the innermost in the stack faulthandler wrote as it crashed."""
    reported = re.findall(rf"{re.escape(LINE_REPORT)}(\d+)", log)
    if reported:
        return int(reported[-1])
    crash = log.rsplit("most recent call first", 1)[-1]
    found = re.search(rf'File "{re.escape(_FILENAME)}", line (\d+)', crash)
    return int(found.group(1)) if found else None


class InputSendError(ValueError):
    """An input cannot be sent to the worker process (it does not pickle)."""


def _serialize(inputs: tuple[Any, ...]) -> bytes:
    for i, value in enumerate(inputs):
        try:
            cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            msg = (
                f"input {i + 1} ({type(value).__name__}) cannot be sent to the live compile "
                f"worker: it does not pickle ({exc}). Pass tensors, numbers, lists, dicts or "
                "other picklable values."
            )
            raise InputSendError(msg) from exc
    # cloudpickle: an input of a class defined in the notebook crosses by value
    blob: bytes = cloudpickle.dumps(inputs, protocol=pickle.HIGHEST_PROTOCOL)
    return blob


__all__ = ["HISTORY_LIMIT", "InputSendError", "LiveEngine", "LiveError", "LiveResult"]
