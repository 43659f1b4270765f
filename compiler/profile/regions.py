"""How often each compiled code ran in a profiled run, and for how long (tlparse #46).

A ``TORCH_TRACE`` log records compiles, not calls: its ``compilation_metrics_runtime``
holds runtime compile costs, not hits. The profiler does record calls: Dynamo gives each
cache entry the annotation ``Torch-Compiled Region: <compile id>`` and records it around
every call of that entry's code, so the regions of a ``torch.profiler`` trace (the own run
of ``explore(..., measure=True)``, or ``compiler.attach_profile``) count each compile's
calls. A backward region (``CompiledFunctionBackward``) names no compile: it counts for
the compile whose backward kernels it ran (``profile.events`` links them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from compiler.model import Compile, Exploration, RegionCalls
from compiler.profile.chrome import Span
from compiler.profile.events import Linked, region_spans

_Frame = tuple[int | None, int | None, int | None]  # rank, compiled autograd id, frame id


def region_calls_of(
    exp: Exploration,
    spans: Iterable[Span],
    events: Iterable[Linked] = (),
    torch_ids: Mapping[str, str] | None = None,
) -> tuple[RegionCalls, ...]:
    """Each compile's calls in the profiled run (``spans``), in the order first called;
    ``events`` (``link_events``) tell which compile a backward region belongs to;
    ``torch_ids`` maps torch's compile ids to the exploration's where a capture renumbered.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> from compiler.profile.events import link_events
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> (r,) = region_calls_of(exp, spans, link_events(exp, spans))
        >>> r.compile, r.calls, r.backward_calls, r.total_us > r.first_us > 0
        ('0/0', 2, 2, True)
    """
    ids = torch_ids or {}
    by_id: dict[str, Compile] = {}
    for c in reversed(exp.compiles):  # the first compile of an id where ids were reused
        by_id[str(c.compile_id)] = c
    forward, backward = region_spans(spans)
    calls: dict[str, list[Span]] = {}
    frames: dict[_Frame, str] = {}
    frame_of: dict[str, str] = {}
    for region, raw in forward:
        cid = ids.get(raw, raw)
        found = by_id.get(cid)
        key = found.key if found is not None else cid
        if key not in calls:  # a compile the exploration lacks is a frame of its own
            frame_of[key] = frames.setdefault(_frame(found), key) if found else key
        calls.setdefault(key, []).append(region)
    inner = _inner(forward)
    back_calls: dict[str, dict[tuple[str, float], float]] = defaultdict(dict)
    backs = {(s.tid, s.ts) for s in backward}
    for e in events:
        r = e.region
        if r is None or e.site is None or (r.tid, r.ts) not in backs:
            continue
        back_calls[e.site.compile.key or str(e.site.compile.compile_id)][r.tid, r.ts] = r.dur
    return tuple(
        RegionCalls(
            compile=key,
            frame=frame_of[key],
            calls=len(regions),
            total_us=sum(r.dur for r in regions),
            first_us=regions[0].dur,
            inner_us=sum(inner.get((r.tid, r.ts), 0.0) for r in regions),
            backward_calls=len(back_calls.get(key, {})),
            backward_us=sum(back_calls.get(key, {}).values(), 0.0),
        )
        for key, regions in calls.items()
    )


def frames_of(regions: Iterable[RegionCalls]) -> dict[str, list[RegionCalls]]:
    """The compiles of each compiled frame (keyed by the frame's first compile), in order.

    >>> rows = [RegionCalls(compile=c, frame=f, calls=1, total_us=1.0)
    ...         for c, f in (("0/0", "0/0"), ("1/0", "1/0"), ("0/1", "0/0"))]
    >>> {f: [r.compile for r in rs] for f, rs in frames_of(rows).items()}
    {'0/0': ['0/0', '0/1'], '1/0': ['1/0']}
    """
    out: dict[str, list[RegionCalls]] = {}
    for r in regions:
        out.setdefault(r.frame, []).append(r)
    return out


def _frame(c: Compile) -> _Frame:
    return (c.rank, c.compile_id.compiled_autograd_id, c.compile_id.frame_id)


def _inner(forward: list[tuple[Span, str]]) -> dict[tuple[str, float], float]:
    """Per region (tid, start): the time of the compiled regions directly inside it."""
    out: dict[tuple[str, float], float] = defaultdict(float)
    open_: dict[str, list[Span]] = defaultdict(list)
    for region, _ in sorted(forward, key=lambda f: (f[0].tid, f[0].ts, -f[0].dur)):
        stack = open_[region.tid]
        while stack and stack[-1].end < region.end:
            stack.pop()
        if stack:
            out[stack[-1].tid, stack[-1].ts] += region.dur
        stack.append(region)
    return out


def calls_text(r: RegionCalls) -> str:
    """One compile's calls in words, for a pane or a report.

    >>> text = calls_text(RegionCalls(compile="0/0", frame="0/0", calls=3, total_us=7000.0,
    ...                               first_us=6000.0, backward_calls=3, backward_us=30.0))
    >>> text.split("; ")[0]
    '3 calls, 7.000 ms (the first 6.000 ms, then 500.0 µs a call on average)'
    >>> text.split("; ")[1]
    'backward 3 calls, 30.0 µs'
    """
    text = f"{_calls(r.calls)}, {_time(r.total_us)}"
    if r.calls > 1:
        text += f" (the first {_time(r.first_us)}, then {_time(r.later_mean_us)} a call on average)"
    if r.inner_us:
        text += f", of which {_time(r.inner_us)} in compiled code it called"
    if r.backward_calls:
        text += f"; backward {_calls(r.backward_calls)}, {_time(r.backward_us)}"
    return text


def frame_text(rows: list[RegionCalls]) -> str:
    """A compiled frame's calls over its compiles, in words.

    >>> rows = [RegionCalls(compile=c, frame="0/0", calls=n, total_us=1000.0 * n)
    ...         for c, n in (("0/0", 3), ("0/1", 2))]
    >>> frame_text(rows)
    '5 calls over 2 compiles (0/0 3, 0/1 2), 5.000 ms'
    """
    each = ", ".join(f"{r.compile} {r.calls}" for r in rows)
    total = sum(r.total_us for r in rows)
    return (
        f"{_calls(sum(r.calls for r in rows))} over {len(rows)} compiles ({each}), {_time(total)}"
    )


def no_calls_note(source: str) -> str:
    """Why an exploration has no calls per compile: a trace cannot say, a live capture
    needs ``measure=True``.

    >>> no_calls_note("trace").split(":")[0]
    'Not in a TORCH_TRACE log'
    """
    attach = "or compiler.attach_profile(exp, chrome_trace) of a torch.profiler run"
    if source == "trace":
        return (
            "Not in a TORCH_TRACE log: it records compiles, not calls (its "
            "compilation_metrics_runtime are compile costs). A live capture counts them: "
            f"explore(..., measure=True), {attach}"
        )
    return f"Not measured: explore(..., measure=True) counts them, {attach}"


def _calls(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def _time(us: float) -> str:
    return f"{us / 1e3:.3f} ms" if us >= 1e3 else f"{us:.1f} µs"
