"""Kernel times from the target's own run (``explore(..., measure=True)``): the run capture
records anyway is profiled with ``torch.profiler``, its kernel events are linked and split
by compiled-region call (``profile.events``), and each kernel is timed over the calls after
its code's warm-up. A training loop of 12 steps is timed from steps 2..12; nothing calls
the target again.

On a CPU the kernels are Inductor's C++ kernels, which record profiler events when
``cpp.enable_kernel_profile`` is on while they are generated: capture turns it on for the
run, so the output code it records is the code that ran, with the profiler's
``RECORD_FUNCTION`` lines in it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compiler import _compat
from compiler.model import Exploration, KernelTiming, Profile
from compiler.profile.attach import linked_profile
from compiler.profile.chrome import Span, read_spans
from compiler.profile.events import link_events, warm_up
from compiler.profile.regions import region_calls_of

OWN_RUN = "the target's own run (explore(..., measure=True))"


@dataclass
class OwnRun:
    """The profiler's record of one run of the target, once ``profiling`` has ended."""

    cuda: bool
    spans: list[Span] = field(default_factory=list)
    skipped: str = ""
    # what torch's profiler printed as it started and stopped (kineto's ``profiler_start``
    # and ``profiler_stop`` lines, C++ writes to fd 1 and 2): kept here for the notes,
    # out of the user's output
    printed: list[str] = field(default_factory=list)

    @contextlib.contextmanager
    def profiling(self) -> Iterator[None]:
        """Profile the block (device kernels on CUDA, C++ kernels on a CPU); where a
        profiler already runs (the user's own), profile nothing and say why.

        >>> import torch
        >>> run = OwnRun(cuda=False)
        >>> with run.profiling():
        ...     _ = torch.ones(2) + 1
        >>> any(s.name == "aten::add" for s in run.spans), run.skipped
        (True, '')
        """
        import torch
        from torch.profiler import ProfilerActivity, profile

        if _compat.profiler_running():
            self.skipped = "a profiler was already running around explore()"
            yield
            return
        activities = [ProfilerActivity.CPU]
        if self.cuda:
            activities.append(ProfilerActivity.CUDA)
        prof: Any = profile(activities=activities)
        with _compat.patched_configs({"cpp.enable_kernel_profile": True}, {}):
            # only the profiler's own start and stop print aside: the target's prints
            # between them reach the user's output as in a plain run
            with printed_aside(self.printed):
                prof.__enter__()
            try:
                yield
                if self.cuda:
                    torch.cuda.synchronize()
            finally:
                with printed_aside(self.printed):
                    prof.__exit__(None, None, None)
        with tempfile.TemporaryDirectory(prefix="explorer_profile_") as tmp:
            path = Path(tmp) / "run.json"
            with printed_aside(self.printed):
                prof.export_chrome_trace(str(path))
            self.spans = read_spans(path)

    def printed_note(self) -> str:
        """What the notes say of the lines torch's profiler printed ("" where none).

        >>> OwnRun(cuda=False, printed=["USDT: profiler_start"]).printed_note()[-33:]
        'your output: USDT: profiler_start'
        """
        if not self.printed:
            return ""
        n = len(self.printed)
        return (
            f"torch's profiler printed {n} line{'s' if n > 1 else ''} as capture started and "
            f"stopped it, kept here and out of your output: {' | '.join(self.printed)}"
        )


@contextlib.contextmanager
def printed_aside(into: list[str]) -> Iterator[None]:
    """What the process writes to its standard output and error descriptors (fd 1 and 2,
    where C++ code such as torch's profiler prints) inside the block, as lines in ``into``
    instead of the user's output. Python's own streams are flushed first, so what the
    user printed before the block still goes where it was going.

    >>> import os
    >>> lines: list[str] = []
    >>> with printed_aside(lines):
    ...     _ = os.write(1, b"from C++\\n")
    >>> lines
    ['from C++']
    """
    import os
    import sys

    def flush() -> None:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()  # type: ignore[union-attr]

    flush()
    saved: list[tuple[int, int]] = []
    with tempfile.TemporaryFile() as sink:
        try:
            for fd in (1, 2):
                with contextlib.suppress(OSError):  # a closed descriptor stays closed
                    saved.append((fd, os.dup(fd)))
                    os.dup2(sink.fileno(), fd)
            yield
        finally:
            flush()
            for fd, old in saved:
                os.dup2(old, fd)
                os.close(old)
            sink.seek(0)
            text = sink.read().decode(errors="replace")
            into.extend(line.rstrip() for line in text.splitlines() if line.strip())


