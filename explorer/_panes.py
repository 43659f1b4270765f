"""Pieces every stage pane is built from: the label table, source links, text, graphs."""

from __future__ import annotations

import re
from typing import Any

import compiler
from compiler import Graph

from ._graph_view import graph_pane_data, src_key
from ._tokens import token_lines

STAGE_LABELS = {
    "bytecode": "Bytecode",
    "original_bytecode": "Original bytecode",
    "transformed_bytecode": "Transformed bytecode",
    "decompiled": "Decompiled (best effort)",
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
    # stage groups, in the order the compiler runs them
    "group_dynamo": "Dynamo",
    "group_pre_grad": "Pre-grad passes",
    "group_aot": "AOTAutograd",
    "group_inductor": "Inductor",
    "group_runtime": "Runtime",
}


_GROUP = {
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


_FILE_COMMENT = re.compile(r"#\s*File: (?P<file>.+?):(?P<line>\d+) in ")


class Links:
    """Collects every source line the view links to, and what the source pane shows."""

    def __init__(self, frame_files: frozenset[str] = frozenset()) -> None:
        self.frame_files = frame_files  # files of the compiled frames: the user's code
        self.involved: dict[str, set[int]] = {}
        self.code: dict[tuple[str, int], str] = {}
        self.functions: dict[str, list[tuple[int, str]]] = {}

    def add(self, loc: Any) -> str | None:
        key = src_key(loc)
        if key is not None:
            self.involved.setdefault(loc.filename, set()).add(loc.line)
            if loc.code:
                self.code.setdefault((loc.filename, loc.line), loc.code)
        return key

    def add_line(self, filename: str, line: int) -> str | None:
        if not filename or line <= 0:
            return None
        self.involved.setdefault(filename, set()).add(line)
        return f"{filename}:{line}"

    def keys(self) -> list[str]:
        return [f"{f}:{n}" for f in sorted(self.involved) for n in sorted(self.involved[f])]


def pane(pid: str, stage: str, kind: str, suffix: str = "", **rest: Any) -> dict[str, Any]:
    label = STAGE_LABELS.get(stage, stage)
    group = _GROUP.get(stage, "group_aot")
    return {
        "id": pid,
        "stage": stage,
        "label": f"{label} · {suffix}" if suffix else label,
        "group": group,
        "group_label": STAGE_LABELS[group],
        "kind": kind,
        "errors": rest.pop("errors", []),
        **rest,
    }


def text_data(text: str, language: str, line_src: list[str | None] | None = None) -> dict[str, Any]:
    lines = token_lines(text, language)
    return {"language": language, "lines": lines, "line_src": line_src or [None] * len(lines)}


def graph_pane(
    pid: str,
    stage: str,
    graph: Graph,
    links: Links,
    renderer: str,
    dot_jobs: list[Any],
    kernels: dict[str, list[str]],
    suffix: str = "",
) -> dict[str, Any]:
    def extra(n: compiler.Node) -> dict[str, Any]:
        loc = n.source
        return {
            "src": links.add(loc),
            "loc": f"{loc} in {loc.function}" if loc else "",
            "code": loc.code if loc else "",
            "kernels": kernels.get(n.name, []) if not n.module else [],
        }

    data, dot = graph_pane_data(graph, renderer=renderer, node_extra=extra)
    lines = graph.text.split("\n")
    line_src: list[str | None] = [None] * len(lines)
    line_node: list[int | None] = [None] * len(lines)
    for i, line in enumerate(lines):
        m = _FILE_COMMENT.search(line)
        if m:
            line_src[i] = links.add_line(m["file"], int(m["line"]))
    for i, node in enumerate(data["nodes"]):
        ln = node["line"] - 1
        if 0 <= ln < len(lines):
            line_node[ln] = i
            line_src[ln] = node["src"] or line_src[ln]
    text = text_data(graph.text, "python", line_src)
    text["line_node"] = line_node
    result = pane(pid, stage, "graph", suffix, text=text, graph=data)
    if dot is not None:
        dot_jobs.append((data, dot))
    return result
