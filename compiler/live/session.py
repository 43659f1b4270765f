"""Live recompiles: edited source compiled in a worker process, the latest edit winning.

Why a worker process: a compile of code being edited can crash (a segfault in a C++
kernel build), hang (an endless loop the user just typed) or leak, and torch.compile
changes process-wide state (Dynamo's caches, configs, loggers). In a process of its own
none of that reaches the user's kernel: a crash or a hang costs a respawn, and the
user's torch state is never touched. The worker is kept warm (torch imported, one
warm-up compile done), and a spare one waits, so that an edit pays for its compile only
and a cancelled compile costs no torch import.

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
import contextlib
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from compiler.live.worker import _HEADER, write_frame
from compiler.model import Exploration

HISTORY_LIMIT = 20
TIMEOUT_S = 300.0
# A worker past this resident size is replaced by a fresh one after its reply.
WORKER_RSS_LIMIT_MB = 3000.0
_FILENAME = "<live>"


@dataclass(frozen=True, kw_only=True, slots=True)
class LiveError:
    """Why an edit did not compile: ``kind`` is ``syntax``, ``exception``, ``compile``,
    ``option``, ``target``, ``input``, ``timeout`` or ``crash``; ``line`` is the
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


class _Worker:
    """One worker process and its pipes; the first frame it sends says it is ready."""

    def __init__(self, backend: str) -> None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        # closed in kill(); the worker's stderr, read back for a crash report
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "compiler.live.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
        )  # fmt: skip
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        write_frame(self.stdin, {"backend": backend})
        self.ready = False
        self.rss_mb = 0.0

    def send(self, message: dict[str, Any]) -> None:
        write_frame(self.stdin, message)

    def receive(self, deadline: float, cancelled: Callable[[], bool]) -> dict[str, Any] | str:
        """The next message; or ``"cancelled"``, ``"timeout"`` or ``"crash"``."""
        fd = self.stdout.fileno()
        buf = b""
        need = _HEADER.size
        size = None
        while True:
            if cancelled():
                return "cancelled"
            if time.monotonic() > deadline:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], 0.01)
            if not ready:
                continue
            chunk = os.read(fd, need - len(buf))
            if not chunk:
                return "crash"
            buf += chunk
            if size is None and len(buf) >= _HEADER.size:
                (size,) = _HEADER.unpack(buf[: _HEADER.size])
                buf = buf[_HEADER.size :]
                need = size
            if size is not None and len(buf) >= need:
                message: dict[str, Any] = pickle.loads(buf[:need])
                return message

    def log_tail(self, lines: int = 6) -> str:
        self.log.seek(0)
        text = self.log.read().decode("utf-8", "replace").strip().splitlines()
        return "\n".join(text[-lines:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.stdin, self.stdout, self.log):
            with contextlib.suppress(OSError):
                stream.close()


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
        self._backend = backend
        self._want_spare = spare
        self.history: collections.deque[LiveResult] = collections.deque(maxlen=history_limit)
        self.latest: LiveResult | None = None
        self._cond = threading.Condition()
        self._pending: tuple[int, dict[str, Any]] | None = None
        self._version = 0
        self._busy = False
        self._closed = False
        self._worker: _Worker | None = _Worker(backend)
        self._spare: _Worker | None = _Worker(backend) if spare else None
        self._thread = threading.Thread(target=self._loop, name="live-compile", daemon=True)
        self._thread.start()

    def submit(
        self, source: str, inputs: tuple[Any, ...], options: dict[str, Any] | None = None,
        target: str | None = None,
    ) -> int:  # fmt: skip
        """Queue an edit; returns its version. Older pending edits are dropped."""
        with self._cond:
            self._version += 1
            version = self._version
        options = dict(options or {})
        try:
            blob = _serialize(inputs)
        except InputSendError as exc:
            err = LiveError(kind="input", message=str(exc))
            self._deliver(LiveResult(version=version, source=source, options=options, error=err))
            return version
        request = {"source": source, "target": target, "filename": _FILENAME,
                   "inputs": blob, "options": options}  # fmt: skip
        with self._cond:
            self._pending = (version, request)
            self._cond.notify_all()
        return version

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no edit is pending or compiling; False if ``timeout`` ran out."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """Stop the thread and the worker processes."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=5)
        for w in (self._worker, self._spare):
            if w is not None:
                w.kill()
        self._worker = self._spare = None

    # -- the background thread ----------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                assert self._pending is not None
                version, request = self._pending
                self._pending = None
                self._busy = True
            try:
                result = self._run(version, request)
                if result is not None:
                    with self._cond:
                        stale = self._pending is not None or version != self._version
                    if not stale:
                        self._deliver(result)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _newer(self) -> bool:
        return self._pending is not None or self._closed

    def _run(self, version: int, request: dict[str, Any]) -> LiveResult | None:
        source, options = request["source"], request["options"]
        worker = self._ready_worker()
        if worker is None:
            return None
        started = time.perf_counter()
        try:
            worker.send({**request, "id": version})
        except OSError:
            reply: dict[str, Any] | str = "crash"
        else:
            reply = worker.receive(time.monotonic() + self._timeout, self._newer)
        seconds = time.perf_counter() - started
        if isinstance(reply, str):
            tail = worker.log_tail()
            self._replace_worker()
            if reply == "cancelled":
                return None
            if reply == "timeout":
                msg = (f"the compile took longer than {self._timeout:.0f} s and was stopped; "
                       "an endless loop in the code? (timeout=... sets the limit)")  # fmt: skip
                err = LiveError(kind="timeout", message=msg)
            else:
                msg = ("the live compile worker died while compiling this edit; your session "
                       f"is unaffected and a fresh worker takes over. Its last words:\n{tail}")
                err = LiveError(kind="crash", message=msg)
            return LiveResult(version=version, source=source, options=options, error=err,
                              seconds=seconds)  # fmt: skip
        worker.rss_mb = float(reply.get("rss_mb") or 0.0)
        if worker.rss_mb > WORKER_RSS_LIMIT_MB:
            self._replace_worker()
        if not reply.get("ok"):
            err = LiveError(kind=reply["kind"], message=reply["message"], line=reply.get("line"))
            return LiveResult(version=version, source=source, options=options, error=err,
                              seconds=seconds)  # fmt: skip
        exploration = Exploration.from_json(reply["json"])
        return LiveResult(version=version, source=source, options=options,
                          exploration=exploration, seconds=seconds,
                          compile_seconds=float(reply.get("seconds") or 0.0))  # fmt: skip

    def _ready_worker(self) -> _Worker | None:
        while not self._closed:
            if self._worker is None:
                self._replace_worker()
            worker = self._worker
            assert worker is not None
            if worker.ready:
                return worker
            reply = worker.receive(time.monotonic() + self._timeout, lambda: self._closed)
            if isinstance(reply, dict) and reply.get("ready"):
                worker.ready = True
                return worker
            if reply == "cancelled":
                return None
            self._replace_worker()
        return None

    def _replace_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
        self._worker, self._spare = self._spare, None
        if self._worker is None:
            self._worker = _Worker(self._backend)
        if self._want_spare:
            self._spare = _Worker(self._backend)

    def _deliver(self, result: LiveResult) -> None:
        self.latest = result
        if result.ok:
            self.history.append(result)
        if self._on_result is not None:
            self._on_result(result)


class InputSendError(ValueError):
    """An input cannot be sent to the worker process (it does not pickle)."""


def _serialize(inputs: tuple[Any, ...]) -> bytes:
    for i, value in enumerate(inputs):
        try:
            pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            msg = (
                f"input {i + 1} ({type(value).__name__}) cannot be sent to the live compile "
                f"worker: it does not pickle ({exc}). Pass tensors, numbers, lists, dicts or "
                "other picklable values (a module: pass its class in the source instead)."
            )
            raise InputSendError(msg) from exc
    return pickle.dumps(inputs, protocol=pickle.HIGHEST_PROTOCOL)


__all__ = ["HISTORY_LIMIT", "InputSendError", "LiveEngine", "LiveError", "LiveResult"]
