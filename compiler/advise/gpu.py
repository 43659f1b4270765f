"""GPU findings: compiled slower than eager and the part of the call that explains it,
kernels far below the measured bandwidth, library matmuls or convolutions dominating,
and max-autotune candidates that beat the chosen one.

All of it reads measured figures (``Exploration.call_timing``, ``Kernel.timing``,
``Compile.autotuning``); with nothing measured these rules say nothing.
"""

from __future__ import annotations

import re

from compiler.advise._common import Ranked, finding
from compiler.advise.findings import Evidence
from compiler.link.ids import KernelId, PaneId, compile_pane, kernel_of, key_of, loc_key
from compiler.model import CallTiming, Compile, Exploration, Kernel, Node

_SLOWER = 1 / 1.05  # within 5% of eager is noise on a busy GPU
_LOW_BW = 0.3  # of the measured copy bandwidth
_MIN_US = 5.0  # shorter kernels are launch-latency bound, not bandwidth bound
_MIN_SHARE = 0.1
_LIBRARY = re.compile(r"\b(mm|addmm|bmm|baddbmm|convolution|_convolution|conv\w*)\b")
_MATMUL_OPS = ("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm")
_TF32_OFF = re.compile(r'"allow_tf32"\s*:\s*false')


def findings(exp: Exploration) -> list[Ranked]:
    """GPU findings from measured timings; nothing where nothing was measured."""
    out: list[Ranked] = []
    if exp.call_timing is not None:
        out.extend(_slower_than_eager(exp, exp.call_timing))
    for c in exp.compiles:
        out.extend(_kernels(exp, c))
        out.extend(_autotune(exp, c))
        out.extend(_cudagraphs_skipped(exp, c))
    return out


def _cudagraphs_skipped(exp: Exploration, c: Compile) -> list[Ranked]:
    reason = c.metrics.cudagraph_skip_reason
    node: Node | None = None
    stage = compile_pane("compilation_metrics")
    if not reason:
        skips = exp.counters.get("inductor.cudagraph_skips", 0)
        if not skips or c is not exp.compiles[0]:
            return []
        # torch counted the skip without the reason reaching the capture: infer the
        # commonest one from the graph, an input the graph writes to
        stage, node = _mutated_input(c)
        if node is not None:
            where = f" at `{node.source.code.strip()}`" if node.source else ""
            reason = f"mutated inputs (the graph writes into input `{node.inputs[0]}`{where})"
        else:
            reason = f"reason not recorded (inductor.cudagraph_skips = {skips})"
    return [
        finding(
            "gpu.cudagraphs_skipped",
            "warning",
            f"CUDA graphs were skipped for compile {c.compile_id}: {reason}",
            [
                Evidence(
                    text=f"skip reason: {reason}",
                    compile=key_of(c),
                    stage=stage,
                    node=node.name if node else None,
                    src=loc_key(node.source) if node else None,
                )
            ],
            "The mode asked for CUDA graphs, but this graph runs with a launch per kernel. "
            + _SKIP_ADVICE.get(_skip_kind(reason), "Remove the cause torch names.")
            + " `TORCH_LOGS=perf_hints` prints the same reason while it compiles.",
            "a kernel launch per kernel instead of one graph replay",
            score=1.0,
        )
    ]


_SKIP_ADVICE = {
    "mutated": "An input is changed in place: return a new tensor instead (`x = x + 1`), "
    "or make the mutated tensor a buffer of the module (buffers may be mutated).",
    "cpu": "A CPU tensor takes part: move it to the GPU before the call, or make it a "
    "Python scalar.",
    "dynamic": "The graph has dynamic shapes: mark the sizes static "
    "(`torch._dynamo.mark_static`) or pad to a few sizes.",
    "non gpu": "An op runs on the CPU inside the graph: move it out of the compiled region.",
}


def _skip_kind(reason: str) -> str:
    low = reason.lower()
    for key in _SKIP_ADVICE:
        if key in low:
            return key
    return ""


def _timed(c: Compile) -> list[tuple[KernelId, Kernel, float]]:
    """(kernel id, kernel, total measured µs: median x calls) of every measured kernel of ``c``."""
    return [
        (kernel_of(k), k, k.timing.median_us * k.timing.calls)
        for k in c.kernels()
        if k.timing is not None
    ]


