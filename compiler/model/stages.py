"""The one table of what a stage is, in the shape of tlparse's parser table.

Each stage a capture holds or a view shows is declared here once: the key torch logs it
under (an event key, or the name of an ``artifact`` event), how the trace builder folds
its event into a compile, where it lives in the model, whether its text is an FX graph,
the output code an AOT graph became (its forward/backward/inference prefix), and the
pane, label and group a view shows it with. Every room reads this table (the builder
dispatches events through it, ``link`` orders panes by it, the rank outline picks what
to fingerprint by it, the explorer labels by it); none keeps its own list of stages.

Example:
    >>> STAGE["aot_backward_graph"].aot, STAGE["aot_backward_graph"].label
    ('backward', 'Backward')
    >>> STAGE["dynamo_graph_break_reason"].pane
    'graph_breaks'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# The graph Dynamo captured: the one most rooms look at first.
DYNAMO_GRAPH: Final = "dynamo_output_graph"
# The guard tree Dynamo installed (``dynamo_cpp_guards_str``).
GUARDS: Final = "dynamo_cpp_guards_str"
# The pane of an output code's code (and so of its kernels).
OUTPUT_CODE: Final = "inductor_output_code"


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage, or one event the builder folds, as the table declares it.

    ``key``: the trace key or artifact name, and the pane's stage id. ``fold``: how
    ``compiler.trace.build`` folds its event into a compile ("" for none: a stage only
    live capture or a view makes). ``artifact``: whether the event may also come as an
    ``artifact`` event of this name (else only under its own key). ``where``: ``frame``
    (what Dynamo recorded of the frame), ``compile`` (``Compile.graphs``), ``summary``
    (a pane gathered from the whole compile), ``output``
    (``OutputCode.graphs``, one per Inductor compile), ``kernel``, ``exploration`` (one
    pane for the whole capture), ``part`` (a block or view inside another pane), ""
    (an event no view shows). ``form``: ``graph`` for an FX graph parsed to nodes,
    ``text`` for a graph kept as text only. ``family``: graphs that share node names or
    a source (``dynamo``, ``joint``, ``export``, ``aoti``). ``aot``: the output code an
    AOT graph became. ``per_process``: its text differs between processes of one
    program (the pre-grad graph's ``graph id``), so ranks cannot compare it by md5.
    """

    key: str
    label: str = ""
    group: str = "group_aot"
    pane: str = "graph"
    where: str = ""
    form: str = ""
    family: str = ""
    aot: str = ""
    fold: str = ""
    artifact: bool = False
    per_process: bool = False
    # the ``graph_dump`` name AOTInductor logs this stage's code under
    dump: str = ""


def _graph(key: str, label: str, group: str, family: str = "", aot: str = "") -> Stage:
    """A graph of a compile, folded from its event into ``Compile.graphs``."""
    return Stage(key, label, group, where="compile", form="graph", family=family, aot=aot,
                 fold="graph", artifact=True)  # fmt: skip


def _event(key: str, fold: str, *, artifact: bool = False) -> Stage:
    """An event the builder folds into a compile that no view shows as a pane."""
    return Stage(key, pane="", fold=fold, artifact=artifact)


_CACHE_EVENTS = (
    "fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass", "aotautograd_cache_hit",
    "aotautograd_cache_miss", "aotautograd_cache_bypass",
)  # fmt: skip

