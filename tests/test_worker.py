"""The worker base that live recompiles and the kernel lab share: a crash or a hang costs
a fresh worker, never the caller; a cancelled request ends at once; the newest job wins.
These run ``compiler.worker.echo``, a worker that answers at once."""

from __future__ import annotations

import threading
import time

from compiler.worker.newest import Newest
from compiler.worker.process import Failure, Workers


def test_a_crash_a_hang_or_a_cancel_is_reported_and_the_next_request_gets_a_fresh_worker():
    # not warm and no spare: each worker this starts (3, a torch import each) is needed
    workers = Workers("compiler.worker.echo")
    assert not workers.running
    try:
        assert workers.ask({"say": 1}, timeout=120)["said"] == 1
        crash = workers.ask({"exit": 3}, timeout=60)
        assert isinstance(crash, Failure) and crash.kind == "crash"
        assert not workers.running  # dropped; the next request starts one
        assert workers.ask({"say": 2}, timeout=120)["said"] == 2
        hang = workers.ask({"sleep": 60}, timeout=0.5)
        assert isinstance(hang, Failure) and hang.kind == "timeout"
        assert "most recent call first" in hang.log  # faulthandler's stack, on SIGUSR1
        assert workers.ask({"say": 3}, timeout=120)["said"] == 3
        started = time.monotonic()
        reply = workers.ask({"sleep": 60}, timeout=120,
                            cancelled=lambda: time.monotonic() > started + 0.3)  # fmt: skip
        assert isinstance(reply, Failure) and reply.kind == "cancelled"
        assert time.monotonic() - started < 30
    finally:
        workers.close()
    assert not workers.running
    assert workers.ask({"say": 4}, timeout=1) == Failure("cancelled")  # closed: none starts


def test_the_newest_job_wins_and_a_superseded_result_is_never_delivered():
    got: list[int] = []
    gate = threading.Event()

    def run(version: int, job: int) -> int:
        if job == 1:
            gate.wait(10)  # still running when jobs 2 and 3 come
            assert newest.superseded()
        return job

    newest: Newest[int, int] = Newest(run, got.append, name="test-newest")
    try:
        newest.submit(newest.next_version(), 1)
        time.sleep(0.1)
        newest.submit(newest.next_version(), 2)  # waits, then is replaced by 3
        newest.submit(newest.next_version(), 3)
        gate.set()
        assert newest.wait(10)
        assert got == [3]
    finally:
        newest.close()