def _slower_than_eager(exp: Exploration, t: CallTiming) -> list[Ranked]:
    if t.speedup >= _SLOWER:
        return []
    # a quarter slower at the median, or slower in every run, is no measuring noise
    clearly = t.speedup < 0.8 or t.compiled_spread_ms[0] > t.eager_spread_ms[1] > 0
    parts: list[str] = []
    advice: list[str] = []
    evidence: list[Evidence] = []
    first = exp.compiles[0] if exp.compiles else None
    first_key = key_of(first) if first else None
    if t.cpu_ms is not None and t.cpu_ms >= 0.5 * t.compiled_ms:
        parts.append(
            f"the host side ({t.cpu_ms:.3f} ms of {t.compiled_ms:.3f} ms: guards, "
            "wrapper, kernel launches)"
        )
        mode = (exp.options.mode if exp.options else None) or ""
        if "reduce-overhead" in mode:
            advice.append(
                "The GPU waits on Python although the mode asks for CUDA graphs: what "
                "stops the replay (a skip, re-recordings, a graph break) is listed here."
            )
        else:
            advice.append(
                "The GPU waits on Python: record the call as a CUDA graph so it replays "
                'with one launch:\n```python\ntorch.compile(fn, mode="reduce-overhead")\n```'
            )
    if t.cudagraph_recordings > 0:
        parts.append(f"{t.cudagraph_recordings:g} CUDA graph recordings per call")
        advice.append(
            "CUDA graphs are re-recorded on every call: a new input shape or a tensor "
            "kept from the previous call forces it. Keep shapes fixed (pad to buckets, "
            "`torch._dynamo.mark_static`) and mark step boundaries with "
            "`torch.compiler.cudagraph_mark_step_begin()`."
        )
    if t.input_copy_bytes > 0:
        parts.append(f"{t.input_copy_bytes / 1e6:.2f} MB of input copies per call")
        advice.append(
            "Inputs are copied into the CUDA graph's static buffers every call. Pass the "
            "same tensors each time (update them in place), or make them parameters or "
            "buffers of the module, which the graph uses without copying."
        )
    for c in exp.compiles:
        if c.metrics.cudagraph_skip_reason:
            parts.append(
                f"CUDA graphs skipped in {c.compile_id}: {c.metrics.cudagraph_skip_reason}"
            )
            evidence.append(
                Evidence(
                    text=f"skipped: {c.metrics.cudagraph_skip_reason}",
                    compile=key_of(c),
                    stage=compile_pane("compilation_metrics"),
                )
            )
            advice.append(
                "CUDA graphs were skipped for the reason torch gives; remove that cause "
                "(CPU tensors, mutated inputs, dynamic shapes) to get the replay."
            )
    breaks = [(c, gb) for c in exp.compiles for gb in c.graph_breaks]
    if breaks:
        graphs = sum(1 for c in exp.compiles if "dynamo_output_graph" in c.graphs)
        c, gb = breaks[0]
        parts.append(f"{graphs} graphs per call, split by {len(breaks)} graph break(s)")
        evidence.append(
            Evidence(
                text=f"graph break: {gb.summary}",
                compile=key_of(c),
                stage=compile_pane("dynamo_graph_break_reason"),
                src=loc_key(gb.location),
            )
        )
        advice.append(
            "Each graph break adds a guard check, a second graph call and the Python "
            "between them to every call: fix the break (see its finding) first."
        )
    partitions = exp.counters.get("inductor.cudagraph_partitions", 0)
    if partitions:
        parts.append(f"the CUDA graph split into {partitions} partitions")
    if t.device_ms is not None and t.device_ms > t.eager_ms * _SLOWER:
        slow = max(
            ((kid, k, tot, c) for c in exp.compiles for kid, k, tot in _timed(c)),
            key=lambda r: r[2],
            default=None,
        )
        parts.append(
            f"the kernels themselves ({t.device_ms:.3f} ms on the device vs "
            f"{t.eager_ms:.3f} ms for the whole eager call)"
        )
        if slow is not None:
            kid, k, tot, c = slow
            evidence.append(
                Evidence(
                    text=f"slowest kernel {k.name}: {tot:.1f} µs measured",
                    compile=key_of(c),
                    stage=compile_pane("kernel_timing"),
                    kernel=kid,
                )
            )
        advice.append(
            "The generated kernels are slower than eager's: look at the slowest "
            'one; `mode="max-autotune"` tunes matmuls and their epilogues.'
        )
    if not parts:
        parts.append("no single part measured: compare the Kernel time pane with eager")
    evidence.insert(
        0,
        Evidence(
            text=f"eager {t.eager_ms:.3f} ms, compiled {t.compiled_ms:.3f} ms per call "
            f"({t.speedup:.2f}x) over {t.runs} runs",
            compile=first_key,
            stage=compile_pane(
                "kernel_timing" if first and _timed(first) else "compilation_metrics"
            ),
        ),
    )
    return [
        finding(
            "gpu.slower_than_eager",
            "problem" if clearly else "warning",
            f"Compiled is slower than eager ({t.compiled_ms:.3f} ms vs {t.eager_ms:.3f} ms "
            f"per call); the time goes to {parts[0]}",
            evidence,
            "\n\n".join(advice) or "Measure again with more runs; the difference is small.",
            f"{t.compiled_ms - t.eager_ms:.3f} ms per call",
            score=1000.0 * (t.compiled_ms - t.eager_ms),
        )
    ]


