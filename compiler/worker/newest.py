"""The newest request wins: a thread that runs only the latest of the jobs submitted to
it, for live recompiles, where each keystroke pause submits an edit.

A job submitted while an older one waits replaces it; one submitted while an older one
runs tells the running one it is ``superseded`` (live recompiles then kill its worker),
and a result of a superseded job is never delivered.

Example:
    >>> got = []
    >>> newest = Newest(lambda version, job: job * 2, got.append, name="doubler")
    >>> newest.submit(newest.next_version(), 21)
    >>> newest.wait(10), got
    (True, [42])
    >>> newest.close()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

J = TypeVar("J")
R = TypeVar("R")


class Newest(Generic[J, R]):
    """Runs ``run(version, job)`` on a thread of its own for the newest job submitted and
    hands what it returns (unless None, or superseded meanwhile) to ``deliver``, from that
    thread."""

    def __init__(
        self, run: Callable[[int, J], R | None], deliver: Callable[[R], None], *, name: str
    ) -> None:
        self._run, self._deliver = run, deliver
        self._cond = threading.Condition()
        self._pending: tuple[int, J] | None = None
        self._version = 0
        self._busy = False
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def next_version(self) -> int:
        """A new version number: a job of an older version still running is stale."""
        with self._cond:
            self._version += 1
            return self._version

    def submit(self, version: int, job: J) -> None:
        """Queue ``job`` as ``version``; an older job waiting is dropped."""
        with self._cond:
            self._pending = (version, job)
            self._cond.notify_all()

    def superseded(self) -> bool:
        """Whether the running job has a newer one waiting (or the thread is closing)."""
        return self._pending is not None or self._closed

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no job waits or runs; False if ``timeout`` ran out."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float = 5) -> None:
        """Stop the thread (a running job is told it is superseded)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                assert self._pending is not None
                version, job = self._pending
                self._pending = None
                self._busy = True
            try:
                result = self._run(version, job)
                if result is not None:
                    with self._cond:
                        stale = self._pending is not None or version != self._version
                    if not stale:
                        self._deliver(result)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


__all__ = ["Newest"]
