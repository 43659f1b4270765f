"""Inductor's panes: post-grad graphs, fused schedule, output code with kernels; compile time."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from compiler import Compile, Environment, OutputCode

from ._lowered_view import lowering_panes
from ._panes import STAGE_LABELS, Links, graph_pane, pane, text_data
from ._tokens import token_lines

_POST_GRAD = ("before_post_grad_graph", "inductor_post_grad_graph")


def output_code_keys(outputs: tuple[OutputCode, ...]) -> list[str]:
    keys: list[str] = []
    for oc in outputs:
        base = oc.graph or "output"
        key, n = base, 1
        while key in keys:
            n += 1
            key = f"{base}#{n}"
        keys.append(key)
    return keys


def kernel_of_post(oc: OutputCode, key: str) -> dict[str, list[str]]:
    """Post-grad node name -> ids of the kernels it went into."""
    out: dict[str, list[str]] = {}
    known = {k.name for k in oc.kernels}
    for post, names in oc.provenance.post_to_kernel.items():
        for name in names:
            if name in known:
                out.setdefault(post, []).append(f"{key}/{name}")
    for k in oc.kernels:
        for post in (*k.post_grad_nodes, *k.source_nodes):
            ids = out.setdefault(post, [])
            if f"{key}/{k.name}" not in ids:
                ids.append(f"{key}/{k.name}")
    return out


def output_panes(
    key: str,
    oc: OutputCode,
    links: Links,
    renderer: str,
    dot_jobs: list[Any],
    kernel_of_post: dict[str, list[str]],
) -> list[dict[str, Any]]:
    panes = []
    for gid in (*_POST_GRAD, *sorted(set(oc.graphs) - set(_POST_GRAD))):
        if gid in oc.graphs:
            panes.append(
                graph_pane(
                    f"{key}/{gid}",
                    gid,
                    oc.graphs[gid],
                    links,
                    renderer,
                    dot_jobs,
                    kernel_of_post,
                    suffix=key,
                )
            )
    if oc.schedule is not None:
        s = oc.schedule
        blocks = [
            {
                "title": STAGE_LABELS[t],
                "note": "" if text is not None else "not logged",
                "text": text_data(text or "", "text"),
            }
            for t, text in (("ir_post_fusion", s.post_fusion), ("ir_pre_fusion", s.pre_fusion))
        ]
        fused = [
            {
                "name": f.name,
                "kind": f.kind,
                "members": list(f.members),
                "buffers": list(f.buffers),
                "extern_kernel": f.extern_kernel,
            }
            for f in s.fused
        ]
        panes.append(
            pane(
                f"{key}/ir_post_fusion",
                "ir_post_fusion",
                "schedule",
                key,
                blocks=blocks,
                fused=fused,
                errors=_oc_errors(oc, "schedule"),
            )
        )
    if oc.text:
        panes.append(_output_code_pane(key, oc, links))
        panes.extend(lowering_panes(key, oc.kernels))
    elif oc.errors:
        panes.append(
            pane(
                f"{key}/inductor_output_code",
                "inductor_output_code",
                "code",
                key,
                blocks=[],
                errors=[asdict(e) for e in oc.errors],
            )
        )
    return panes


def _oc_errors(oc: OutputCode, *stages: str) -> list[dict[str, str]]:
    return [asdict(e) for e in oc.errors if not stages or e.stage in stages]


def _output_code_pane(key: str, oc: OutputCode, links: Links) -> dict[str, Any]:
    post_graph = oc.graphs.get("inductor_post_grad_graph") or oc.graphs.get(
        "before_post_grad_graph"
    )
    post_src = {}
    if post_graph is not None:
        post_src = {
            n.name: n.source for n in post_graph.nodes if n.source is not None and not n.module
        }
    lines = oc.text.split("\n")
    line_kernel: list[str | None] = [None] * len(lines)
    tokens = token_lines(oc.text, "python")
    kernels = []
    for k in oc.kernels:
        kid = f"{key}/{k.name}"
        srcs = [links.add(loc) for loc in k.user_stack]
        for name in (*k.post_grad_nodes, *k.source_nodes):
            srcs.append(links.add(post_src.get(name)))
        if k.first_line and k.last_line:
            for ln in range(k.first_line, min(k.last_line, len(lines)) + 1):
                line_kernel[ln - 1] = kid
            body = range(k.first_line, k.last_line - 1)  # 0-based lines of the kernel source
            if k.language in ("cpp", "triton") and len(body):
                lang = "cpp" if k.language == "cpp" else "python"
                sub = token_lines("\n".join(lines[body.start : body.stop]), lang)
                tokens[body.start : body.stop] = sub
        for ln in k.call_lines:
            if 0 < ln <= len(lines):
                line_kernel[ln - 1] = kid
        kernels.append(
            {
                "id": kid,
                "name": k.name,
                "language": k.language,
                "first_line": k.first_line,
                "last_line": k.last_line,
                "call_lines": list(k.call_lines),
                "post_grad_nodes": list(k.post_grad_nodes),
                "source_nodes": list(k.source_nodes),
                "src": list(dict.fromkeys(s for s in srcs if s)),
                "timing": asdict(k.timing) if k.timing is not None else None,
                "grid": list(k.grid),
            }
        )
    text = {
        "language": "python",
        "lines": tokens,
        "line_src": [None] * len(lines),
        "line_kernel": line_kernel,
    }
    return pane(
        f"{key}/inductor_output_code",
        "inductor_output_code",
        "output_code",
        key,
        text=text,
        kernels=kernels,
        path=oc.path,
        errors=_oc_errors(oc),
    )


PEAK_NOTE = (
    "kernels reading data left in L2 by the previous kernel, or streaming more "
    "efficiently than copy_, can exceed it"
)
NOT_STATIC = "shape not static"


def kernel_timing_pane(c: Compile, oc_keys: list[str], env: Environment) -> dict[str, Any] | None:
    """The measured kernels of every output code of ``c``, slowest first; None if none."""
    rows: list[dict[str, Any]] = []
    untimed: list[str] = []
    for key, oc in zip(oc_keys, c.output_code, strict=True):
        for k in oc.kernels:
            t = k.timing
            if t is None:
                untimed.append(k.name)
                continue
            peak = t.peak_gbps or env.peak_copy_gbps
            pct = 100 * t.achieved_gbps / peak if t.achieved_gbps is not None and peak else None
            mm_peak = env.peak_matmul_tflops
            tflops = t.achieved_tflops
            mm_pct = 100 * tflops / mm_peak if tflops is not None and mm_peak else None
            rows.append(
                {
                    "kernel": f"{key}/{k.name}",
                    "name": k.name,
                    "language": k.language,
                    "output": key,
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
                    "matmul_peak_pct": mm_pct,
                }
            )
    if not rows:
        return None
    total = sum(r["total_us"] for r in rows)
    for r in rows:
        r["share"] = r["total_us"] / total if total > 0 else 0.0
    rows.sort(key=lambda r: -r["median_us"])
    peaks = {r["peak_gbps"] for r in rows if r["peak_gbps"]}
    peak = env.peak_copy_gbps or (max(peaks) if peaks else None)
    if peak:
        peak_line = f"measured copy bandwidth {peak:,.0f} GB/s; {PEAK_NOTE}"
    else:
        peak_line = "no copy bandwidth was measured on this device"
    if env.peak_matmul_tflops:
        peak_line += f"; measured fp32 matmul {env.peak_matmul_tflops:,.1f} TFLOP/s"
    return pane(
        "kernel_timing",
        "kernel_timing",
        "kernel_timing",
        rows=rows,
        total_us=total,
        peak_gbps=peak,
        peak_line=peak_line,
        peak_matmul_tflops=env.peak_matmul_tflops,
        has_flops=any(r["flops"] is not None for r in rows),
        cudagraph_line=cudagraph_line(c, env),
        untimed=untimed,
        outputs=list(dict.fromkeys(r["output"] for r in rows)),
    )


def cudagraph_rows(c: Compile, env: Environment | None) -> list[list[str]]:
    """CUDA graph tree warm-ups and recordings of the capture (when any), and the graph
    launches per measured run (when measured), as summary rows."""
    m = c.metrics
    rows = [
        [label, str(n)]
        for label, n in (
            ("CUDA graph warm-ups", m.cudagraph_warmups),
            ("CUDA graph recordings", m.cudagraph_recordings),
        )
        if n
    ]
    if env is not None and env.cudagraph_replays_per_run is not None:
        rows.append(["CUDA graph replays per run", f"{env.cudagraph_replays_per_run:g}"])
    return rows


def cudagraph_line(c: Compile, env: Environment) -> str:
    """The CUDA graph rows in one line, for the Kernel time pane; "" if none."""
    return "; ".join(f"{label}: {value}" for label, value in cudagraph_rows(c, env))


def metrics_pane(
    c: Compile, counters: dict[str, int] | None = None, env: Environment | None = None
) -> dict[str, Any]:
    m = c.metrics
    summary = [[label, f"{value:.3f} s"] for label, value in m.times()]
    for label, count in (
        ("FX graph cache hits", m.fx_cache_hits),
        ("FX graph cache misses", m.fx_cache_misses),
        ("AOT cache hits", m.aot_cache_hits),
        ("AOT cache misses", m.aot_cache_misses),
    ):
        if count:
            summary.append([label, str(count)])
    if m.guard_count is not None:
        summary.append(["guards", str(m.guard_count)])
    if m.graph_op_count is not None:
        summary.append(["graph ops", str(m.graph_op_count)])
    if m.fail_type:
        summary.append(["failure", f"{m.fail_type}: {m.fail_reason or ''}"])
    if c.attempts > 1:
        summary.append(["attempts", str(c.attempts)])
    if m.cudagraph_skip_reason:
        summary.append(["CUDA graphs skipped", m.cudagraph_skip_reason])
    summary.extend(cudagraph_rows(c, env))
    phases = [{"name": p.name, "seconds": p.seconds, "depth": p.depth} for p in m.phases]
    return pane(
        "compilation_metrics",
        "compilation_metrics",
        "metrics",
        summary=summary,
        phases=phases,
        cache_events=list(m.cache_events),
        counters=[[name, n] for name, n in sorted((counters or {}).items()) if n],
    )
