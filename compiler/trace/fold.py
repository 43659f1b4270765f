"""Fold one structured trace event into the compile it belongs to.

Which fold an event gets is the stage table's word (``Stage.fold`` in
``compiler.model.stages``): ``fold_event`` looks the event up there and calls the fold
of that name, where a 22-arm ``if``/``elif`` used to say it. ``compiler.trace.build``
groups events by compile and turns each folded state into a ``Compile``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compiler.model import (
    AutotuneChoice,
    Autotuning,
    CompileId,
    GraphBreak,
    Phase,
    RecompileReason,
    SourceLoc,
    StageError,
)
from compiler.model.stages import STAGE, STAGES, stage_keys
from compiler.parse.dynamo_text import parse_graph_break, parse_recompile_reasons
from compiler.trace.events import Event

# What the builder folds each event into is declared once, in the stage table
# (``Stage.fold``); these name sets are read from it.
COMPILE_GRAPHS = frozenset(stage_keys(fold="graph"))
# Graph stages emitted once per Inductor compile (forward and backward each have one).
INDUCTOR_GRAPHS = frozenset(stage_keys(fold="inductor_graph"))
CACHE_EVENTS = frozenset(stage_keys(fold="cache"))
_BYTECODE_TEXTS = ("_ORIGINAL_BYTECODE", "_MODIFIED_BYTECODE")

# Synthetic events that live capture adds to torch's own stream.
BYTECODE_EVENT = stage_keys(fold="live_bytecode")[0]
FUSION_IR_EVENT = stage_keys(fold="fusion_ir")[0]
AUTOTUNE_EVENT = stage_keys(fold="autotune")[0]
CUDAGRAPH_EVENT = stage_keys(fold="cudagraph")[0]
# {"stage": graph trace key, "stacks": {node name: [module path, ...]}}: the
# nn_module_stack of each node of a graph torch logged (live capture only).
MODULE_STACK_EVENT = stage_keys(fold="module_stack")[0]


@dataclass
class Pending:
    """Inductor stages seen since the last output code of a compile."""

    graphs: dict[str, Any] = field(default_factory=dict)
    fusion: dict[str, str] = field(default_factory=dict)
    module_stacks: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class CompileState:
    compile_id: CompileId
    rank: int | None
    id_reused: int = 0
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
    pending: Pending = field(default_factory=Pending)
    metrics: dict[str, Any] = field(default_factory=dict)
    bwd_metrics: dict[str, Any] = field(default_factory=dict)
    open_phases: list[tuple[str, float]] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    cache_events: list[str] = field(default_factory=list)
    artifacts: dict[str, str] = field(default_factory=dict)
    errors: list[StageError] = field(default_factory=list)
    autotuning: list[Autotuning] = field(default_factory=list)
    cudagraph: dict[str, int] = field(default_factory=dict)
    # torch's CUDA graph messages about this compile, in order (live capture only)
    cudagraph_log: list[str] = field(default_factory=list)


# AOTInductor's generated code, logged as ``graph_dump`` events: the stage each becomes
AOTI_DUMPS = {s.dump: s.key for s in STAGES if s.dump}


def aoti_dump(event: Event) -> str | None:
    """The stage of an AOTInductor code dump, or None."""
    if event.key == "graph_dump" and isinstance(event.metadata, dict):
        return AOTI_DUMPS.get(str(event.metadata.get("name")))
    return None


def json_value(payload: str) -> Any:
    try:
        return json.loads(payload)
    except json.JSONDecodeError:
        return None


def frames_of(
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


Strings = dict[tuple[int | None, int], str]


def fold_event(state: CompileState, event: Event, strings: Strings, facts: dict[str, Any]) -> None:
    """Fold ``event`` into ``state`` by the stage table's ``fold`` for its key (an
    ``artifact`` event by its name, where the table says it may come as one)."""
    name = event.name
    stage = STAGE.get(name)
    if stage is not None and stage.fold and (stage.artifact or event.key != "artifact"):
        _FOLD[stage.fold](state, event, strings, facts)
    elif name.endswith(_BYTECODE_TEXTS):
        which = "original" if name.endswith(_BYTECODE_TEXTS[0]) else "transformed"
        state.bytecode.setdefault(which, event.payload)
        state.bytecode.setdefault("code_name", name.rsplit("_", 2)[0])
    elif event.key == "artifact" and event.payload is not None:
        _keep_artifact(state, name, event.payload)


def _keep_artifact(state: CompileState, name: str, payload: str) -> None:
    # forward and backward both log some artifacts (fx_graph_runnable): keep each
    key, n = name, 1
    while key in state.artifacts:
        n += 1
        key = f"{name}#{n}"
    state.artifacts[key] = payload


_Fold = Callable[[CompileState, Event, Strings, dict[str, Any]], None]


def _start(state: CompileState, event: Event, strings: Strings, facts: dict[str, Any]) -> None:
    meta = event.metadata
    frames = frames_of(meta.get("stack") if isinstance(meta, dict) else None, event.rank, strings)
    if frames:
        state.stack = frames
        state.code_name = frames[-1].function
        state.filename = frames[-1].filename
        state.first_line = frames[-1].line


def _live_bytecode(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict):
        state.bytecode.update({k: v for k, v in event.metadata.items() if v is not None})


def _compile_graph(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        state.graphs[event.name] = event.payload


def _aoti_graph(state: CompileState, event: Event, *_: Any) -> None:
    stage = aoti_dump(event)
    if stage and event.payload is not None:
        state.graphs[stage] = event.payload


def _inductor_graph(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        state.pending.graphs[event.name] = event.payload


def _module_stack(state: CompileState, event: Event, *_: Any) -> None:
    meta = event.metadata
    if isinstance(meta, dict):
        stage = str(meta.get("stage"))
        target = state.pending if stage in INDUCTOR_GRAPHS else state
        target.module_stacks[stage] = meta.get("stacks") or {}


def _cudagraph(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict) and event.metadata.get("what"):
        what = str(event.metadata.get("what"))
        state.cudagraph[what] = state.cudagraph.get(what, 0) + 1
    if event.payload is not None:
        state.cudagraph_log.append(event.payload)


def _autotune(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict):
        state.autotuning.append(_autotuning(event.metadata))


def _fusion_ir(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict) and event.payload is not None:
        state.pending.fusion[str(event.metadata.get("stage"))] = event.payload


def _output(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        meta = event.metadata
        path = meta.get("filename", "") if isinstance(meta, dict) else ""
        state.outputs.append({"text": event.payload, "path": path or "", "pending": state.pending})
        state.pending = Pending()


def _node_mappings(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None and state.outputs:
        state.outputs[-1]["mappings"] = json_value(event.payload)


def _kernel_stacks(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None and state.outputs:
        state.outputs[-1]["stacks"] = json_value(event.payload)


def _guards(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        state.guards_text = event.payload


def _symbolic_guard(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict):
        expr = str(event.metadata.get("expr", ""))
        if expr and expr not in state.symbolic_guards:
            state.symbolic_guards.append(expr)


def _graph_break(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        state.graph_breaks.append(parse_graph_break(event.payload))


def _recompile(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        state.recompiles.extend(parse_recompile_reasons(event.payload))


def _metrics(state: CompileState, event: Event, _s: Strings, facts: dict[str, Any]) -> None:
    meta = event.metadata
    if isinstance(meta, dict):
        state.metrics = meta
        for k in ("python_version", "pytorch_version", "triton_version"):
            if meta.get(k):
                facts.setdefault(k, meta[k])
        # the whole Dynamo, Inductor and torch.compiler config in force for the compile,
        # each one JSON text (compiler.diff.config reads them); the last record wins
        for k in ("dynamo_config", "inductor_config", "compiler_config"):
            if isinstance(meta.get(k), str):
                state.artifacts[k] = meta[k]


def _bwd_metrics(state: CompileState, event: Event, *_: Any) -> None:
    if isinstance(event.metadata, dict):
        # one record per backward graph: a frame DDP's optimizer split into N graphs has N
        # backward compiles (seen on NCCL, torch 2.11), and its backward time is their sum
        before = state.bwd_metrics.get("inductor_compile_time_s")
        state.bwd_metrics = dict(event.metadata)
        now = state.bwd_metrics.get("inductor_compile_time_s")
        if before is not None and now is not None:
            state.bwd_metrics["inductor_compile_time_s"] = before + now


def _chromium(state: CompileState, event: Event, *_: Any) -> None:
    if event.payload is not None:
        _phase(state, json_value(event.payload))


def _cache(state: CompileState, event: Event, *_: Any) -> None:
    state.cache_events.append(event.name)
    # the key's components and a bypass reason: what ``compiler.cache_diff`` compares
    if event.payload is not None:
        _keep_artifact(state, event.name, event.payload)


# ``Stage.fold`` -> what folds that event into a compile
_FOLD: dict[str, _Fold] = {
    "start": _start,
    "live_bytecode": _live_bytecode,
    "graph": _compile_graph,
    "aoti_dump": _aoti_graph,
    "inductor_graph": _inductor_graph,
    "module_stack": _module_stack,
    "cudagraph": _cudagraph,
    "autotune": _autotune,
    "fusion_ir": _fusion_ir,
    "output_code": _output,
    "node_mappings": _node_mappings,
    "kernel_stacks": _kernel_stacks,
    "guards": _guards,
    "symbolic_guard": _symbolic_guard,
    "graph_break": _graph_break,
    "recompile": _recompile,
    "metrics": _metrics,
    "bwd_metrics": _bwd_metrics,
    "phase": _chromium,
    "cache": _cache,
}


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


def _phase(state: CompileState, ev: Any) -> None:
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
