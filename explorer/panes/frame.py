"""Panes of a compiled frame: bytecode, guards, graphs (its graph breaks and recompile
reasons are ``why/reasons.py``)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypeVar

from compiler import Compile, Exploration, Graph, SourceLoc, StageError, TensorMeta
from compiler.link import ids
from compiler.link.subgraphs import subgraph_calls

from .costs.saved import saved_marks
from .labels import STAGE_LABELS, group_of, label_of
from .types import (
    Block,
    CodePane,
    GraphNodes,
    GraphPane,
    Meta,
    PaneError,
    SourceRef,
    SubgraphLink,
)


class PaneNotFound(LookupError):
    """The widget or page asked for a pane this exploration does not have."""


def find_compile(exp: Exploration, key: str) -> Compile:
    """The compile whose ``Compile.key`` is ``key``; ``PaneNotFound`` otherwise."""
    for c in exp.compiles:
        if c.key == key:
            return c
    msg = f"no compile {key!r} in this exploration; pick one of the compile tree"
    raise PaneNotFound(msg)


def errors_of(errors: tuple[StageError, ...], *stages: str) -> tuple[PaneError, ...]:
    return tuple(
        PaneError(stage=e.stage, message=e.message, traceback=e.traceback)
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
                src = tuple(ids.src_key(c.filename, n) for n in lines)
                blocks.append(
                    Block(
                        title=STAGE_LABELS[title], note="", text=text, language="text", line_src=src
                    )
                )
        # the error also when there is text: depyf's output shown where ours failed
        note = b.decompile_error or ("" if b.decompiled is not None else "not decompiled")
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
    """(graph, stage, output-code key or "") for a graph pane id: the compiler's
    ``StageRef`` says which output code, if any, holds it."""
    ref = ids.stage_ref(c, pane_id)
    if ref is not None and ref.output is None and ref.stage in c.graphs:
        return c.graphs[ref.stage], ref.stage, ""
    for oc in c.output_code if ref is not None else ():
        if oc.key == ref.output and ref.stage in oc.graphs:
            return oc.graphs[ref.stage], ref.stage, oc.key
    msg = f"compile {c.key} has no graph {pane_id!r}"
    raise PaneNotFound(msg)


def build_graph(exp: Exploration, compile_key: str, pane_id: str) -> GraphPane:
    """A graph pane: the text verbatim, its ``# File:`` comments, and the nodes for the
    canvas, as columns over tables of the values nodes share (``GraphNodes``).

    Example:
        >>> pane = build_graph(exp, "0/0", "dynamo_output_graph")  # doctest: +SKIP
        >>> [pane.ops[i] for i in pane.nodes.op]  # doctest: +SKIP
        ['placeholder', 'call_function', 'output']
    """
    c = find_compile(exp, compile_key)
    graph, stage, suffix = graph_of(c, pane_id)
    nodes = graph.nodes
    # a column per field, each read in C (one pass per field: no tuple per node)
    names, ops, targets, metas, stacks, sources, kernels, lines, modules, reads = (
        tuple(map(read, nodes)) for read in _NODE_FIELDS
    )
    inputs = _inputs(names, modules, reads)
    comments = graph.file_comments
    source_refs, interned = _interned(sources + tuple(comments.values()), _source_ref, _LOC_FIELDS)
    meta_refs, meta = _interned(metas, _metas)
    stack_refs, stack = _distinct(stacks)
    kernel_refs, kernel = _distinct(kernels)
    op_refs, op = _distinct(ops)
    target_refs, target = _distinct(targets)
    columns = GraphNodes(
        name=names,
        op=op,
        target=target,
        meta=meta,
        module_stack=stack,
        inputs=inputs,
        source=interned[: len(sources)],
        kernels=kernel,
        line=lines,
    )
    return GraphPane(
        id=pane_id,
        stage=stage,
        label=label_of(stage, suffix),
        group=group_of(stage),
        text=graph.text,
        file_comments=tuple(zip(comments, interned[len(sources) :], strict=True)),
        parse_error=graph.parse_error,
        nodes=columns,
        ops=op_refs,
        targets=target_refs,
        sources=source_refs,
        metas=meta_refs,
        stacks=stack_refs,
        kernel_sets=kernel_refs,
        subgraphs=_subgraph_links(pane_id, graph, names, modules),
        saved=saved_marks(exp, c, stage, names) if not suffix else (),
    )


def _subgraph_links(
    pane_id: str, graph: Graph, names: tuple[str, ...], modules: tuple[str, ...]
) -> tuple[SubgraphLink, ...]:
    """Each higher-order op node's nested graphs, as node indices (none in most graphs)."""
    if not any(modules):
        return ()
    at = {(m, n): i for i, (m, n) in enumerate(zip(modules, names, strict=True))}
    span: dict[str, list[int]] = {}
    for i, m in enumerate(modules):
        if m:
            span.setdefault(m, [i, i])[1] = i
    links = []
    for call in subgraph_calls(ids.PaneId(pane_id), graph.nodes):
        caller = at.get((call.node_module, call.node))
        if caller is None or call.module not in span:
            continue
        first, last = span[call.module]
        link = SubgraphLink(
            caller=caller, first=first, last=last, op=call.op, role=call.role,
            module=call.module, id=call.id,
        )  # fmt: skip
        links.append(link)
    return tuple(links)