@dataclass(frozen=True)
class OwnTimes:
    """Per explored kernel (compile id, kernel id): durations (µs) over the timed calls,
    one per kernel event, or per library call for a library kernel; how many calls of its
    code were timed; and what ``notes`` should say about it."""

    durations: dict[tuple[str, str], list[float]]
    runs: dict[tuple[str, str], int]
    calls: dict[str, tuple[int, int]]
    profile: Profile
    graph_launches: int = 0

    def note(self) -> str:
        """Which calls each kernel was timed from.

        >>> note = OwnTimes({}, {}, {"0/0": (2, 12)}, Profile(path="")).note()
        >>> "0/0 calls 2..12. Nothing called the target again" in note
        True
        """
        parts = [
            f"{key} calls {first}..{last}" if first < last else f"{key} call {first}"
            for key, (first, last) in sorted(self.calls.items())
        ]
        return (
            "Kernel times from your run's own calls, after each compiled code's warm-up "
            f"(compile, autotuning, CUDA graph recording): {'; '.join(parts)}. Nothing "
            "called the target again, so eager against compiled call time and peak memory "
            "were not measured (they need extra calls, eager and compiled): explore() a "
            "target that calls its compiled code once (one step) to have them, its state "
            "restored."
        )


def own_times(
    exp: Exploration, run: OwnRun, torch_ids: Mapping[str, str] | None = None
) -> OwnTimes:
    """The kernel times of the profiled run: none where no compiled code ran more often
    than its warm-up (a target that calls its compiled code once). ``torch_ids``:
    torch's own compile ids (the regions') -> the exploration's, where they differ.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> times = own_times(exp, OwnRun(cuda=False, spans=spans))
        >>> times.calls
        {'0/0': (2, 2), '0/0 backward': (2, 2)}
    """
    device = any(s.cat == "kernel" for s in run.spans)
    events = link_events(exp, run.spans, torch_ids)
    profile = linked_profile(exp, events, device=device, path=OWN_RUN)
    profile = replace(profile, regions=region_calls_of(exp, run.spans, events, torch_ids))
    warm = warm_up(events)
    durations: dict[tuple[str, str], list[float]] = defaultdict(list)
    library: dict[tuple[str, str], dict[tuple[str, float], float]] = defaultdict(dict)
    timed_calls: dict[tuple[str, str], set[int]] = defaultdict(set)
    calls: dict[str, tuple[int, int]] = {}
    for e in events:
        if e.site is None or not e.key or e.call <= warm[e.key]:
            continue
        kid = (str(e.site.compile.compile_id), e.site.kernel.id)
        timed_calls[kid].add(e.call)
        first, last = calls.get(e.key, (e.call, e.call))
        calls[e.key] = (min(first, e.call), max(last, e.call))
        if e.op is not None:  # one library call may launch several kernels (split-K)
            at = (e.op.tid, e.op.ts)
            library[kid][at] = library[kid].get(at, 0.0) + e.span.dur
        else:
            durations[kid].append(e.span.dur)
    for kid, per_call in library.items():
        durations[kid].extend(per_call.values())
    launches = sum(1 for s in run.spans if s.name == "cudaGraphLaunch")
    return OwnTimes(
        durations=dict(durations),
        runs={kid: len(c) for kid, c in timed_calls.items()},
        calls=calls,
        profile=profile,
        graph_launches=launches,
    )


def with_own_times(exp: Exploration, times: OwnTimes, peak: float | None) -> Exploration:
    """``exp`` with each kernel timed from its own run, and the run as its profile.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> timed = with_own_times(exp, own_times(exp, OwnRun(False, spans)), None)
        >>> [k.timing.calls for k in timed.compiles[0].kernels() if k.language == "cpp"]
        [1, 1, 1, 1, 1]
    """
    from compiler.measure.kernel_timing import timing

    compiles = []
    for c in exp.compiles:
        outputs = []
        for out in c.output_code:
            kernels = []
            for k in out.kernels:
                kid = (str(c.compile_id), k.id)
                found = times.durations.get(kid)
                t: KernelTiming | None = (
                    timing(k, out, found, peak, times.runs[kid]) if found else k.timing
                )
                kernels.append(replace(k, timing=t))
            outputs.append(replace(out, kernels=tuple(kernels)))
        compiles.append(replace(c, output_code=tuple(outputs)))
    return replace(exp, compiles=tuple(compiles), profile=times.profile)



def own_measured(exp: Exploration, times: OwnTimes) -> Exploration:
    """``exp`` timed from its own run (``with_own_times``); on CUDA with the device's
    measured peaks (no call of the target) and the CUDA graph replays the run made.

    Example:
        >>> from pathlib import Path
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> run = OwnRun(cuda=False, spans=read_spans(data / "cpu_mlp.trace.json.gz"))
        >>> own_measured(exp, own_times(exp, run)).profile.path == OWN_RUN
        True
    """
    import torch

    if not torch.cuda.is_available():
        return with_own_times(exp, times, None)
    from compiler.measure.kernel_timing import copy_peak_gbps, matmul_peak_tflops

    # the matmul peak draws random operands: the user's CUDA generator stays where it was
    with torch.random.fork_rng(devices=[torch.cuda.current_device()]):
        peak = copy_peak_gbps()
        peak_tflops = matmul_peak_tflops()
    exp = with_own_times(exp, times, peak)
    environment = replace(
        exp.environment,
        peak_copy_gbps=peak,
        peak_matmul_tflops=peak_tflops,
        cudagraph_replays_per_run=float(times.graph_launches),
    )
    return replace(exp, environment=environment)
