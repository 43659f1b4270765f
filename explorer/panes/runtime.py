"""Panes of choices and costs: autotuning, kernel time, compile time, the advisor."""

from __future__ import annotations

import math
from collections.abc import Sequence

from compiler import Compile, Environment, Exploration, config_diff, config_of
from compiler.advise.costs.time_phases import phases
from compiler.diff.cache_keys import uncacheable
from compiler.link import ids
from compiler.model import Autotuning, CallTiming
from compiler.profile.regions import calls_text, frame_text, frames_of, no_calls_note

from .frame import find_compile
from .inductor import kernel_sources
from .labels import group_of, label_of
from .types import (
    AutotuneOp,
    AutotuneRow,
    AutotuningPane,
    CallSummary,
    EvidenceLink,
    KernelTimingPane,
    MetricsPane,
    Phase,
    ProfilePane,
    ProfileRow,
    TimingRow,
)

_BLOCKS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
_SPLIT_OUT = (*_BLOCKS, "num_stages", "num_warps")
PEAK_NOTE = (
    "kernels reading data left in L2 by the previous kernel, or streaming more "
    "efficiently than copy_, can exceed it"
)
NOT_STATIC = "shape not static"


def _head(stage: str) -> dict[str, str]:
    shared = {"findings": ids.FINDINGS, "profile": ids.PROFILE}
    pid = shared.get(stage) or ids.compile_pane(stage)
    return {"id": pid, "stage": stage, "label": label_of(stage), "group": group_of(stage)}


# --- autotuning ---------------------------------------------------------------------------


def build_autotuning(exp: Exploration, compile_key: str, pane_id: str) -> AutotuningPane:
    """Every autotuned op of a compile, candidates fastest first; the chosen one linked to
    its kernel where the compiler proved which it is (``Autotuning.chosen_kernel``)."""
    c = find_compile(exp, compile_key)
    return AutotuningPane(**_head("autotuning"), ops=tuple(_op(a) for a in c.autotuning))


def config_text(pairs: Sequence[tuple[str, str]], common: frozenset[str] = frozenset()) -> str:
    """Block sizes, stages and warps first: ``BLOCK 128x64x32 (MxNxK) · 4 stages · ...``."""
    cfg = dict(pairs)
    out = []
    if all(b in cfg for b in _BLOCKS):
        out.append("BLOCK " + "x".join(cfg[b] for b in _BLOCKS) + " (MxNxK)")
    for key, word in (("num_stages", "stages"), ("num_warps", "warps")):
        if key in cfg:
            out.append(f"{cfg[key]} {word if cfg[key] != '1' else word[:-1]}")
    shown = {"num_stages", "num_warps"}
    if all(b in cfg for b in _BLOCKS):
        shown.update(_BLOCKS)
    out += [f"{k}={v}" for k, v in pairs if k not in shown and k not in common]
    return " · ".join(out)


def _finite(ms: float | None) -> bool:
    return ms is not None and math.isfinite(ms)


def _op(a: Autotuning) -> AutotuneOp:
    timed = [ch.ms for ch in a.choices if ch.ms is not None and math.isfinite(ch.ms)]
    fastest = min(timed) if timed else None
    slowest = max(timed) if timed else None
    order = sorted(a.choices, key=lambda ch: ch.ms if _finite(ch.ms) else math.inf)
    configs = [dict(ch.config) for ch in a.choices if ch.config]
    # settings every configured candidate shares are said once, above the table
    common_pairs = tuple(
        (k, v)
        for k, v in (configs[0].items() if len(configs) > 1 else ())
        if k not in _SPLIT_OUT and all(cfg.get(k) == v for cfg in configs)
    )
    common = frozenset(k for k, _ in common_pairs)
    rows = []
    for ch in order:
        ms = ch.ms if _finite(ch.ms) else None
        rel = ms / fastest if ms is not None and fastest else None
        pairs = ch.config
        if rel is None:
            rel_text = "not timed"
        elif ms == fastest:
            rel_text = "1.00x"
        else:
            rel_text = f"{rel:.2f}x slower"
        kind = "triton" if ch.name.startswith("triton_") else "extern" if not ch.description else ""
        rows.append(
            AutotuneRow(
                name=ch.name,
                kind=kind,
                ms=ms,
                ms_text=f"{ms:.4f}" if ms is not None else "-",
                relative=rel,
                relative_text=rel_text,
                description=ch.description,
                config=tuple(pairs),
                config_text=config_text(pairs, common) if pairs else ch.description,
                chosen=ch.name == a.chosen,
                kernel=a.chosen_kernel if ch.name == a.chosen else None,
            )
        )
    return AutotuneOp(
        op=a.op,
        input_sizes=a.input_sizes,
        chosen=a.chosen,
        kernel=a.chosen_kernel,
        common_config=common_pairs,
        common_text=" · ".join(f"{k}={v}" for k, v in common_pairs),
        fastest_ms=fastest,
        slowest_ms=slowest,
        rows=tuple(rows),
    )


