"""The parent's side of a worker process: start it, talk to it (``compiler.worker.frames``),
and replace it when it crashes, hangs, is cancelled or grows too large.

Why worker processes: what they run can crash (a segfault in a C++ or Triton build), hang
(an endless loop the user just typed) or leak, and compilers change process-wide state
(Dynamo's caches, configs, loggers, Triton's cache folder). In a process of its own none
of that reaches the user's kernel: a crash or a hang costs a respawn. A worker is kept
warm (its imports and one warm-up compile done before it says it is ready), so a request
pays for its own work only; a spare may wait beside it, so that a killed worker costs no
start-up either.

Example:
    >>> workers = Workers("compiler.worker.echo")  # a worker that imports torch: seconds
    >>> workers.ask({"say": "hi"}, timeout=60)["said"]  # doctest: +SKIP
    'hi'
    >>> workers.close()
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from compiler.worker.frames import HEADER, write_frame

# importing torch (and Triton) and a warm-up compile, on a loaded 2-core machine
START_TIMEOUT_S = 180.0
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a request got no reply: ``kind`` is ``cancelled``, ``timeout``, ``crash`` or
    ``start`` (the worker died or hung before it was ready); ``log`` is the end of the
    worker's stderr (its Python stack, after a crash or a timeout)."""

    kind: str
    log: str = ""

    def tail(self, lines: int = 6) -> str:
        """The log's last ``lines`` lines."""
        return "\n".join(self.log.splitlines()[-lines:])


class Worker:
    """One worker process (``python -m module``) and its pipes; its stderr goes to a
    temporary file, read back for a crash report."""

    def __init__(self, module: str, hello: dict[str, Any], path: Sequence[str] = ()) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_ROOT, env.get("PYTHONPATH"), *path]))
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in kill)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
        )  # fmt: skip
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        write_frame(self.stdin, hello)
        self.ready = False

    def send(self, message: dict[str, Any]) -> None:
        """Send one request."""
        write_frame(self.stdin, message)

    def receive(self, deadline: float, cancelled: Callable[[], bool]) -> dict[str, Any] | str:
        """The next message; or ``"cancelled"``, ``"timeout"`` or ``"crash"``."""
        fd = self.stdout.fileno()
        buf = b""
        need = HEADER.size
        size = None
        while True:
            if cancelled():
                return "cancelled"
            if time.monotonic() > deadline:
                return "timeout"
            try:
                ready, _, _ = select.select([fd], [], [], 0.01)
                chunk = os.read(fd, need - len(buf)) if ready else None
            except (OSError, ValueError):  # closed under us: killed from another thread
                return "crash"
            if chunk is None:
                continue
            if not chunk:
                return "crash"
            buf += chunk
            if size is None and len(buf) >= HEADER.size:
                (size,) = HEADER.unpack(buf[: HEADER.size])
                buf = buf[HEADER.size :]
                need = size
            if size is not None and len(buf) >= need:
                message: dict[str, Any] = pickle.loads(buf[:need])
                return message

    def dump_stack(self) -> None:
        """Have the worker write its Python stack into its log (faulthandler, SIGUSR1)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(0.3)  # faulthandler writes from its C signal handler at once

    def log_tail(self, lines: int = 200) -> str:
        """The last ``lines`` lines the worker wrote to stderr."""
        try:
            self.log.seek(0)
            text = self.log.read().decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):  # killed and closed meanwhile
            return ""
        return "\n".join(text[-lines:])

    def kill(self) -> None:
        """Stop the process and close its pipes and log."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.stdin, self.stdout, self.log):
            with contextlib.suppress(OSError):
                stream.close()