# In the order the compiler runs them: the order a view lists a compile's panes in.
STAGES: tuple[Stage, ...] = (
    _event("dynamo_start", "start"),
    _event("explorer_bytecode", "live_bytecode"),
    Stage("bytecode", "Bytecode", "group_dynamo", "code", where="frame"),
    Stage("original_bytecode", "Original bytecode", pane="", where="part"),
    Stage("transformed_bytecode", "Transformed bytecode", pane="", where="part"),
    Stage("decompiled", "Decompiled source", pane="", where="part"),
    _graph(DYNAMO_GRAPH, "Dynamo graph", "group_dynamo", family="dynamo"),
    Stage(GUARDS, "Guards", "group_dynamo", "code", where="frame", fold="guards"),
    _event("guard_added_fast", "symbolic_guard"),
    _event("guard_added", "symbolic_guard"),
    Stage("dynamo_graph_break_reason", "Graph breaks", "group_dynamo", "graph_breaks",
          where="frame", fold="graph_break", artifact=True),
    Stage("recompile_reasons", "Recompile reasons", "group_dynamo", "recompile_reasons",
          where="frame", fold="recompile", artifact=True),
    Stage("before_pre_grad_graph", "Pre-grad", "group_pre_grad", where="compile", form="graph",
          family="dynamo", fold="graph", artifact=True, per_process=True),
    Stage("after_pre_grad_graph", "Pre-grad (after passes)", "group_pre_grad",
          where="compile", form="graph", family="dynamo", fold="graph", artifact=True,
          per_process=True),
    _graph("aot_joint_graph", "Joint", "group_aot", family="joint"),
    _graph("before_joint_graph", "Joint (before passes)", "group_aot", family="joint"),
    _graph("after_joint_graph", "Joint (after passes)", "group_aot", family="joint"),
    _graph("aot_forward_graph", "Forward", "group_aot", aot="forward"),
    _graph("aot_backward_graph", "Backward", "group_aot", aot="backward"),
    _graph("aot_inference_graph", "Inference", "group_aot", aot="inference"),
    # a graph ``torch.export`` or AOTInductor made that is no FX graph: nothing parses it
    Stage("exported_program_signature", where="compile", form="text", family="export"),
    Stage("exported_program_range_constraints", where="compile", form="text", family="export"),
    Stage("exported_program_module_call_graph", where="compile", form="text", family="export"),
    Stage("aoti_package", where="compile", form="text", family="aoti"),
    Stage("aoti_wrapper_cpp", where="compile", form="text", family="aoti",
          dump="inductor_aot_wrapper_code"),
    Stage("aoti_kernel_cpp", where="compile", form="text", family="aoti",
          dump="inductor_aot_kernel_code"),
    _event("explorer_module_stack", "module_stack"),
    Stage("before_post_grad_graph", "Post-grad (before passes)", "group_inductor",
          where="output", form="graph", fold="inductor_graph", artifact=True),
    Stage("inductor_post_grad_graph", "Post-grad", "group_inductor",
          where="output", form="graph", fold="inductor_graph", artifact=True),
    _event("explorer_fusion_ir", "fusion_ir"),
    Stage("ir_pre_fusion", "Schedule before fusion", pane="", where="part"),
    Stage("ir_post_fusion", "Fused schedule", "group_inductor", "schedule", where="output"),
    Stage("autotuning", "Autotuning", "group_inductor", "autotuning", where="summary"),
    _event("explorer_autotune", "autotune"),
    Stage(OUTPUT_CODE, "Output code", "group_inductor", "output_code", where="output",
          fold="output_code"),
    _event("inductor_provenance_tracking_node_mappings", "node_mappings", artifact=True),
    _event("inductor_provenance_tracking_kernel_stack_traces", "kernel_stacks", artifact=True),
    _event("graph_dump", "aoti_dump"),
    Stage("triton_lowering", "Triton lowering", "group_inductor", "triton_lowering",
          where="kernel"),
    Stage("triton_source", "Triton source", pane="", where="part"),
    Stage("ttir", "TTIR", pane="", where="part"),
    Stage("ttgir", "TTGIR", pane="", where="part"),
    Stage("llir", "LLVM IR", pane="", where="part"),
    Stage("ptx", "PTX", pane="", where="part"),
    Stage("sass", "SASS", pane="", where="part"),
    _event("explorer_cudagraph", "cudagraph"),
    Stage("kernel_timing", "Kernel time", "group_runtime", "kernel_timing", where="summary"),
    Stage("compilation_metrics", "Compile time", "group_runtime", "metrics", where="summary",
          fold="metrics"),
    _event("bwd_compilation_metrics", "bwd_metrics"),
    _event("chromium_event", "phase"),
    *(_event(key, "cache", artifact=True) for key in _CACHE_EVENTS),
    Stage("provenance", "Provenance", pane="", where="part"),
    Stage("source", "Source", pane="", where="part"),
    Stage("findings", "Findings", "group_advisor", "findings", where="exploration"),
    Stage("ranks", "Ranks side by side", "group_advisor", "ranks", where="exploration"),
    Stage("profile", "Profiled run", "group_runtime", "profile", where="exploration"),
    Stage("compile_time", "Compile time of the run", "group_runtime", "compile_time",
          where="exploration"),
    Stage("memory", "Memory", "group_runtime", "memory", where="exploration"),
    Stage("cudagraphs", "CUDA graphs", "group_runtime", "cudagraphs", where="exploration"),
    Stage("numerics", "Numerics", "group_advisor", "numerics", where="exploration"),
)  # fmt: skip

# The compiler groups a view sorts panes into, in the order the compiler runs them.
GROUPS: tuple[tuple[str, str], ...] = (
    ("group_advisor", "Advisor"),
    ("group_dynamo", "Dynamo"),
    ("group_pre_grad", "Pre-grad passes"),
    ("group_aot", "AOTAutograd"),
    ("group_inductor", "Inductor"),
    ("group_runtime", "Runtime"),
)

STAGE: dict[str, Stage] = {s.key: s for s in STAGES}


def stage_keys(**fields: object) -> tuple[str, ...]:
    """The keys of the stages whose fields have these values, in the table's order.

    Example:
        >>> stage_keys(family="joint")
        ('aot_joint_graph', 'before_joint_graph', 'after_joint_graph')
    """
    return tuple(s.key for s in STAGES if all(getattr(s, f) == v for f, v in fields.items()))


# A compile's graphs, in order (graphs of torch.export and AOTInductor are text only).
COMPILE_GRAPHS: Final = stage_keys(where="compile", form="graph")
# An output code's graphs (one per Inductor compile: forward and backward each have one).
POST_GRAD_GRAPHS: Final = stage_keys(where="output", form="graph")
# Graphs kept as text: nothing parses them and they have no nodes.
UNPARSED_STAGES: Final = stage_keys(where="compile", form="text")
# AOT graph -> the output code it became, and back (``aot_forward_graph``, ``forward``).
AOT_GRAPH_OF: Final = {s.key: s.aot for s in STAGES if s.aot}
AOT_STAGE_OF: Final = {s.aot: s.key for s in STAGES if s.aot}
