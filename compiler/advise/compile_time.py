"""Where compile time went (one phase dominating) and compiles that bought nothing."""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.costs import slow_compile, time_phases
from compiler.advise.findings import Evidence
from compiler.link.ids import SrcKey, compile_pane, kernel_of, key_of, loc_key, output_code_pane
from compiler.model import Compile, Exploration
from compiler.model.stages import DYNAMO_GRAPH

# Buckets of torch's chromium phase names, each with what shrinks it.
_BUCKETS = (
    (
        "Dynamo tracing",
        ("bytecode_tracing",),
        "Dynamo spent the compile interpreting Python: a large forward, or a loop it "
        "unrolled. A block that repeats can be traced once and reused:\n"
        "```python\n@torch.compiler.nested_compile_region\ndef block(x): ...\n```\n"
        "or keep a long loop out of the compiled function and compile its body.",
    ),
    (
        "kernel compilation (C++/Triton)",
        ("async_compile.wait", "compile_file"),
        "Most of the time went to building the generated kernels. Keep torch's caches on "
        "between runs (the FX graph cache makes this a load), and carry them with "
        "`torch.compiler.save_cache_artifacts()`.",
    ),
    (
        "Inductor scheduling and code generation",
        ("Scheduler.__init__", "Scheduler.codegen"),
        "Inductor spent its time fusing and generating code for a large graph. Fewer graph "
        "breaks and recompiles mean fewer such compiles; `nested_compile_region` shares one "
        "compile between repeated blocks.",
    ),
    (
        "guard building",
        ("build_guards",),
        "Building guards dominated: many inputs or parameters are guarded one by one. "
        "`torch.compile(model)` on the module rather than on a closure over many tensors, "
        "and `torch._dynamo.config.inline_inbuilt_nn_modules = True` (the default) help.",
    ),
)
_DOMINANT = 0.6
# below this a phase share says nothing (a first compile pays torch's one-time set-up)
_MIN_SECONDS = 5.0
_UNROLLED = 100  # ops from one source line in one graph: a loop Dynamo unrolled


def findings(exp: Exploration) -> list[Ranked]:
    """Unrolled loops, the phase that dominated compile time, and compiles
    that produced no kernels (or only library calls)."""
    out: list[Ranked] = []
    dominated: dict[str, list[tuple[Compile, float, float]]] = {}
    for c in exp.compiles:
        unrolled = _unrolled(exp, c)
        if unrolled is not None:
            out.append(unrolled)
        phase = _dominant_phase(c)
        if phase is not None:
            label, spent, total = phase
            dominated.setdefault(label, []).append((c, spent, total))
        empty = _no_kernels(exp, c)
        if empty is not None:
            out.append(empty)
    slow = slow_compile.findings(exp)
    cold = any(r.finding.kind == "compile_time.cold_build" for r in slow)
    for label, hits in dominated.items():
        # the cold-build finding says the same of the kernel build, with the mega-cache
        if not (cold and label == _BUCKETS[1][0]):
            out.append(_phase_finding(exp, label, hits))
    out.extend(time_phases.findings(exp))
    out.extend(slow)
    return out


def _unrolled(exp: Exploration, c: Compile) -> Ranked | None:
    graph = c.graphs.get(DYNAMO_GRAPH)
    ops = c.metrics.graph_op_count
    # a loaded trace parses graphs on first read: skip the ones too small to matter
    if graph is None or (ops is not None and ops < _UNROLLED):
        return None
    by_line: dict[SrcKey, list[str]] = {}
    for n in graph.nodes:
        key = loc_key(n.source)
        if n.op in ("call_function", "call_method", "call_module") and key is not None:
            by_line.setdefault(key, []).append(n.name)
    if not by_line:
        return None
    where, names = max(by_line.items(), key=lambda kv: len(kv[1]))
    if len(names) < _UNROLLED:
        return None
    tracing = sum(p.seconds for p in c.metrics.phases if p.name == "bytecode_tracing")
    node = graph.node(names[0])
    code = node.source.code.strip() if node is not None and node.source else ""
    return finding(
        "compile_time.unrolled_loop",
        "warning",
        f"Dynamo unrolled a loop: `{code or where}` became {len(names)} ops in one graph",
        [
            Evidence(
                text=f"{len(names)} of {len(graph.nodes)} nodes come from {where}",
                compile=key_of(c),
                stage=compile_pane(DYNAMO_GRAPH),
                src=where,
                node=names[0],
            )
        ],
        _BUCKETS[0][2],
        f"{len(names)} traced ops" + (f", {tracing:.1f} s of tracing" if tracing else ""),
        score=float(len(names)),
    )


