"""The one table of UI labels, keyed by stage id (the trace keys, verbatim), the
compiler group each stage belongs to, and the pane a compile opens on."""

from __future__ import annotations

from collections.abc import Sequence

STAGE_LABELS = {
    "bytecode": "Bytecode",
    "original_bytecode": "Original bytecode",
    "transformed_bytecode": "Transformed bytecode",
    "decompiled": "Decompiled source",
    "dynamo_output_graph": "Dynamo graph",
    "dynamo_cpp_guards_str": "Guards",
    "dynamo_graph_break_reason": "Graph breaks",
    "recompile_reasons": "Recompile reasons",
    "before_pre_grad_graph": "Pre-grad",
    "after_pre_grad_graph": "Pre-grad (after passes)",
    "aot_joint_graph": "Joint",
    "before_joint_graph": "Joint (before passes)",
    "after_joint_graph": "Joint (after passes)",
    "aot_forward_graph": "Forward",
    "aot_backward_graph": "Backward",
    "aot_inference_graph": "Inference",
    "before_post_grad_graph": "Post-grad (before passes)",
    "inductor_post_grad_graph": "Post-grad",
    "ir_pre_fusion": "Schedule before fusion",
    "ir_post_fusion": "Fused schedule",
    "autotuning": "Autotuning",
    "inductor_output_code": "Output code",
    "triton_lowering": "Triton lowering",
    "triton_source": "Triton source",
    "ttir": "TTIR",
    "ttgir": "TTGIR",
    "llir": "LLVM IR",
    "ptx": "PTX",
    "sass": "SASS",
    "kernel_timing": "Kernel time",
    "compilation_metrics": "Compile time",
    "provenance": "Provenance",
    "source": "Source",
    "findings": "Findings",
    "ranks": "Ranks side by side",
    # stage groups, in the order the compiler runs them
    "group_advisor": "Advisor",
    "group_dynamo": "Dynamo",
    "group_pre_grad": "Pre-grad passes",
    "group_aot": "AOTAutograd",
    "group_inductor": "Inductor",
    "group_runtime": "Runtime",
}


GROUPS = {
    "findings": "group_advisor",
    "ranks": "group_advisor",
    "bytecode": "group_dynamo",
    "dynamo_output_graph": "group_dynamo",
    "dynamo_cpp_guards_str": "group_dynamo",
    "dynamo_graph_break_reason": "group_dynamo",
    "recompile_reasons": "group_dynamo",
    "before_pre_grad_graph": "group_pre_grad",
    "after_pre_grad_graph": "group_pre_grad",
    "kernel_timing": "group_runtime",
    "compilation_metrics": "group_runtime",
    "before_post_grad_graph": "group_inductor",
    "inductor_post_grad_graph": "group_inductor",
    "ir_post_fusion": "group_inductor",
    "autotuning": "group_inductor",
    "inductor_output_code": "group_inductor",
    "triton_lowering": "group_inductor",
}


def label_of(stage: str, suffix: str = "") -> str:
    """``Output code · forward`` for stage ``inductor_output_code`` of ``forward``."""
    label = STAGE_LABELS.get(stage, stage)
    return f"{label} · {suffix}" if suffix else label


def group_of(stage: str) -> str:
    """The compiler group of a stage (``group_aot`` for graphs not listed)."""
    return GROUPS.get(stage, "group_aot")


def default_pane(panes: Sequence[str]) -> str | None:
    """The pane a compile opens on when nothing asks for another: its Dynamo graph, else
    the first it lists. The one rule of the default stage: the index carries what it
    picks (``CompileEntry.default_stage``) and the browser only reads it.

    Example:
        >>> default_pane(["bytecode", "dynamo_output_graph"]), default_pane(["bytecode"])
        ('dynamo_output_graph', 'bytecode')
    """
    return "dynamo_output_graph" if "dynamo_output_graph" in panes else next(iter(panes), None)
