"""Assemble an Exploration from structured trace events.

Live capture and trace loading both end here, so a stage looks the same whichever
way it was recorded. Events are grouped by (rank, compile id); restarts of one
compile (attempts) fold into one ``Compile``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.link.derive import derive
from compiler.model import (
    AutotuneChoice,
    Autotuning,
    Bytecode,
    Compile,
    CompileId,
    CompileMetrics,
    Derived,
    Graph,
    GraphBreak,
    Guards,
    Kernel,
    OutputCode,
    Phase,
    Provenance,
    RecompileReason,
    SourceLoc,
    StageError,
)
from compiler.model.frame import decompile_later
from compiler.parse.dynamo_text import (
    parse_graph_break,
    parse_recompile_reasons,
    parse_stack_trace,
)
from compiler.parse.output_code import (
    aot_id,
    call_index,
    extern_kernel,
    graph_kind,
    kernel_name,
    library_calls_in,
    parse_schedule,
    provenance_maps,
    split_kernels,
)
from compiler.parse.resume_names import resume_name
from compiler.trace.events import Event

# Graph stages emitted once per compile, keyed by their trace key.
COMPILE_GRAPHS = frozenset(
    {"dynamo_output_graph", "before_pre_grad_graph", "after_pre_grad_graph", "aot_joint_graph",
     "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "before_joint_graph",
     "after_joint_graph"}
)  # fmt: skip
# Graph stages emitted once per Inductor compile (forward and backward each have one).
INDUCTOR_GRAPHS = frozenset({"before_post_grad_graph", "inductor_post_grad_graph"})
CACHE_EVENTS = frozenset(
    {"fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass", "aotautograd_cache_hit",
     "aotautograd_cache_miss", "aotautograd_cache_bypass"}
)  # fmt: skip
NODE_MAPPINGS = "inductor_provenance_tracking_node_mappings"
KERNEL_STACKS = "inductor_provenance_tracking_kernel_stack_traces"
# Events whose content is folded into other fields, not kept as raw artifacts.
_CONSUMED = (
    COMPILE_GRAPHS | INDUCTOR_GRAPHS | CACHE_EVENTS
    | {NODE_MAPPINGS, KERNEL_STACKS, "dynamo_graph_break_reason", "recompile_reasons"}
)  # fmt: skip

# Synthetic events that live capture adds to torch's own stream.
BYTECODE_EVENT = "explorer_bytecode"
FUSION_IR_EVENT = "explorer_fusion_ir"
AUTOTUNE_EVENT = "explorer_autotune"
CUDAGRAPH_EVENT = "explorer_cudagraph"
# {"stage": graph trace key, "stacks": {node name: [module path, ...]}}: the
# nn_module_stack of each node of a graph torch logged (live capture only).
MODULE_STACK_EVENT = "explorer_module_stack"

_MISSING_IN_TRACE = {
    "bytecode": (
        "TORCH_TRACE logs hold bytecode for resume functions only; capture with "
        "compiler.explore() to see it for every frame."
    ),
    "schedule": (
        "The fused schedule (Inductor's ir_post_fusion log) is not written to TORCH_TRACE "
        "logs; capture with compiler.explore() to see it."
    ),
}


@dataclass
class _Pending:
    """Inductor stages seen since the last output code of a compile."""

    graphs: dict[str, Any] = field(default_factory=dict)
    fusion: dict[str, str] = field(default_factory=dict)
    module_stacks: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class _CompileState:
    compile_id: CompileId
    rank: int | None
    code_name: str = ""
    filename: str = ""
    first_line: int = 0
    stack: tuple[SourceLoc, ...] = ()
    attempts: int = 1
    bytecode: dict[str, Any] = field(default_factory=dict)
    graphs: dict[str, Any] = field(default_factory=dict)
    module_stacks: dict[str, dict[str, Any]] = field(default_factory=dict)
    guards_text: str | None = None
    symbolic_guards: list[str] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompiles: list[RecompileReason] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    pending: _Pending = field(default_factory=_Pending)
    metrics: dict[str, Any] = field(default_factory=dict)
    bwd_metrics: dict[str, Any] = field(default_factory=dict)
    open_phases: list[tuple[str, float]] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    cache_events: list[str] = field(default_factory=list)
    artifacts: dict[str, str] = field(default_factory=dict)
    errors: list[StageError] = field(default_factory=list)
    autotuning: list[Autotuning] = field(default_factory=list)
    cudagraph: dict[str, int] = field(default_factory=dict)


@dataclass
class BuildResult:
    """Compiles, in order of first appearance, plus facts about the run."""

    compiles: list[Compile]
    facts: dict[str, Any]
    # what the compiles compute on first read (``compiler/model/derived.py``)
    derived: Derived


# AOTInductor's generated code, logged as ``graph_dump`` events: the stage each becomes
AOTI_DUMPS = {
    "inductor_aot_wrapper_code": "aoti_wrapper_cpp",
    "inductor_aot_kernel_code": "aoti_kernel_cpp",
}


def build_compiles(events: Iterable[Event], *, source: str) -> BuildResult:
    """Group events into ``Compile``s. ``source`` is ``"live"`` or ``"trace"``.

    AOTInductor after a non-strict export runs no Dynamo frame: its graphs and code come
    without a compile id. Where a run has no compile at all but such stages, they make one
    compile ``0/0`` (as ``explore_export`` names the compile of a non-strict export).
    """
    states: dict[tuple[int | None, CompileId], _CompileState] = {}
    strings: dict[tuple[int | None, int], str] = {}
    facts: dict[str, Any] = {}
    loose: list[Event] = []
    for event in events:
        if event.key == "str":
            _intern(event, strings)
            continue
        if event.key == "describe_tensor" and "device" not in facts:
            facts["device"] = _device(event.metadata)
        if event.name == "torch_version" and event.payload:
            facts["torch_version"] = _json(event.payload)
        if event.compile_id is None:
            loose.append(event)
            continue
        key = (event.rank, event.compile_id.without_attempt())
        state = states.get(key)
        if state is None:
            state = states[key] = _CompileState(compile_id=key[1], rank=event.rank)
        state.attempts = max(state.attempts, event.compile_id.attempt + 1)
        _apply(state, event, strings, facts)
    if not states and any(_aoti_dump(e) for e in loose):
        state = _CompileState(compile_id=CompileId(frame_id=0, frame_compile_id=0), rank=None)
        for event in loose:
            _apply(state, event, strings, facts)
        states[(None, state.compile_id)] = state
    cache = Derived()
    compiles = [_finish(state, source, cache) for state in states.values()]
    return BuildResult(compiles=derive(compiles, cache), facts=facts, derived=cache)


def _aoti_dump(event: Event) -> str | None:
    """The stage of an AOTInductor code dump, or None."""
    if event.key == "graph_dump" and isinstance(event.metadata, dict):
        return AOTI_DUMPS.get(str(event.metadata.get("name")))
    return None


def _intern(event: Event, strings: dict[tuple[int | None, int], str]) -> None:
    meta = event.metadata
    if isinstance(meta, (list, tuple)) and len(meta) == 2:
        strings[(event.rank, int(meta[1]))] = str(meta[0])


def _device(meta: Any) -> str:
    text = str(meta.get("device", "")) if isinstance(meta, dict) else ""
    if "type='" in text:
        return text.split("type='", 1)[1].split("'", 1)[0]
    return text


def _json(payload: str) -> Any:
    try:
        return json.loads(payload)
    except json.JSONDecodeError:
        return None


def _frames(
    stack: Any, rank: int | None, strings: dict[tuple[int | None, int], str]
) -> tuple[SourceLoc, ...]:
    frames = []
    for f in stack or ():
        if not isinstance(f, dict):
            continue
        filename = f.get("filename")
        if isinstance(filename, int):
            filename = strings.get((rank, filename), f"<file {filename}>")
        frames.append(
            SourceLoc(
                filename=str(filename),
                line=int(f.get("line") or 0),
                function=str(f.get("name", "")),
                code=str(f.get("loc", "")),
            )
        )
    return tuple(frames)


_Strings = dict[tuple[int | None, int], str]


def _apply(state: _CompileState, event: Event, strings: _Strings, facts: dict[str, Any]) -> None:
    name = event.name
    payload = event.payload
    meta = event.metadata
    if event.key == "dynamo_start":
        frames = _frames(meta.get("stack") if isinstance(meta, dict) else None, event.rank, strings)
        if frames:
            state.stack = frames
            state.code_name = frames[-1].function
            state.filename = frames[-1].filename
            state.first_line = frames[-1].line
    elif event.key == BYTECODE_EVENT and isinstance(meta, dict):
        state.bytecode.update({k: v for k, v in meta.items() if v is not None})
    elif name.endswith("_ORIGINAL_BYTECODE") or name.endswith("_MODIFIED_BYTECODE"):
        which = "original" if name.endswith("_ORIGINAL_BYTECODE") else "transformed"
        state.bytecode.setdefault(which, payload)
        state.bytecode.setdefault("code_name", name.rsplit("_", 2)[0])
    elif name in COMPILE_GRAPHS and payload is not None:
        state.graphs[name] = payload
    elif _aoti_dump(event) and payload is not None:
        state.graphs[str(_aoti_dump(event))] = payload
    elif name in INDUCTOR_GRAPHS and payload is not None:
        state.pending.graphs[name] = payload
    elif event.key == MODULE_STACK_EVENT and isinstance(meta, dict):
        stage = str(meta.get("stage"))
        target = state.pending if stage in INDUCTOR_GRAPHS else state
        target.module_stacks[stage] = meta.get("stacks") or {}
    elif event.key == CUDAGRAPH_EVENT and isinstance(meta, dict):
        what = str(meta.get("what"))
        state.cudagraph[what] = state.cudagraph.get(what, 0) + 1
    elif event.key == AUTOTUNE_EVENT and isinstance(meta, dict):
        state.autotuning.append(_autotuning(meta))
    elif event.key == FUSION_IR_EVENT and isinstance(meta, dict) and payload is not None:
        state.pending.fusion[str(meta.get("stage"))] = payload
    elif event.key == "inductor_output_code" and payload is not None:
        path = meta.get("filename", "") if isinstance(meta, dict) else ""
        state.outputs.append({"text": payload, "path": path or "", "pending": state.pending})
        state.pending = _Pending()
    elif name == NODE_MAPPINGS and payload is not None and state.outputs:
        state.outputs[-1]["mappings"] = _json(payload)
    elif name == KERNEL_STACKS and payload is not None and state.outputs:
        state.outputs[-1]["stacks"] = _json(payload)
    elif event.key == "dynamo_cpp_guards_str" and payload is not None:
        state.guards_text = payload
    elif event.key in ("guard_added_fast", "guard_added") and isinstance(meta, dict):
        expr = str(meta.get("expr", ""))
        if expr and expr not in state.symbolic_guards:
            state.symbolic_guards.append(expr)
    elif name == "dynamo_graph_break_reason" and payload is not None:
        state.graph_breaks.append(parse_graph_break(payload))
    elif name == "recompile_reasons" and payload is not None:
        state.recompiles.extend(parse_recompile_reasons(payload))
    elif event.key == "compilation_metrics" and isinstance(meta, dict):
        state.metrics = meta
        for k in ("python_version", "pytorch_version", "triton_version"):
            if meta.get(k):
                facts.setdefault(k, meta[k])
    elif event.key == "bwd_compilation_metrics" and isinstance(meta, dict):
        state.bwd_metrics = meta
    elif event.key == "chromium_event" and payload is not None:
        _phase(state, _json(payload))
    elif name in CACHE_EVENTS:
        state.cache_events.append(name)
    elif event.key == "artifact" and payload is not None and name not in _CONSUMED:
        # forward and backward both log some artifacts (fx_graph_runnable): keep each
        key, n = name, 1
        while key in state.artifacts:
            n += 1
            key = f"{name}#{n}"
        state.artifacts[key] = payload


def _autotuning(meta: dict[str, Any]) -> Autotuning:
    choices = tuple(
        AutotuneChoice(
            name=str(c.get("name", "")),
            description=str(c.get("description", "")),
            ms=float(c["ms"]) if isinstance(c.get("ms"), (int, float)) else None,
        )
        for c in meta.get("choices") or ()
        if isinstance(c, dict)
    )
    return Autotuning(
        op=str(meta.get("op", "")),
        input_sizes=tuple(str(s) for s in meta.get("input_sizes") or ()),
        choices=choices,
        chosen=str(meta.get("chosen", "")),
    )


def _phase(state: _CompileState, ev: Any) -> None:
    if not isinstance(ev, dict) or "name" not in ev or "ts" not in ev:
        return
    phase_name, ts = str(ev["name"]), float(ev["ts"])
    if ev.get("ph") == "B":
        state.open_phases.append((phase_name, ts))
    elif ev.get("ph") == "E":
        for i in range(len(state.open_phases) - 1, -1, -1):
            if state.open_phases[i][0] == phase_name:
                start = state.open_phases.pop(i)[1]
                state.phases.append(Phase(name=phase_name, seconds=(ts - start) / 1e6, depth=i))
                break


def _finish(state: _CompileState, source: str, derived: Derived) -> Compile:
    errors = list(state.errors)
    outputs = []
    for raw in state.outputs:
        outputs.append(_output_code(raw["text"], raw["path"], raw["pending"], raw.get("mappings"),
                                    raw.get("stacks"), source))  # fmt: skip
    if state.pending.graphs or state.pending.fusion:
        outputs.append(_output_code("", "", state.pending, None, None, source))
    info = _json(state.artifacts.get("triton_kernel_info", ""))
    if isinstance(info, dict):
        outputs = [_with_kernel_info(o, info) for o in outputs]
    graphs = {k: _graph(k, v, state.module_stacks.get(k)) for k, v in state.graphs.items()}
    bytecode = None
    if state.bytecode:
        b = state.bytecode
        fields: dict[str, Any] = {
            "code_name": str(b.get("code_name", state.code_name)),
            "original": b.get("original"),
            "transformed": b.get("transformed"),
            "source": b.get("source"),
        }
        decompile = b.get("decompile")
        if callable(decompile):  # live capture: decompiled when first read
            bytecode = Bytecode(**fields, derived=decompile_later(derived, decompile))
        elif b.get("decompiled") is not None or b.get("decompile_error") is not None:
            found = (b.get("decompiled"), b.get("decompile_error"))
            bytecode = Bytecode(**fields, derived=derived.known(found))
        else:
            bytecode = Bytecode(**fields)
    elif source == "trace" and state.code_name:
        errors.append(StageError(stage="bytecode", message=_MISSING_IN_TRACE["bytecode"]))
    m = state.metrics
    fail_type = m.get("fail_type")
    if fail_type:
        status = "failed"
    elif state.graph_breaks:
        status = "graph_break"
    elif "dynamo_output_graph" not in graphs:
        status = "no_graph"
    else:
        status = "ok"
    restarts = tuple(str(r) for r in m.get("restart_reasons") or ())
    cache = state.cache_events
    metrics = CompileMetrics(
        entire_frame_seconds=m.get("entire_frame_compile_time_s"),
        backend_seconds=m.get("backend_compile_time_s"),
        inductor_seconds=m.get("inductor_compile_time_s"),
        code_gen_seconds=m.get("code_gen_time_s"),
        backward_seconds=state.bwd_metrics.get("inductor_compile_time_s"),
        phases=tuple(state.phases),
        cache_events=tuple(cache),
        fx_cache_hits=cache.count("fx_graph_cache_hit"),
        fx_cache_misses=cache.count("fx_graph_cache_miss"),
        aot_cache_hits=cache.count("aotautograd_cache_hit"),
        aot_cache_misses=cache.count("aotautograd_cache_miss"),
        guard_count=m.get("guard_count"),
        graph_op_count=m.get("graph_op_count"),
        fail_type=fail_type,
        fail_reason=m.get("fail_reason"),
        cudagraph_skip_reason=m.get("cudagraph_skip_reason"),
        cudagraph_warmups=state.cudagraph.get("warmup", 0),
        cudagraph_recordings=state.cudagraph.get("recording", 0),
    )
    # parsed on first read (``link.derive``)
    guards = (
        Guards(tree=state.guards_text, symbolic=tuple(state.symbolic_guards))
        if state.guards_text
        else None
    )
    return Compile(
        compile_id=state.compile_id,
        rank=state.rank,
        code_name=state.code_name or (bytecode.code_name if bytecode else ""),
        filename=state.filename,
        first_line=state.first_line,
        is_resume=resume_name(state.code_name or "") is not None,
        status=status,
        attempts=state.attempts,
        restart_reasons=restarts,
        stack=state.stack,
        bytecode=bytecode,
        graphs=graphs,
        guards=guards,
        graph_breaks=tuple(state.graph_breaks),
        recompile_reasons=tuple(state.recompiles),
        output_code=tuple(outputs),
        metrics=metrics,
        artifacts=dict(state.artifacts),
        errors=tuple(errors),
        autotuning=tuple(state.autotuning),
    )


def _output_code(
    text: str,
    path: str,
    pending: _Pending,
    mappings: Any,
    stacks: Any,
    source: str,
) -> OutputCode:
    errors: list[StageError] = []
    provenance = provenance_maps(mappings)
    # the code's lines and call index, read once for its kernels and library calls
    lines = text.split("\n")
    calls_of = call_index(lines) if text else {}
    kernels = split_kernels(text, lines, calls_of) if text else []
    if text and mappings is None:
        errors.append(
            StageError(
                stage="provenance",
                message="Inductor emitted no provenance maps for this graph, so kernels are not "
                "linked to graph nodes (provenance tracking was off when it compiled).",
            )
        )
    elif text and kernels and not provenance.kernel_to_post:
        errors.append(
            StageError(
                stage="provenance",
                message="Inductor's provenance map for this graph is empty (torch 2.13 emits it "
                "so for backward graphs): its kernels are not linked to post-grad nodes, and "
                "their user source lines come from the kernel stack traces where torch gave them.",
            )
        )
    known = {k.name for k in kernels}
    # Library calls appear in the node map, and in the stack-trace map even when the
    # node map is empty.
    library_calls = [*provenance.kernel_to_post, *(stacks if isinstance(stacks, dict) else ())]
    for key in library_calls:
        name = kernel_name(str(key))
        if name not in known and name.startswith("extern_kernels."):
            kernels.append(extern_kernel(text, name, lines, calls_of))
            known.add(name)
    # Library calls the maps do not name (attention, ops Inductor falls back to).
    for name in library_calls_in(text):
        if name not in known:
            kernels.append(extern_kernel(text, name, lines, calls_of))
            known.add(name)
    traces_of: dict[str, list[Any]] = {}
    if isinstance(stacks, dict):
        for key, traces in stacks.items():
            traces_of.setdefault(kernel_name(str(key)), []).extend(traces or ())
    # kernels of one op share its stack traces: each text read once
    frames: dict[str, tuple[SourceLoc, ...]] = {}
    kernels = [_link_kernel(k, provenance, traces_of.get(k.name, []), frames) for k in kernels]
    if not text:
        errors.append(
            StageError(
                stage="inductor_output_code",
                message="Inductor produced no output code for this graph: the compile failed or "
                "stopped before code generation.",
            )
        )
    schedule = None
    if pending.fusion:
        schedule = parse_schedule(
            pending.fusion.get("ir_pre_fusion"), pending.fusion.get("ir_post_fusion")
        )
    elif source == "trace" and text:
        errors.append(StageError(stage="schedule", message=_MISSING_IN_TRACE["schedule"]))
    aot = aot_id(text)
    return OutputCode(
        graph=graph_kind(aot),
        aot_id=aot,
        text=text,
        path=path,
        graphs={k: _graph(k, v, pending.module_stacks.get(k)) for k, v in pending.graphs.items()},
        kernels=tuple(kernels),
        schedule=schedule,
        provenance=provenance,
        errors=tuple(errors),
    )


def _graph(stage: str, text: str, stacks: dict[str, Any] | None) -> Graph:
    """A graph of ``text``, with live capture's module stacks where it recorded them
    (``link.derive`` parses it on first read)."""
    recorded = {
        str(name): tuple(str(p) for p in stack) for name, stack in (stacks or {}).items() if stack
    }
    return Graph(stage=stage, text=text, module_stacks=recorded)


def _with_kernel_info(out: OutputCode, info: dict[str, Any]) -> OutputCode:
    """Attach torch's ``triton_kernel_info`` (autotune state, configs, compile time)."""
    kernels = tuple(
        replace(k, info={key: _text(val) for key, val in info[k.name].items()})
        if isinstance(info.get(k.name), dict)
        else k
        for k in out.kernels
    )
    return replace(out, kernels=kernels)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _link_kernel(
    kernel: Kernel,
    provenance: Provenance,
    traces: list[Any],
    frames: dict[str, tuple[SourceLoc, ...]],
) -> Kernel:
    stack: dict[SourceLoc, None] = {}
    for trace in traces:
        text = str(trace)
        locs = frames.get(text)
        if locs is None:
            locs = frames[text] = parse_stack_trace(text)
        for loc in locs:
            stack.setdefault(loc, None)
    return replace(
        kernel,
        post_grad_nodes=provenance.kernel_to_post.get(kernel.name, ()),
        user_stack=tuple(stack),
    )