def _kernels(exp: Exploration, c: Compile) -> list[Ranked]:
    rows = _timed(c)
    total = sum(tot for _, _, tot in rows)
    if not rows or total <= 0:
        return []
    out: list[Ranked] = []
    key = key_of(c)
    peak = exp.environment.peak_copy_gbps
    for kid, k, tot in rows:
        t = k.timing
        assert t is not None
        share = tot / total
        bw_peak = t.peak_gbps or peak
        if (
            k.language == "triton"
            and t.flops is None
            and "_tem_" not in k.name
            and t.achieved_gbps is not None
            and bw_peak
            and t.median_us >= _MIN_US
            and share >= _MIN_SHARE
            and t.achieved_gbps < _LOW_BW * bw_peak
        ):
            out.append(
                finding(
                    "gpu.low_bandwidth",
                    "warning",
                    f"{k.name} reaches {t.achieved_gbps:,.0f} GB/s, "
                    f"{t.achieved_gbps / bw_peak:.0%} of the measured {bw_peak:,.0f} GB/s",
                    [
                        Evidence(
                            text=f"{t.median_us:.1f} µs x {t.calls}, {share:.0%} of kernel time",
                            compile=key,
                            stage=compile_pane("kernel_timing"),
                            kernel=kid,
                        )
                    ],
                    "A memory-bound kernel this far below the copy bandwidth reads with a "
                    "poor pattern (a transpose or a strided gather) or launches too few "
                    "blocks. Check its grid and index expressions; a `.contiguous()` before "
                    'the op or `mode="max-autotune"` (wider block-size search) often helps.',
                    f"{tot:.0f} µs measured, {share:.0%} of kernel time",
                    score=tot,
                )
            )
    library = [
        (kid, k, tot) for kid, k, tot in rows if k.language == "extern" and _LIBRARY.search(k.name)
    ]
    lib_total = sum(tot for _, _, tot in library)
    if library and lib_total / total >= 0.5:
        kid, k, tot = max(library, key=lambda r: r[2])
        fp32_mm = _fp32_matmul(c) and bool(c.guards and _TF32_OFF.search(c.guards.tree))
        is_mm = "conv" not in k.name
        ev = [
            Evidence(
                text=f"{k.name}: {tot:.1f} µs in {k.timing.calls if k.timing else 0} calls, "
                f"{lib_total / total:.0%} of kernel time",
                compile=key,
                stage=compile_pane("kernel_timing"),
                kernel=kid,
            )
        ]
        if fp32_mm and is_mm and not _host_bound(exp):
            ev.append(
                Evidence(
                    text='fp32 matmuls with "allow_tf32": false in the global-state guard',
                    compile=key,
                    stage=compile_pane("dynamo_cpp_guards_str"),
                )
            )
            out.append(
                finding(
                    "gpu.fp32_matmul",
                    "warning",
                    f"fp32 library matmuls without TF32 take {lib_total / total:.0%} of GPU time",
                    ev,
                    "The matmuls run in full fp32 on tensor-core hardware. Allow TF32, or run "
                    "them in bf16 under autocast:\n```python\n"
                    'torch.set_float32_matmul_precision("high")   # TF32 for fp32 matmuls\n'
                    'with torch.autocast("cuda", dtype=torch.bfloat16):\n    y = model(x)\n```',
                    f"{lib_total:.0f} µs of fp32 matmul over the measured calls",
                    score=lib_total,
                )
            )
        else:
            what = "matmuls" if is_mm else "convolutions"
            out.append(
                finding(
                    "gpu.library_dominates",
                    "info",
                    f"Library {what} take {lib_total / total:.0%} of the GPU time",
                    ev,
                    "Inductor cannot speed these up by fusion. "
                    + (
                        '`mode="max-autotune"` tries Triton templates against cuBLAS and can '
                        "fuse the epilogue; bf16 (autocast) halves the traffic."
                        if is_mm
                        else "channels_last (`model.to(memory_format=torch.channels_last)`) and "
                        "bf16 autocast are the usual levers for cuDNN convolutions."
                    ),
                    score=lib_total,
                )
            )
    return out


