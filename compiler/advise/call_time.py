"""Compiled slower than eager: the measured gap split into parts that add up, the
largest named as the cause with the explanation specific to it.

A compiled call's mean time (``CallTiming.compiled_mean_ms``; the median hides rare long
calls such as CUDA graph re-recordings) is the sum of: re-recordings (recordings per call
times what one recording was measured to add), warm-ups (likewise), input copies into
CUDA graph buffers (bytes over the measured copy bandwidth), kernels (the measured device
time) and host work (the rest: guards, the wrapper, launches the kernels did not hide).
On a CPU run the kernels run on the host too: the call is one part, and the finding is
``cpu.slower_than_eager`` with advice for the CPU (``gpu.*`` rules need a GPU recording).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.advise.gpu import recorded_on_gpu
from compiler.link.ids import compile_pane, key_of, loc_key
from compiler.model import CallTiming, Compile, Exploration, Fix

_SLOWER = 1 / 1.05  # within 5% of eager is noise on a busy GPU
KINDS = ("gpu.slower_than_eager", "cpu.slower_than_eager")
_CPU_ADVICE = (
    "On the CPU, Inductor's C++ kernels run on the host, after the guards and the Python "
    "wrapper that calls them. For small inputs that overhead is most of the call: batch "
    "more work per call, or remove the Python wrapper with Inductor's C++ wrapper:\n"
    "```python\ntorch._inductor.config.cpp_wrapper = True\n```\nFor inference with "
    "matmuls or convolutions, `torch._inductor.config.freezing = True` lets Inductor fold "
    "the weights and use oneDNN's prepacked kernels, as eager's library calls do."
)


@dataclass(frozen=True, slots=True)
class _Part:
    name: str
    ms: float
    advice: str
    fix: Fix | None = None
    kind: str = ""  # recordings, warmups, copies, kernels, host


def findings(exp: Exploration) -> list[Ranked]:
    """One finding when the measured compiled call is slower than eager."""
    t = exp.call_timing
    if t is None or t.speedup >= _SLOWER:
        return []
    return [_slower_than_eager(exp, t)]


def largest_part(exp: Exploration) -> str:
    """Where most of a slower-than-eager compiled call goes: ``recordings``, ``warmups``,
    ``copies``, ``kernels`` or ``host``; "" where the compiled call is not slower.

    Example:
        >>> from compiler.model import Exploration
        >>> largest_part(Exploration(source="live"))
        ''
    """
    t = exp.call_timing
    if t is None or t.speedup >= _SLOWER:
        return ""
    return parts(exp, t)[0].kind


def parts(exp: Exploration, t: CallTiming) -> list[_Part]:
    """The parts of the mean compiled call, largest first; they add up to it."""
    total = t.compiled_mean_ms or t.compiled_ms
    if not recorded_on_gpu(exp):
        # no device time apart from the host's: the whole call is one part
        name = f"the compiled call on the CPU ({total:.3f} ms: guards, wrapper and C++ kernels)"
        return [_Part(name, total, _CPU_ADVICE, kind="host")]
    out: list[_Part] = []
    if t.cudagraph_recordings > 0:
        # recording_ms is None when no timed call recorded (the recordings counted happened
        # in the profiled calls or the warm-ups): then none of the timed time is theirs
        cost = t.recording_ms
        ms = t.cudagraph_recordings * cost if cost is not None else 0.0
        each = f", {cost:.2f} ms each" if cost is not None else ", none in the timed calls"
        out.append(
            _Part(
                f"CUDA graph re-recordings ({t.cudagraph_recordings:.2f} CUDA graph "
                f"recordings per call{each})",
                ms,
                *_rerecording(exp),
                kind="recordings",
            )
        )
    if t.cudagraph_warmups > 0 and t.warmup_ms:
        out.append(
            _Part(
                f"CUDA graph warm-ups ({t.cudagraph_warmups:.2f} per call, "
                f"{t.warmup_ms:.2f} ms each)",
                t.cudagraph_warmups * t.warmup_ms,
                *_rerecording(exp),
                kind="warmups",
            )
        )
    if t.input_copy_bytes > 0:
        peak = exp.environment.peak_copy_gbps or 0.0
        ms = t.input_copy_bytes / (peak * 1e6) if peak else 0.0
        out.append(
            _Part(
                f"input copies ({t.input_copy_bytes / 1e6:.2f} MB of input copies per call)",
                ms,
                "Inputs are copied into the CUDA graph's static buffers every call. Pass the "
                "same tensors each time (update them in place), or make them parameters or "
                "buffers of the module, which the graph uses without copying.",
                kind="copies",
            )
        )
    device = t.device_ms or 0.0
    if t.device_ms is not None:
        out.append(
            _Part(
                f"the kernels ({device:.3f} ms on the device)",
                device,
                "The generated kernels are slower than eager's: look at the slowest one in the "
                'Kernel time pane; `mode="max-autotune"` tunes matmuls and their epilogues.',
                kind="kernels",
            )
        )
    host = max(total - sum(p.ms for p in out), 0.0)
    advice, fix = _host_advice(exp, t)
    out.append(
        _Part(
            f"the host side ({host:.3f} ms of {total:.3f} ms: guards, wrapper, kernel launches)",
            host,
            advice,
            fix,
            kind="host",
        )
    )
    return sorted(out, key=lambda p: -p.ms)


def _host_advice(exp: Exploration, t: CallTiming) -> tuple[str, Fix | None]:
    mode = (exp.options.mode if exp.options else None) or ""
    graphs = (
        t.cudagraph_replays or t.cudagraph_recordings or t.cudagraph_warmups
    ) or "reduce-overhead" in mode
    if graphs:
        # Host time under CUDA graphs with a training graph that never ran backward is CUDA
        # graph trees' own work for the pending backward (a new generation every call,
        # memory-pool checkpoints): on the H100, timm resnet18 spent 13.6 of 15.5 ms per call
        # there with grad, and the same compile under torch.no_grad() ran in 0.87 ms.
        advice, fix = _rerecording(exp)
        if fix is not None:
            return advice, fix
    if "reduce-overhead" in mode:
        return (
            "The GPU waits on Python although the mode asks for CUDA graphs: what stops "
            "the replay (a skip, re-recordings, a graph break) is listed here.",
            None,
        )
    return (
        "The GPU waits on Python: record the call as a CUDA graph so it replays with "
        'one launch:\n```python\ntorch.compile(fn, mode="reduce-overhead")\n```',
        None,
    )


def _training_graphs(exp: Exploration) -> list[Compile]:
    """Compiles that made a training graph (joint, forward, backward)."""
    return [
        c for c in exp.compiles if "aot_backward_graph" in c.graphs or "aot_joint_graph" in c.graphs
    ]


def _rerecording(exp: Exploration) -> tuple[str, Fix | None]:
    """Why CUDA graphs record again, where the Exploration says: grad enabled in a call
    that never runs backward, else the usual causes."""
    training = _training_graphs(exp)
    if training and not any(c.metrics.backward_seconds for c in training):
        return (
            "Grad is enabled in a call that never runs backward: AOTAutograd compiled a "
            "training graph (joint, forward, backward), and CUDA graph trees keep each "
            "forward's saved tensors for a backward that never comes: every call starts a "
            "new generation on the host, and calls that cannot replay record again. Run "
            "inference without autograd:\n```python\nwith torch.no_grad():   # or "
            "torch.inference_mode()\n    out = compiled(x)\n```",
            Fix(kind="no_grad", code="with torch.no_grad():"),
        )
    return (
        "CUDA graphs are re-recorded: a new input shape or a tensor kept from the previous "
        "call forces it. Keep shapes fixed (pad to buckets, `torch._dynamo.mark_static`) "
        "and mark step boundaries with `torch.compiler.cudagraph_mark_step_begin()`.",
        None,
    )


def _calls_by_recording(t: CallTiming) -> str:
    """The timed calls split by whether they recorded a CUDA graph, where they were kept."""
    if not t.compiled_calls_ms or len(t.compiled_call_events) != len(t.compiled_calls_ms):
        return ""
    pairs = list(zip(t.compiled_calls_ms, t.compiled_call_events, strict=True))
    rec = [ms for ms, ev in pairs if "recording" in ev]
    plain = sorted(ms for ms, ev in pairs if not ev)
    text = f"{len(pairs)} timed calls: {len(rec)} recorded a CUDA graph"
    if rec:
        text += f" (mean {sum(rec) / len(rec):.2f} ms)"
    if plain:
        text += (
            f"; the {len(plain)} that did not: median {plain[len(plain) // 2]:.2f} ms, "
            f"{plain[0]:.2f} to {plain[-1]:.2f} ms"
        )
    return text


def _slower_than_eager(exp: Exploration, t: CallTiming) -> Ranked:
    # a quarter slower at the median, or slower in every run, is no measuring noise
    clearly = t.speedup < 0.8 or t.compiled_spread_ms[0] > t.eager_spread_ms[1] > 0
    split = parts(exp, t)
    total = t.compiled_mean_ms or t.compiled_ms
    cause = split[0]
    first = exp.compiles[0] if exp.compiles else None
    evidence = [
        Evidence(
            text=f"eager {t.eager_ms:.3f} ms, compiled {t.compiled_ms:.3f} ms per call "
            f"(median; mean {total:.3f} ms, from {t.compiled_spread_ms[0]:.2f} to "
            f"{t.compiled_spread_ms[1]:.2f} ms) over {t.runs} runs",
            compile=key_of(first) if first else None,
            stage=compile_pane("compilation_metrics"),
        ),
        *(Evidence(text=f"{p.ms:.3f} ms: {p.name}") for p in split),
    ]
    if t.cudagraph_recordings and t.recording_ms is not None:
        # how a rare, long recording weighs against the typical call: the median call of a
        # run where under half the calls record is one that did not
        evidence.append(
            Evidence(
                text=f"{t.cudagraph_recordings:.2f} CUDA graph recordings per call, each "
                f"adding {t.recording_ms:.2f} ms over the median call without one",
                stage=compile_pane("compilation_metrics"),
            )
        )
    split_calls = _calls_by_recording(t)
    if split_calls:
        evidence.append(Evidence(text=split_calls, stage=compile_pane("compilation_metrics")))
    for c in _training_graphs(exp)[:1]:
        evidence.append(
            Evidence(
                text=f"{c.compile_id} compiled a training graph (joint, forward, backward)",
                compile=key_of(c),
                stage=compile_pane("aot_joint_graph"),
            )
        )
    for c in exp.compiles:
        if c.metrics.cudagraph_skip_reason:
            evidence.append(
                Evidence(
                    text=f"CUDA graphs skipped: {c.metrics.cudagraph_skip_reason}",
                    compile=key_of(c),
                    stage=compile_pane("compilation_metrics"),
                )
            )
    breaks = [(c, gb) for c in exp.compiles for gb in c.graph_breaks]
    advice = cause.advice
    if breaks:
        c, gb = breaks[0]
        evidence.append(
            Evidence(
                text=f"graph break: {gb.summary}",
                compile=key_of(c),
                stage=compile_pane("dynamo_graph_break_reason"),
                src=loc_key(gb.location),
            )
        )
        advice += (
            "\n\nEach graph break adds a guard check, a second graph call and the "
            "Python between them to every call: fix the break (see its finding) first."
        )
    impact = (
        f"{total - t.eager_ms:.3f} ms per call over eager; the compiled call's "
        f"{total:.3f} ms = " + " + ".join(f"{p.ms:.3f} ({p.name.split(' (')[0]})" for p in split)
    )
    return finding(
        KINDS[0] if recorded_on_gpu(exp) else KINDS[1],
        "problem" if clearly else "warning",
        f"Compiled is slower than eager ({t.compiled_ms:.3f} ms vs {t.eager_ms:.3f} ms per "
        f"call); the time goes to {cause.name}",
        evidence,
        advice,
        impact,
        score=1000.0 * (total - t.eager_ms),
        fix=cause.fix,
        cause=cause_key("slower_than_eager", cause.kind),
    )