class Workers:
    """A worker process that answers one request at a time, replaced after a failure.

    Args:
        module: what the worker runs (``python -m module``); its main is
            ``compiler.worker.frames.serve``.
        hello: the warm-up settings sent as the worker's first frame.
        warm: start a worker now, and again at once after each replacement; otherwise
            one starts on the first request after the last was dropped.
        spare: keep a second warm worker ready to take over after a failure.
        start_timeout: seconds a worker may take to say it is ready.
        rss_limit_mb: a worker past this peak resident size is replaced after its reply.
        path: folders added to the worker's ``PYTHONPATH`` (after this package's).
    """

    def __init__(
        self, module: str, hello: dict[str, Any] | None = None, *, warm: bool = False,
        spare: bool = False, start_timeout: float = START_TIMEOUT_S,
        rss_limit_mb: float | None = None, path: Sequence[str] = (),
    ) -> None:  # fmt: skip
        self._module, self._hello, self._path = module, dict(hello or {}), tuple(path)
        self._warm, self._want_spare = warm, spare
        self.start_timeout = start_timeout
        self._rss_limit = rss_limit_mb
        self._lock = threading.Lock()  # starts and kills, which close() may race
        self._current: Worker | None = None
        self._spare: Worker | None = None
        self._closed = False
        self._ids = 0
        if warm:
            self.start()

    @property
    def running(self) -> bool:
        """Whether a worker process is started (ready or not)."""
        return self._current is not None

    def start(self) -> None:
        """Start the worker (and the spare) now, if not started: it takes seconds."""
        with self._lock:
            if self._closed:
                return
            if self._current is None:
                self._current = self._spawn()
            if self._want_spare and self._spare is None:
                self._spare = self._spawn()

    def ask(
        self, request: dict[str, Any], timeout: float,
        cancelled: Callable[[], bool] | None = None,
    ) -> dict[str, Any] | Failure:  # fmt: skip
        """The worker's reply to ``request``, or why there is none. A worker that did not
        answer within ``timeout`` seconds (its stack is dumped into its log first), died,
        or was ``cancelled`` (checked every 10 ms) is replaced."""
        worker = self._ready()
        if isinstance(worker, Failure):
            return worker
        self._ids += 1
        stop = (lambda: self._closed or cancelled()) if cancelled else (lambda: self._closed)
        try:
            worker.send({**request, "id": self._ids})
        except (OSError, ValueError):
            reply: dict[str, Any] | str = "crash"
        else:
            reply = worker.receive(time.monotonic() + timeout, stop)
        if isinstance(reply, str):
            if reply == "timeout":
                worker.dump_stack()
            log = worker.log_tail()
            self.replace(worker)
            return Failure("cancelled" if self._closed else reply, log)
        if self._rss_limit is not None and float(reply.get("rss_mb") or 0.0) > self._rss_limit:
            self.replace(worker)
        return reply

    def _ready(self) -> Worker | Failure:
        """The current worker once it said it is ready; a worker that died starting is
        replaced once."""
        failure = Failure("start")
        for _ in range(2):
            self.start()
            worker = self._current
            if worker is None:
                return Failure("cancelled")
            if worker.ready:
                return worker
            hello = worker.receive(time.monotonic() + self.start_timeout, lambda: self._closed)
            if isinstance(hello, dict) and hello.get("ready"):
                worker.ready = True
                return worker
            failure = Failure("cancelled" if hello == "cancelled" else "start", worker.log_tail())
            self.replace(worker)
            if hello != "crash":
                break
        return failure

    def replace(self, worker: Worker) -> None:
        """Kill ``worker`` if it is the current one; the spare takes over."""
        with self._lock:
            if worker is not self._current:
                return
            worker.kill()
            self._current, self._spare = self._spare, None
            if self._closed:
                return
            if self._warm and self._current is None:
                self._current = self._spawn()
            if self._want_spare:
                self._spare = self._spawn()

    def close(self) -> None:
        """Stop the worker processes; a request waiting on one ends as ``cancelled``."""
        with self._lock:
            self._closed = True
            workers = [w for w in (self._current, self._spare) if w is not None]
            self._current = self._spare = None
        for w in workers:
            w.kill()

    def _spawn(self) -> Worker:
        return Worker(self._module, self._hello, self._path)


__all__ = ["START_TIMEOUT_S", "Failure", "Worker", "Workers"]
