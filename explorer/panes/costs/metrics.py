"""The compile-time pane of one compile (``metrics``): its time per phase, cache events,
the config it ran under and the capture's counters. Apart from the panes of measured runs
(``explorer.panes.runtime``): every compile shows this pane, and only GPU or live
captures show those.
"""

from __future__ import annotations

from compiler import Compile, Environment, Exploration, config_diff, config_of
from compiler.advise.costs.time_phases import phases
from compiler.costs.caches import uncacheable
from compiler.link import ids
from compiler.profile.regions import calls_text, frame_text, frames_of, no_calls_note

from ..frame import find_compile
from ..labels import group_of, label_of
from ..types import MetricsPane, Phase

STAGE = "compilation_metrics"


def cudagraph_rows(c: Compile, env: Environment | None) -> list[tuple[str, str]]:
    """CUDA graph tree warm-ups and recordings of the capture (when any), and the graph
    launches per measured run (when measured), as summary rows."""
    m = c.metrics
    rows = [
        (label, str(n))
        for label, n in (
            ("CUDA graph warm-ups", m.cudagraph_warmups),
            ("CUDA graph recordings", m.cudagraph_recordings),
        )
        if n
    ]
    if env is not None and env.cudagraph_replays_per_run is not None:
        rows.append(("CUDA graph replays per run", f"{env.cudagraph_replays_per_run:g}"))
    return rows


def build_metrics(exp: Exploration, compile_key: str, pane_id: str) -> MetricsPane:
    """Compile time per phase, cache events and the capture's counters."""
    c = find_compile(exp, compile_key)
    m = c.metrics
    summary = [(label, f"{value:.3f} s") for label, value in m.times()]
    for label, count in (
        ("FX graph cache hits", m.fx_cache_hits),
        ("FX graph cache misses", m.fx_cache_misses),
        ("AOT cache hits", m.aot_cache_hits),
        ("AOT cache misses", m.aot_cache_misses),
    ):
        if count:
            summary.append((label, str(count)))
    if m.guard_count is not None:
        summary.append(("guards", str(m.guard_count)))
    if m.graph_op_count is not None:
        summary.append(("graph ops", str(m.graph_op_count)))
    if m.fail_type:
        summary.append(("failure", f"{m.fail_type}: {m.fail_reason or ''}"))
    if c.attempts > 1:
        summary.append(("attempts", str(c.attempts)))
    if m.cudagraph_skip_reason:
        summary.append(("CUDA graphs skipped", m.cudagraph_skip_reason))
    summary.extend(cudagraph_rows(c, exp.environment))
    total = m.entire_frame_seconds or 0.0
    # where this compile's time went, biggest first (buckets that add up to the frame's time)
    for name, seconds in phases(c) if total else ():
        summary.append((f"time: {name}", f"{seconds:.3f} s ({seconds / total:.0%})"))
    summary.extend((f"{u.cache} cache bypassed", u.reason) for u in uncacheable(exp, of=c))
    summary.extend(_config_rows(exp, c))
    summary.extend(_run_rows(exp, c))
    return MetricsPane(
        id=ids.compile_pane(STAGE),
        stage=STAGE,
        label=label_of(STAGE),
        group=group_of(STAGE),
        summary=tuple(summary),
        phases=tuple(Phase(name=p.name, seconds=p.seconds, depth=p.depth) for p in m.phases),
        cache_events=m.cache_events,
        counters=tuple((name, n) for name, n in sorted(exp.counters.items()) if n),
    )


def _config_rows(exp: Exploration, c: Compile) -> list[tuple[str, str]]:
    """The config the compile ran under (torch's ``compilation_metrics``), and what
    differs from the compile before it: ``compiler.config_diff`` gives every setting."""
    sections = config_of(c)
    if not sections:
        return []
    counts = ", ".join(f"{name} {len(values)}" for name, values in sections.items())
    rows = [("config", f"{counts} settings (compiler.config_of)")]
    at = next((i for i, other in enumerate(exp.compiles) if other is c), 0)
    if at:
        before = exp.compiles[at - 1]
        changes = config_diff(before, c)
        shown = "; ".join(map(str, changes[:_CONFIG_SHOWN]))
        more = f"; and {len(changes) - _CONFIG_SHOWN} more" if len(changes) > _CONFIG_SHOWN else ""
        rows.append((f"config vs {before.key}", f"{shown}{more}" if changes else "the same"))
    return rows


_CONFIG_SHOWN = 5


def _run_rows(exp: Exploration, c: Compile) -> list[tuple[str, str]]:
    """How often the user's run called this compile's code and its frame's, for how long
    (tlparse #46: ``Profile.regions``); on a trace, where they come from instead."""
    regions = exp.profile.regions if exp.profile is not None else ()
    if not regions:
        return [("calls in your run", no_calls_note(exp.source))]
    mine = next((r for r in regions if r.compile == c.key), None)
    if mine is None:
        return [("calls in your run", "none: your profiled run did not call this compile")]
    rows = [("calls in your run", calls_text(mine))]
    frame = frames_of(regions)[mine.frame]
    if len(frame) > 1:
        rows.append(("its frame's calls", frame_text(frame)))
    return rows