def _host_bound(exp: Exploration) -> bool:
    """Whether the measured call spends under a quarter of its time on the device: then
    faster matmuls cannot change what the user waits for."""
    t = exp.call_timing
    return bool(t and t.device_ms is not None and t.device_ms < 0.25 * t.compiled_ms)


def _fp32_matmul(c: Compile) -> bool:
    for oc in c.output_code:
        for g in oc.graphs.values():
            for n in g.nodes:
                if (
                    any(op in n.target for op in _MATMUL_OPS)
                    and n.meta
                    and n.meta[0].dtype == "f32"
                ):
                    return True
    return False


def _autotune(exp: Exploration, c: Compile) -> list[Ranked]:
    out: list[Ranked] = []
    for a in c.autotuning:
        timed = [ch for ch in a.choices if ch.ms is not None]
        chosen = next((ch for ch in timed if ch.name == a.chosen), None)
        if chosen is None or chosen.ms is None or not timed:
            continue
        best = min(timed, key=lambda ch: ch.ms or 0.0)
        if best.ms is None or best.name == chosen.name or chosen.ms <= best.ms * 1.03:
            continue
        out.append(
            finding(
                "gpu.autotune_not_fastest",
                "warning",
                f"max-autotune chose {chosen.name} ({chosen.ms:.4f} ms) for {a.op}, but "
                f"{best.name} measured {best.ms:.4f} ms",
                [
                    Evidence(
                        text=f"{a.op} {' '.join(a.input_sizes)}: chosen {chosen.ms:.4f} ms, "
                        f"fastest {best.ms:.4f} ms",
                        compile=key_of(c),
                        stage=compile_pane("autotuning"),
                        kernel=KernelId(a.chosen_kernel) if a.chosen_kernel else None,
                    )
                ],
                "The choice came from a cache or an earlier benchmark. Clear Inductor's "
                "autotune cache (`TORCHINDUCTOR_CACHE_DIR`) or raise the benchmark "
                "repetitions, and re-run max-autotune.",
                f"{(chosen.ms - best.ms) * 1000:.1f} µs per call",
                score=(chosen.ms - best.ms) * 1000,
            )
        )
    return out




def _mutated_input(c: Compile) -> tuple[PaneId, Node | None]:
    """(stage, the ``copy_`` node) where the AOT graph writes into an input, if any."""
    for stage in ("aot_inference_graph", "aot_forward_graph"):
        graph = c.graphs.get(stage)
        if graph is None:
            continue
        inputs = {n.name for n in graph.nodes if n.op == "placeholder"}
        for n in graph.nodes:
            if "copy_" in n.target and n.inputs and n.inputs[0] in inputs:
                return compile_pane(stage), n
    return compile_pane("compilation_metrics"), None
