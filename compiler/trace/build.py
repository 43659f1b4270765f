"""Assemble an Exploration from structured trace events.

Live capture and trace loading both end here, so a stage looks the same whichever
way it was recorded. Events are grouped by (rank, compile id); restarts of one
compile (attempts) fold into one ``Compile``; a compile id that starts again after its
compile ended (``isolate_recompiles`` regions on newer torch) makes a new ``Compile``
(``Compile.id_reused``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from compiler.link.derive import derive
from compiler.model import (
    Bytecode,
    Compile,
    CompileId,
    CompileMetrics,
    Derived,
    Graph,
    Guards,
    Kernel,
    OutputCode,
    Provenance,
    SourceLoc,
    StageError,
)
from compiler.model.frame import decompile_later
from compiler.model.stages import DYNAMO_GRAPH
from compiler.parse.dynamo_text import (
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
from compiler.parse.words.cudagraphs import ARTIFACT as CUDAGRAPH_LOG
from compiler.parse.words.names import EXTERN_PREFIX
from compiler.parse.words.trace_lines import device_type
from compiler.trace.events import Event
from compiler.trace.fold import (
    CompileState,
    Pending,
    aoti_dump,
    fold_event,
    json_value,
)

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
class BuildResult:
    """Compiles, in order of first appearance, plus facts about the run."""

    compiles: list[Compile]
    facts: dict[str, Any]
    # what the compiles compute on first read (``compiler/model/derived.py``)
    derived: Derived


def build_compiles(events: Iterable[Event], *, source: str) -> BuildResult:
    """Group events into ``Compile``s. ``source`` is ``"live"`` or ``"trace"``.

    AOTInductor after a non-strict export runs no Dynamo frame: its graphs and code come
    without a compile id. Where a run has no compile at all but such stages, they make one
    compile ``0/0`` (as ``explore_export`` names the compile of a non-strict export).
    """
    states: dict[tuple[int | None, CompileId, int], CompileState] = {}
    reused: dict[tuple[int | None, CompileId], int] = {}
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
            facts["torch_version"] = json_value(event.payload)
        if event.compile_id is None:
            loose.append(event)
            continue
        frame = (event.rank, event.compile_id.without_attempt())
        key = (*frame, reused.get(frame, 0))
        state = states.get(key)
        if state is not None and event.key == "dynamo_start" and state.metrics:
            # a compile id whose compile already ended starts again: newer torch numbers
            # each isolate_recompiles region's compiles apart (pytorch #196495), so two
            # regions' compiles can both be 0/0; later events of the id are the newer one's
            reused[frame] = key[2] + 1
            key, state = (*frame, key[2] + 1), None
        if state is None:
            state = states[key] = CompileState(compile_id=frame[1], rank=event.rank,
                                               id_reused=key[2])  # fmt: skip
        state.attempts = max(state.attempts, event.compile_id.attempt + 1)
        fold_event(state, event, strings, facts)
    if not states and any(aoti_dump(e) for e in loose):
        state = CompileState(compile_id=CompileId(frame_id=0, frame_compile_id=0), rank=None)
        for event in loose:
            fold_event(state, event, strings, facts)
        states[(None, state.compile_id, 0)] = state
    cache = Derived()
    compiles = [_finish(state, source, cache) for state in states.values()]
    return BuildResult(compiles=derive(compiles, cache), facts=facts, derived=cache)


def _intern(event: Event, strings: dict[tuple[int | None, int], str]) -> None:
    meta = event.metadata
    if isinstance(meta, (list, tuple)) and len(meta) == 2:
        strings[(event.rank, int(meta[1]))] = str(meta[0])


def _device(meta: Any) -> str:
    return device_type(str(meta.get("device", "")) if isinstance(meta, dict) else "")


def _finish(state: CompileState, source: str, derived: Derived) -> Compile:
    errors = list(state.errors)
    outputs = []
    for raw in state.outputs:
        outputs.append(_output_code(raw["text"], raw["path"], raw["pending"], raw.get("mappings"),
                                    raw.get("stacks"), source))  # fmt: skip
    if state.pending.graphs or state.pending.fusion:
        outputs.append(_output_code("", "", state.pending, None, None, source))
    info = json_value(state.artifacts.get("triton_kernel_info", ""))
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
    elif DYNAMO_GRAPH not in graphs:
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
        id_reused=state.id_reused,
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
        artifacts=_with_cudagraph_log(state),
        errors=tuple(errors),
        autotuning=tuple(state.autotuning),
    )


def _output_code(
    text: str,
    path: str,
    pending: Pending,
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
    # node map is empty. torch keeps the stack-trace map for the whole process
    # (torch/_inductor/debug.py), so it names earlier compiles' calls too: a call counts
    # only where this code makes it.
    library_calls = [*provenance.kernel_to_post, *(stacks if isinstance(stacks, dict) else ())]
    for key in library_calls:
        name = kernel_name(str(key))
        if name not in known and name.startswith(EXTERN_PREFIX) and calls_of.get(name):
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


def _with_cudagraph_log(state: CompileState) -> dict[str, str]:
    """The compile's artifacts, with torch's CUDA graph messages as one more (a JSON list,
    read by ``compiler.parse.words.cudagraphs.messages``)."""
    if not state.cudagraph_log:
        return dict(state.artifacts)
    return {**state.artifacts, CUDAGRAPH_LOG: json.dumps(state.cudagraph_log)}
