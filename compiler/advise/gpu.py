"""GPU findings: compiled slower than eager and the part of the call that explains it,
kernels far below the measured bandwidth, library matmuls or convolutions dominating,
and max-autotune candidates that beat the chosen one.

All of it reads measured figures (``Exploration.call_timing``, ``Kernel.timing``,
``Compile.autotuning``); with nothing measured these rules say nothing.
"""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.costs.cudagraphs import skip_cause
from compiler.advise.findings import Evidence
from compiler.costs.cudagraphs import mutated_inputs
from compiler.link.ids import KernelId, PaneId, compile_pane, kernel_of, key_of, loc_key
from compiler.model import Compile, Exploration, Kernel, Node
from compiler.parse.output_code import is_matmul_target, library_call_kind
from compiler.parse.words.settings import cudagraph_skip_cause, tf32_off

_SLOWER = 1 / 1.05  # within 5% of eager is noise on a busy GPU
_LOW_BW = 0.3  # of the measured copy bandwidth
_MIN_US = 5.0  # shorter kernels are launch-latency bound, not bandwidth bound
_MIN_SHARE = 0.1


def findings(exp: Exploration) -> list[Ranked]:
    """GPU findings from measured timings; nothing where nothing was measured, and
    nothing for a run that was not recorded on a GPU (``recorded_on_gpu``)."""
    out: list[Ranked] = []
    if not recorded_on_gpu(exp):
        return out
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
            # the user's parameter (``buf``), not the AOT graph's placeholder (``arg0_1``)
            name = next(iter(mutated_inputs(c)), node.inputs[0])
            reason = f"mutated inputs (the graph writes into input `{name}`{where})"
        else:
            reason = f"reason not recorded (inductor.cudagraph_skips = {skips})"
    same = skip_cause(exp, c)
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
            + _SKIP_ADVICE.get(cudagraph_skip_cause(reason), "Remove the cause torch names.")
            + " `TORCH_LOGS=perf_hints` prints the same reason while it compiles.",
            "a kernel launch per kernel instead of one graph replay",
            # the CUDA-graph family's key for the same skip, so both rules are one finding,
            # headed by that family's (it names the line and the node)
            score=0.9 if same else 1.0,
            cause=same or cause_key("cudagraphs_skipped", cudagraph_skip_cause(reason) or reason),
        )
    ]


# by cause (``SKIP_CAUSES``)
_SKIP_ADVICE = {
    "mutated": "An input is changed in place: return a new tensor instead (`x = x + 1`), "
    "or make the mutated tensor a buffer of the module (buffers may be mutated).",
    "cpu": "A CPU tensor takes part: move it to the GPU before the call, or make it a "
    "Python scalar.",
    "dynamic": "The graph has dynamic shapes: mark the sizes static "
    "(`torch._dynamo.mark_static`) or pad to a few sizes.",
    "non gpu": "An op runs on the CPU inside the graph: move it out of the compiled region.",
}


def _timed(c: Compile) -> list[tuple[KernelId, Kernel, float]]:
    """(kernel id, kernel, total measured µs: median x calls) of every measured kernel of ``c``."""
    return [
        (kernel_of(k), k, k.timing.median_us * k.timing.calls)
        for k in c.kernels()
        if k.timing is not None
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
                    cause=cause_key("low_bandwidth", k.name),
                )
            )
    library = [
        (kid, k, tot) for kid, k, tot in rows
        if k.language == "extern" and library_call_kind(k.name)
    ]  # fmt: skip
    lib_total = sum(tot for _, _, tot in library)
    if library and lib_total / total >= 0.5:
        kid, k, tot = max(library, key=lambda r: r[2])
        fp32_mm = _fp32_matmul(c) and bool(c.guards and tf32_off(c.guards.tree))
        is_mm = library_call_kind(k.name) == "matmul"
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
                    # one cause however many compiles (frames, ranks) run such matmuls
                    cause=cause_key("fp32_matmul"),
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
                    cause=cause_key("library_kernels", what),
                )
            )
    return out


def recorded_on_gpu(exp: Exploration) -> bool:
    """Whether ``exp`` ran on a GPU: the device its recording names (a GPU recording
    replayed on a CPU still names its GPU), else, for a trace that names none, Triton
    kernels (Inductor writes C++ for the CPU).

    Example:
        >>> import compiler
        >>> recorded_on_gpu(compiler.Exploration(source="live",
        ...     environment=compiler.model.Environment(device="cuda (NVIDIA H200)")))
        True
        >>> recorded_on_gpu(compiler.Exploration(source="live",
        ...     environment=compiler.model.Environment(device="cpu")))
        False
    """
    device = exp.environment.device.strip().lower()
    if device:
        return not device.startswith(("cpu", "meta"))
    return any(k.language == "triton" for c in exp.compiles for k in c.kernels())


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
                    is_matmul_target(n.target)
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
                cause=cause_key("autotune", a.op, " ".join(a.input_sizes), chosen.name),
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