_T = TypeVar("_T")
_NODE_FIELDS = tuple(
    map(operator.attrgetter, ("name", "op", "target", "meta", "module_stack", "source",
                              "kernels", "line", "module", "inputs"))
)  # fmt: skip


def _inputs(
    names: tuple[str, ...], modules: tuple[str, ...], reads: tuple[tuple[str, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """The nodes each node reads, as indices: a name read inside a nested module is that
    module's node, else a top-level one; a node reading itself is no edge."""
    if not any(modules):  # the common case: one flat forward, names are unique
        get = {name: i for i, name in enumerate(names)}.get
        inputs = []
        for i, read in enumerate(reads):
            found = tuple(map(get, read))
            if None in found or i in found:  # rare: filtered in Python only then
                found = tuple(j for j in found if j is not None and j != i)
            inputs.append(found)
        return tuple(inputs)
    nested = {(m, name): i for i, (m, name) in enumerate(zip(modules, names, strict=True))}
    return tuple(
        tuple(
            j
            for j in (nested.get((module, name), nested.get(("", name))) for name in read)
            if j is not None and j != i
        )
        for i, (module, read) in enumerate(zip(modules, reads, strict=True))
    )


def _distinct(values: tuple[_T, ...]) -> tuple[tuple[_T, ...], tuple[int, ...]]:
    """(distinct values in first-seen order, index of each value): hashing strings and
    tuples of strings runs in C, so the whole of it does."""
    table = tuple(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(table)}
    return table, tuple(map(index.__getitem__, values))


def _interned(
    values: tuple[Any, ...],
    convert: Callable[[Any], Any],
    fields: Callable[[Any], Any] | None = None,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(table, index of each value in it): each distinct value ``convert``ed once; None
    stays None. Equal values are most often one object (the parser shares a location
    among the nodes under one comment, a meta among nodes of one annotation), so objects
    are told apart by identity first, in C; then by ``fields(value)`` (default: the value
    itself), a tuple C can hash where the dataclass's own hash runs Python code."""
    ids = tuple(map(id, values))
    distinct = dict(zip(ids, values, strict=True))  # alive in ``values`` while ids are used
    table: list[Any] = []
    by_value: dict[Any, int] = {}
    by_id: dict[int, int | None] = {}
    for ident, value in distinct.items():
        if value is None:
            by_id[ident] = None
            continue
        k = value if fields is None else fields(value)
        j = by_value.get(k)
        if j is None:
            j = by_value[k] = len(table)
            table.append(convert(value))
        by_id[ident] = j
    return tuple(table), tuple(map(by_id.__getitem__, ids))


_LOC_FIELDS = operator.attrgetter("filename", "line", "function", "code")


def _source_ref(loc: SourceLoc) -> SourceRef:
    key = ids.loc_key(loc)
    label = ids.src_label(loc.filename, loc.line) if key is not None else ""
    return SourceRef(src=key, function=loc.function, code=loc.code, label=label)


def _metas(metas: tuple[TensorMeta, ...]) -> tuple[Meta, ...]:
    return tuple(
        Meta(dtype=m.dtype, shape=m.shape, stride=m.stride, device=m.device) for m in metas
    )
