"""Eager against compiled time per call on CUDA, from extra calls of a one-call target
(``explore(measure=True)``): what each compiled call spent its time on (device, host,
CUDA graph recordings, warm-ups and input copies)."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from typing import Any

from compiler import _compat
from compiler.measure.kernel_timing import REPEATS
from compiler.measure.timed_calls import CallTimes, synchroniser, time_calls
from compiler.model import CallTiming


def call_timing(run: Callable[[], Any], profiled: Any, graph_events: list[Any]) -> CallTiming:
    """Eager against compiled time per call, and what the compiled call spent it on."""
    import torch

    runs = REPEATS
    with torch.compiler.set_stance("force_eager"):
        eager, _ = _timed(run, runs)
    before = len(graph_events)
    compiled, events = _timed(run, runs, graph_events)
    during_timing = graph_events[before:]
    # every compiled call since the events started: the profiled runs and these timed
    # runs, each after 3 warm-up calls
    per_call = 2 * (runs + 3)
    recordings = sum(1 for e in graph_events if e.metadata.get("what") == "recording")
    warmups = sum(1 for e in graph_events if e.metadata.get("what") == "warmup")
    device_ms = profiled.device_us / runs / 1e3
    timing = CallTiming(
        runs=runs,
        eager_ms=eager.median_ms,
        compiled_ms=compiled.median_ms,
        eager_spread_ms=eager.spread_ms,
        compiled_spread_ms=compiled.spread_ms,
        device_ms=device_ms,
        cpu_ms=compiled.host_median_ms,
        cudagraph_replays=profiled.graph_launches / runs,
        cudagraph_recordings=recordings / per_call,
        cudagraph_warmups=warmups / per_call,
        input_copy_bytes=_input_copy_bytes(profiled.graph_launches / runs),
        compiled_mean_ms=compiled.mean_ms,
        recording_ms=_extra_cost(compiled.calls_ms, events, "recording"),
        warmup_ms=_extra_cost(compiled.calls_ms, events, "warmup"),
        compiled_calls_ms=compiled.calls_ms,
        compiled_call_events=tuple(",".join(ev) for ev in events),
    )
    notes = _call_notes(timing, profiled, len(during_timing))
    return dataclasses.replace(timing, notes=tuple(notes))


def _input_copy_bytes(replays_per_call: float) -> float:
    """Bytes copied into CUDA graph inputs per call: each replay of a recorded graph
    first copies its non-static inputs into the graph's buffers. With several graphs,
    their replays are taken as equally frequent."""
    sizes = _compat.cudagraph_input_copy_bytes()
    if not sizes or replays_per_call <= 0:
        return 0.0
    return replays_per_call * sum(sizes) / len(sizes)


def _extra_cost(
    times: tuple[float, ...], events: list[tuple[str, ...]], what: str
) -> float | None:
    """What one CUDA graph ``what`` (recording, warm-up) adds to a call: the mean time of
    the calls that did one, less the median of the calls that did neither, divided by
    how many each did. None when no timed call did one, or none did neither."""
    plain = [t for t, ev in zip(times, events, strict=True) if not ev]
    doing = [(t, ev.count(what)) for t, ev in zip(times, events, strict=True) if what in ev]
    if not plain or not doing:
        return None
    base = statistics.median(plain)
    return max(statistics.fmean((t - base) / n for t, n in doing), 0.0)


def _timed(
    run: Callable[[], Any], runs: int, graph_events: list[Any] | None = None
) -> tuple[CallTimes, list[tuple[str, ...]]]:
    """``runs`` calls after 3 warm-ups, synchronised, and per timed call the CUDA graph
    events (``recording``, ``warmup``) logged during it."""
    # the events a call logs are those between its start and the next call's start
    sink = graph_events if graph_events is not None else []
    marks: list[int] = []

    def mark(phase: str, _i: int) -> None:
        if phase == "timing":
            marks.append(len(sink))

    times = time_calls(run, warmup=3, runs=runs, sync=synchroniser(True), before=mark)
    ends = [*marks[1:], len(sink)]
    events = [
        tuple(str(e.metadata.get("what", "")) for e in sink[start:end])
        for start, end in zip(marks, ends, strict=True)
    ]
    return times, events


def _call_notes(t: CallTiming, profiled: Any, graph_events_timed: int) -> list[str]:
    notes = []
    if t.compiled_ms > t.eager_ms:
        notes.append(
            f"compiled is slower than eager: {t.compiled_ms:.3f} ms against "
            f"{t.eager_ms:.3f} ms per call ({t.speedup:.2f}x)."
        )
    device = t.device_ms or 0.0
    remedy = (
        "CUDA graphs already replay the kernels: what is left is the call's own host work "
        "(guards, copying inputs into the graph), which larger inputs amortise."
        if t.cudagraph_replays > 0
        else "larger inputs or mode='reduce-overhead' (CUDA graphs) amortise it."
    )
    if t.cpu_ms is not None and t.compiled_ms > 0 and device < 0.5 * t.compiled_ms:
        notes.append(
            f"the compiled call is host-bound: its kernels take {device:.3f} ms on the device "
            f"while the host spends {t.cpu_ms:.3f} ms in the call (guards, the wrapper, "
            f"launches); {remedy}"
        )
    if t.cudagraph_recordings > 0 or t.cudagraph_warmups > 0 or graph_events_timed:
        notes.append(
            f"CUDA graphs were warmed up {t.cudagraph_warmups:.2f} and recorded "
            f"{t.cudagraph_recordings:.2f} times per call after warm-up: every new recording "
            "re-runs the function eagerly and captures it again. Inputs that change address, "
            "shape or identity between calls (or a new graph per call) cause this."
        )
    if t.input_copy_bytes > 0:
        notes.append(
            f"{t.input_copy_bytes / 1e6:.2f} MB per call were copied into the CUDA graph's "
            "static input buffers before replaying it."
        )
    rest = sorted(profiled.unattributed_us.items(), key=lambda kv: -kv[1])
    if rest:
        listed = ", ".join(f"{name} {us / t.runs / 1e3:.3f} ms" for name, us in rest[:5])
        notes.append(f"device time outside the output code's kernels, per call: {listed}.")
    return notes