# --- kernel time ----------------------------------------------------------------------------


def build_kernel_timing(exp: Exploration, compile_key: str, pane_id: str) -> KernelTimingPane:
    """The measured kernels of every output code of a compile, slowest first."""
    c = find_compile(exp, compile_key)
    env = exp.environment
    rows: list[dict[str, object]] = []
    untimed: list[str] = []
    for oc in c.output_code:
        srcs = kernel_sources(oc)
        for k in oc.kernels:
            t = k.timing
            if t is None:
                untimed.append(k.name)
                continue
            peak = t.peak_gbps or env.peak_copy_gbps
            pct = 100 * t.achieved_gbps / peak if t.achieved_gbps is not None and peak else None
            mm_peak = env.peak_matmul_tflops
            tflops = t.achieved_tflops
            rows.append(
                {
                    "kernel": k.id,
                    "name": k.name,
                    "language": k.language,
                    "output": oc.key,
                    "calls": t.calls,
                    "median_us": t.median_us,
                    "min_us": t.min_us,
                    "total_us": t.median_us * t.calls,
                    "bytes": t.bytes,
                    "mb": t.bytes / 1e6 if t.bytes is not None else None,
                    "achieved_gbps": t.achieved_gbps,
                    "peak_gbps": peak,
                    "peak_pct": pct,
                    "note": NOT_STATIC if t.bytes is None else "",
                    "flops": t.flops,
                    "gflop": t.flops / 1e9 if t.flops is not None else None,
                    "achieved_tflops": tflops,
                    "matmul_peak_pct": 100 * tflops / mm_peak
                    if tflops is not None and mm_peak
                    else None,
                    "src": srcs.get(k.id, ()),
                }
            )
    total = float(sum(float(r["total_us"]) for r in rows))  # type: ignore[arg-type]
    rows.sort(key=lambda r: -float(r["median_us"]))  # type: ignore[arg-type]
    out = tuple(
        TimingRow(**r, share=float(r["total_us"]) / total if total > 0 else 0.0)  # type: ignore[arg-type]
        for r in rows
    )
    peaks = {r.peak_gbps for r in out if r.peak_gbps}
    peak = env.peak_copy_gbps or (max(peaks) if peaks else None)
    if peak:
        peak_line = f"measured copy bandwidth {peak:,.0f} GB/s; {PEAK_NOTE}"
    else:
        peak_line = "no copy bandwidth was measured on this device"
    if env.peak_matmul_tflops:
        peak_line += f"; measured fp32 matmul {env.peak_matmul_tflops:,.1f} TFLOP/s"
    return KernelTimingPane(
        **_head("kernel_timing"),
        rows=out,
        total_us=total,
        peak_gbps=peak,
        peak_line=peak_line,
        peak_matmul_tflops=env.peak_matmul_tflops,
        has_flops=any(r.flops is not None for r in out),
        cudagraph_line=cudagraph_line(c, env),
        untimed=tuple(untimed),
        outputs=tuple(dict.fromkeys(r.output for r in out)),
        call=call_summary(exp.call_timing),
    )


