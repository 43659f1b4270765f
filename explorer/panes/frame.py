"""Panes of a compiled frame: bytecode, guards, graphs, graph breaks, recompile reasons."""

from __future__ import annotations

import re

from compiler import Compile, Exploration, Graph, SourceLoc, StageError

from .labels import STAGE_LABELS, group_of, label_of
from .types import (
    Block,
    CodePane,
    GraphBreakItem,
    GraphBreaksPane,
    GraphNode,
    GraphPane,
    Meta,
    PaneError,
    RecompileItem,
    RecompileReasonsPane,
    StackFrame,
)

_FILE_COMMENT = re.compile(r"#\s*File: (?P<file>.+?):(?P<line>\d+) in ")


class PaneNotFound(LookupError):
    """The widget or page asked for a pane this exploration does not have."""


def find_compile(exp: Exploration, key: str) -> Compile:
    """The compile whose ``Compile.key`` is ``key``; ``PaneNotFound`` otherwise."""
    for c in exp.compiles:
        if c.key == key:
            return c
    msg = f"no compile {key!r} in this exploration; pick one of the compile tree"
    raise PaneNotFound(msg)


def src_key(loc: SourceLoc | None) -> str | None:
    """The source key ``file:line`` of a location (None without one)."""
    if loc is None or not loc.filename or not loc.line:
        return None
    return f"{loc.filename}:{loc.line}"


def line_key(filename: str, line: int | None) -> str | None:
    return f"{filename}:{line}" if filename and line else None


def errors_of(errors: tuple[StageError, ...], *stages: str) -> tuple[PaneError, ...]:
    return tuple(
        PaneError(stage=e.stage, message=e.message)
        for e in errors
        if not stages or e.stage in stages
    )


def build_code(exp: Exploration, compile_key: str, pane_id: str) -> CodePane:
    """Bytecode (``bytecode``) or guards (``dynamo_cpp_guards_str``) of one compile.

    Example:
        >>> build_code(exp, "0/0", "bytecode").blocks[0].title  # doctest: +SKIP
        'Original bytecode'
    """
    c = find_compile(exp, compile_key)
    head = {"id": pane_id, "stage": pane_id, "label": label_of(pane_id), "group": group_of(pane_id)}
    if pane_id == "bytecode":
        b = c.bytecode
        if b is None:
            return CodePane(**head, errors=errors_of(c.errors, "bytecode"))
        blocks = []
        for title, text, lines in (
            ("original_bytecode", b.original, b.original_lines),
            ("transformed_bytecode", b.transformed, b.transformed_lines),
        ):
            if text is not None:
                src = tuple(line_key(c.filename, n) for n in lines)
                blocks.append(
                    Block(
                        title=STAGE_LABELS[title], note="", text=text, language="text", line_src=src
                    )
                )
        note = "" if b.decompiled is not None else (b.decompile_error or "not decompiled")
        blocks.append(
            Block(
                title=STAGE_LABELS["decompiled"],
                note=note,
                text=b.decompiled or "",
                language="python",
            )
        )
        return CodePane(**head, blocks=tuple(blocks), errors=errors_of(c.errors, "bytecode"))
    if pane_id == "dynamo_cpp_guards_str" and c.guards is not None:
        blocks = [Block(title=STAGE_LABELS[pane_id], note="", text=c.guards.tree, language="text")]
        if c.guards.symbolic:
            blocks.append(
                Block(
                    title="Symbolic shape guards",
                    note="",
                    text="\n".join(c.guards.symbolic),
                    language="text",
                )
            )
        return CodePane(**head, blocks=tuple(blocks))
    msg = f"compile {compile_key} has no code pane {pane_id!r}"
    raise PaneNotFound(msg)


def graph_of(c: Compile, pane_id: str) -> tuple[Graph, str, str]:
    """(graph, stage, output-code key or "") for a graph pane id."""
    if pane_id in c.graphs:
        return c.graphs[pane_id], pane_id, ""
    key, _, stage = pane_id.rpartition("/")
    for oc in c.output_code:
        if oc.key == key and stage in oc.graphs:
            return oc.graphs[stage], stage, key
    msg = f"compile {c.key} has no graph {pane_id!r}"
    raise PaneNotFound(msg)