def _dominant_phase(c: Compile) -> tuple[str, float, float] | None:
    """(bucket, seconds in it, compile seconds) when one bucket took most of ``c``."""
    total = c.metrics.entire_frame_seconds
    if not total or total < _MIN_SECONDS:
        return None
    seconds: dict[str, float] = {}
    for p in c.metrics.phases:
        seconds[p.name] = seconds.get(p.name, 0.0) + p.seconds
    for label, names, _ in _BUCKETS:
        spent = sum(seconds.get(n, 0.0) for n in names)
        if spent / total >= _DOMINANT:
            return label, spent, total
    return None


def _phase_finding(
    exp: Exploration, label: str, hits: list[tuple[Compile, float, float]]
) -> Ranked:
    """One note per phase, listing every compile it dominated."""
    advice = next(a for name, _, a in _BUCKETS if name == label)
    spent = sum(s for _, s, _ in hits)
    total = sum(t for _, _, t in hits)
    c0 = hits[0][0]
    ops = c0.metrics.graph_op_count
    which = f"Compile {c0.compile_id}" if len(hits) == 1 else f"{len(hits)} compiles"
    ops_text = f", for a graph of {ops} ops" if ops and len(hits) == 1 else ""
    # a phase share alone is no mistake (a cold kernel build is the price of compiling);
    # the unrolled-loop rule names the mistake when there is one
    return finding(
        "compile_time.phase",
        "info",
        f"{which} spent {spent / total:.0%} of {total:.1f} s in {label}{ops_text}",
        [
            Evidence(
                text=f"{label}: {s:.2f} s of {t:.2f} s",
                compile=key_of(c),
                stage=compile_pane("compilation_metrics"),
            )
            for c, s, t in hits[:4]
        ],
        advice,
        f"{spent:.1f} s of compile time",
        score=spent,
        cause=cause_key("compile_time.phase", label),
    )


def _no_kernels(exp: Exploration, c: Compile) -> Ranked | None:
    if not c.output_code or any(oc.kernels for oc in c.output_code):
        if not c.output_code:
            return None
        kernels = c.kernels()
        if any(k.language != "extern" for k in kernels):
            return None
        names = ", ".join(sorted({k.name for k in kernels}))
        oc = next(oc for oc in c.output_code if oc.kernels)
        return finding(
            "compile.library_only",
            "info",
            f"Compile {c.compile_id} runs only library calls ({names})",
            [
                Evidence(
                    text=f"no generated kernel, only {names}",
                    compile=key_of(c),
                    stage=output_code_pane(oc) if oc.text else None,
                    kernel=kernel_of(oc.kernels[0]),
                )
            ],
            "Inductor generated no kernel of its own, so compiling saves only Python "
            "overhead. Compile a larger region (the surrounding module) so pointwise work "
            "around the call can fuse into it.",
        )
    return finding(
        "compile.no_kernels",
        "warning",
        f"Compile {c.compile_id} (`{c.code_name}`) produced no kernels: the graph only "
        "reshapes, views or returns its inputs",
        [
            Evidence(
                text="the output code launches nothing",
                compile=key_of(c),
                stage=output_code_pane(c.output_code[0]) if c.output_code[0].text else None,
            )
        ],
        "Compiling this function costs a compile and a guard check per call and saves "
        "nothing: call it eagerly, or compile the code around it so there is work to fuse.\n"
        "```python\nfn = torch.compiler.disable(fn)   # or leave it out of torch.compile\n```",
        f"{c.metrics.entire_frame_seconds or 0:.2f} s compile for no kernel",
        score=c.metrics.entire_frame_seconds or 0.0,
    )