def call_summary(t: CallTiming | None) -> CallSummary | None:
    """The call's eager-against-compiled figures as the Kernel time pane opens with them."""
    if t is None:
        return None
    slower = t.compiled_ms > t.eager_ms
    if slower:
        headline = (
            f"Compiled is slower than eager: {t.compiled_ms:.3f} ms against {t.eager_ms:.3f} ms "
            f"per call ({t.speedup:.2f}x)"
        )
    else:
        headline = (
            f"Compiled is {t.speedup:.2f}x faster than eager: {t.compiled_ms:.3f} ms against "
            f"{t.eager_ms:.3f} ms per call"
        )

    def spread(s: tuple[float, float]) -> str:
        return f"{s[0]:.3f}-{s[1]:.3f} ms"

    rows = [
        ("eager per call", f"{t.eager_ms:.3f} ms (median; {spread(t.eager_spread_ms)})"),
        ("compiled per call", f"{t.compiled_ms:.3f} ms (median; {spread(t.compiled_spread_ms)})"),
    ]
    if t.device_ms is not None:
        rows.append(("device time of its kernels", f"{t.device_ms:.3f} ms"))
    if t.cpu_ms is not None:
        rows.append(("host side (guards, wrapper, launches)", f"{t.cpu_ms:.3f} ms"))
    graphs = (
        ("CUDA graph replays per call", t.cudagraph_replays),
        ("CUDA graph re-recordings per call", t.cudagraph_recordings),
        ("CUDA graph warm-ups per call", t.cudagraph_warmups),
    )
    rows.extend((label, f"{n:.3g}") for label, n in graphs if n)
    if t.input_copy_bytes:
        rows.append(("bytes copied into CUDA graph inputs per call", f"{t.input_copy_bytes:,.0f}"))
    rows.append(("runs measured", str(t.runs)))
    return CallSummary(slower=slower, headline=headline, rows=tuple(rows), notes=t.notes)


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


def cudagraph_line(c: Compile, env: Environment) -> str:
    """The CUDA graph rows in one line, for the Kernel time pane; "" if none."""
    return "; ".join(f"{label}: {value}" for label, value in cudagraph_rows(c, env))


# --- compile time ---------------------------------------------------------------------------


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
        **_head("compilation_metrics"),
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


# --- the user's profiled run ----------------------------------------------------------------


def build_profile(exp: Exploration, compile_key: str | None, pane_id: str) -> ProfilePane:
    """The user's own profiled run (``Exploration.profile``): kernels, source lines and
    modules by the time they took there, each a link to what it names."""
    p = exp.profile
    if p is None:
        return ProfilePane(**_head("profile"), summary="No profiler trace is attached.")
    keys = {str(c.compile_id): c for c in exp.compiles}
    whole = sum(k.total_us for k in p.kernels) or 1.0
    kernels = []
    for k in p.kernels:
        c = keys.get(k.compile)
        outputs = c.output_code if c is not None else ()
        oc = next((o for o in outputs if any(x.id == k.kernel for x in o.kernels)), None)
        link = EvidenceLink(
            text=k.name,
            compile=c.key if c else None,
            stage=ids.output_code_pane(oc) if oc is not None else None,
            src=None,
            node=None,
            kernel=k.kernel,
        )
        detail = " · ".join(x for x in (f"compile {k.compile}", k.module) if x)
        kernels.append(ProfileRow(link=link, detail=detail, events=k.events,
                                  total_us=k.total_us, share=k.total_us / whole))  # fmt: skip
    lines = []
    for pl in p.lines:
        loc = pl.loc
        src = ids.src_key(loc.filename, loc.line) if loc else None
        link = _link(pl.place, src=src)
        lines.append(ProfileRow(link=link, detail=loc.code.strip() if loc else "",
                                events=len(pl.kernels), total_us=pl.total_us,
                                share=pl.total_us / whole))  # fmt: skip
    modules = [
        ProfileRow(
            link=_link(m.place),
            detail="", events=len(m.kernels), total_us=m.total_us, share=m.total_us / whole,
        )
        for m in p.modules
    ]
    summary = (
        f"{p.linked_events} of {p.kernel_events} kernel events in compiled regions linked to "
        f"their kernels ({p.device}, {p.path}); {p.total_us - p.outside_us:.1f} µs in compiled "
        f"regions, {p.outside_us:.1f} µs outside them"
        + ("; source lines from torch's provenance in the trace" if p.provenance else "")
    )
    if p.regions:  # tlparse #46: each compile's own pane has its calls and their time
        n = len(p.regions)
        summary += (
            f"; {sum(r.calls for r in p.regions)} calls of compiled code in {n} "
            f"compile{'s' if n != 1 else ''} (each compile's Compile time pane has its own)"
        )
    return ProfilePane(
        **_head("profile"),
        summary=summary,
        kernels=tuple(kernels),
        lines=tuple(lines),
        modules=tuple(modules),
        unlinked=tuple(f"{n} ({k})" for n, k in p.unlinked.items()),
        notes=p.notes,
    )


def _link(text: str, src: str | None = None) -> EvidenceLink:
    return EvidenceLink(text=text, compile=None, stage=None, src=src, node=None, kernel=None)
