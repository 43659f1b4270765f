"""Panes of measured runs: autotuning, kernel time and the user's profiled run, their
classes beside their builders. A trace of a CPU run shows none of them, so a page imports
this module only when it has one of these panes (``kinds.py``); each compile's compile
time is ``costs/metrics.py``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compiler import Compile, Environment, Exploration
from compiler.link import ids
from compiler.model import Autotuning, CallTiming

from .costs.metrics import cudagraph_rows
from .frame import find_compile
from .inductor import kernel_sources
from .labels import group_of, label_of
from .types import _FROZEN, EvidenceLink, PaneHead

_BLOCKS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
_SPLIT_OUT = (*_BLOCKS, "num_stages", "num_warps")
PEAK_NOTE = (
    "kernels reading data left in L2 by the previous kernel, or streaming more "
    "efficiently than copy_, can exceed it"
)
NOT_STATIC = "shape not static"


@dataclass(**_FROZEN)
class AutotuneRow:
    """One max-autotune candidate; ``kernel`` is set on the chosen row where proven."""

    name: str
    kind: str
    ms: float | None
    ms_text: str
    relative: float | None
    relative_text: str
    description: str
    config: tuple[tuple[str, str], ...]
    config_text: str
    chosen: bool
    kernel: str | None


@dataclass(**_FROZEN)
class AutotuneOp:
    """Max-autotune's benchmark of one op, candidates fastest first (untimed last)."""

    op: str
    input_sizes: tuple[str, ...]
    chosen: str
    kernel: str | None
    common_config: tuple[tuple[str, str], ...]
    common_text: str
    fastest_ms: float | None
    slowest_ms: float | None
    rows: tuple[AutotuneRow, ...]


@dataclass(**_FROZEN)
class AutotuningPane(PaneHead):
    """Every autotuned op of one compile."""

    kind: str = "autotuning"
    ops: tuple[AutotuneOp, ...] = ()


@dataclass(**_FROZEN)
class TimingRow:
    """One measured kernel; ``share`` is its part of all measured kernels' time."""

    kernel: str
    name: str
    language: str
    output: str
    calls: int
    median_us: float
    min_us: float
    total_us: float
    bytes: int | None
    mb: float | None
    achieved_gbps: float | None
    peak_gbps: float | None
    peak_pct: float | None
    note: str
    flops: int | None
    gflop: float | None
    achieved_tflops: float | None
    matmul_peak_pct: float | None
    share: float
    src: tuple[str, ...] = ()


@dataclass(**_FROZEN)
class CallSummary:
    """Eager against compiled per call (``Exploration.call_timing``), the pane's first lines:
    ``headline`` says which is faster and by how much, ``rows`` the figures behind it, and
    ``notes`` the capture's own account of where the time goes."""

    slower: bool
    headline: str
    rows: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(**_FROZEN)
class KernelTimingPane(PaneHead):
    """The measured kernels of one compile, slowest first."""

    kind: str = "kernel_timing"
    rows: tuple[TimingRow, ...] = ()
    total_us: float = 0.0
    peak_gbps: float | None = None
    peak_line: str = ""
    peak_matmul_tflops: float | None = None
    has_flops: bool = False
    cudagraph_line: str = ""
    untimed: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    call: CallSummary | None = None


@dataclass(**_FROZEN)
class ProfileRow:
    """One kernel, source line or module of the user's profiled run: ``link`` selects it
    (a kernel in its compile's output code, a line in the source), ``share`` is its part
    of the linked kernels' time."""

    link: EvidenceLink
    detail: str
    events: int
    total_us: float
    share: float


@dataclass(**_FROZEN)
class ProfilePane(PaneHead):
    """The user's own ``torch.profiler`` run linked to the kernels (``Exploration.profile``):
    what linked, then kernels, source lines and modules by time."""

    kind: str = "profile"
    summary: str = ""
    kernels: tuple[ProfileRow, ...] = ()
    lines: tuple[ProfileRow, ...] = ()
    modules: tuple[ProfileRow, ...] = ()
    unlinked: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


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


def cudagraph_line(c: Compile, env: Environment) -> str:
    """The CUDA graph rows in one line, for the Kernel time pane; "" if none."""
    return "; ".join(f"{label}: {value}" for label, value in cudagraph_rows(c, env))


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