def build_graph(exp: Exploration, compile_key: str, pane_id: str) -> GraphPane:
    """A graph pane: the text verbatim, per-line links, and the nodes for the canvas.

    Example:
        >>> len(build_graph(exp, "0/0", "dynamo_output_graph").nodes)  # doctest: +SKIP
        5
    """
    c = find_compile(exp, compile_key)
    graph, stage, suffix = graph_of(c, pane_id)
    nodes = graph.nodes
    index = {(n.module, n.name): i for i, n in enumerate(nodes)}
    inputs: list[list[int]] = [[] for _ in nodes]
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for name in n.inputs:
            j = index.get((n.module, name), index.get(("", name)))
            if j is not None and j != i:
                inputs[i].append(j)
                users[j].append(i)
    out = []
    for i, n in enumerate(nodes):
        loc = n.source
        out.append(
            GraphNode(
                name=n.name,
                op=n.op,
                target=n.target,
                args=n.args,
                kwargs=n.kwargs,
                meta=tuple(
                    Meta(dtype=m.dtype, shape=m.shape, stride=m.stride, device=m.device)
                    for m in n.meta
                ),
                module_stack=n.module_stack,
                inputs=tuple(inputs[i]),
                users=tuple(users[i]),
                src=src_key(loc),
                function=loc.function if loc else "",
                code=loc.code if loc else "",
                kernels=n.kernels,
                line=n.line,
            )
        )
    lines = graph.text.split("\n")
    line_src: list[str | None] = [None] * len(lines)
    line_node: list[int | None] = [None] * len(lines)
    for i, line in enumerate(lines):
        if "# File:" in line:
            m = _FILE_COMMENT.search(line)
            if m:
                line_src[i] = f"{m['file']}:{m['line']}"
    for i, node in enumerate(out):
        ln = node.line - 1
        if 0 <= ln < len(lines):
            line_node[ln] = i
            line_src[ln] = node.src or line_src[ln]
    return GraphPane(
        id=pane_id,
        stage=stage,
        label=label_of(stage, suffix),
        group=group_of(stage),
        text=graph.text,
        line_src=tuple(line_src),
        line_node=tuple(line_node),
        parse_error=graph.parse_error,
        nodes=tuple(out),
    )


def build_graph_breaks(exp: Exploration, compile_key: str, pane_id: str) -> GraphBreaksPane:
    """The graph breaks of one compile, each linked to its user source line."""
    c = find_compile(exp, compile_key)
    items = []
    for gb in c.graph_breaks:
        # a file without ``user_frames`` (written before it existed) links no frame
        mine = (*gb.user_frames, *(False,) * (len(gb.user_stack) - len(gb.user_frames)))
        stack = tuple(
            StackFrame(src=src_key(loc) if user else None, text=f"{loc} in {loc.function}")
            for loc, user in zip(gb.user_stack, mine, strict=False)
        )
        items.append(
            GraphBreakItem(
                summary=gb.summary,
                reason=gb.reason,
                src=src_key(gb.location),
                location=str(gb.location) if gb.location else "",
                code=gb.location.code if gb.location else "",
                hints=gb.hints,
                user_stack=stack,
                documentation=gb.documentation,
            )
        )
    stage = "dynamo_graph_break_reason"
    return GraphBreaksPane(
        id=pane_id, stage=stage, label=label_of(stage), group=group_of(stage), items=tuple(items)
    )


def build_recompile_reasons(
    exp: Exploration, compile_key: str, pane_id: str
) -> RecompileReasonsPane:
    """The failed guards that made this compile happen."""
    c = find_compile(exp, compile_key)
    stage = "recompile_reasons"
    items = tuple(
        RecompileItem(previous=r.previous, reason=r.reason, text=r.text)
        for r in c.recompile_reasons
    )
    return RecompileReasonsPane(
        id=pane_id, stage=stage, label=label_of(stage), group=group_of(stage), items=items
    )
