"""The one timing loop (compiler/measure/timed_calls.py) and what capture reads from it, on the
CPU: CUDA's synchronise is stood in for, so the loop's order of calls is what is tested."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from compiler.measure.call_timing import _timed
from compiler.measure.kernel_timing import measure
from compiler.measure.timed_calls import CallTimes, time_calls


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: said.append("sync"))
    return said


def test_each_timed_call_is_synchronised_before_and_after_and_warm_ups_are_not():
    order: list[str] = []
    times = time_calls(
        lambda: order.append("call") or len(order), warmup=2, runs=2,
        sync=lambda: order.append("sync"), first=True,
    )  # fmt: skip
    assert order == ["sync", "call", "sync", "call", "call",
                     "sync", "call", "sync", "sync", "call", "sync"]  # fmt: skip
    assert times.first_result == 2 and times.first_ms is not None
    assert len(times.calls_ms) == len(times.host_ms) == 2
    assert all(total >= host for total, host in zip(times.calls_ms, times.host_ms, strict=True))


def test_recorded_times_take_the_loops_shape():
    t = CallTimes.of([4.0, 1.0, 2.0, 3.0])
    assert (t.median_ms, t.spread_ms, t.mean_ms) == (2.5, (1.0, 4.0), 2.5)


def test_capture_gives_each_timed_call_the_cuda_graph_events_it_logged(syncs):
    sink: list[SimpleNamespace] = []
    calls = 0

    def run() -> None:
        nonlocal calls
        calls += 1
        # the warm-ups record, then the 2nd and 4th timed calls warm up and record again
        if calls <= 3 or calls in (5, 7):
            sink.append(SimpleNamespace(metadata={"what": "warmup"}))
        if calls in (3, 7):
            sink.append(SimpleNamespace(metadata={"what": "recording"}))

    times, events = _timed(run, 4, sink)
    assert calls == 7 and len(times.calls_ms) == 4
    assert events == [(), ("warmup",), (), ("warmup", "recording")]


@pytest.mark.filterwarnings("ignore:CUDA is not available")
def test_the_profiled_pass_runs_the_warm_ups_then_the_profiled_calls(syncs):
    calls = []
    profiled = measure(lambda: calls.append(torch.ones(4).sum()), set(), warmup=2, repeats=3)
    assert len(calls) == 5 and profiled.graph_launches == 0
