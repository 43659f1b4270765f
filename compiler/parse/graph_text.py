"""Turn the graph text torch prints (``GraphModule.print_readable``) into nodes.

The text is read line by line (``graph_lines``), never executed, so a trace file cannot
run code through it. The graph keeps the text verbatim; the nodes are an index into it.
This module is the parse room's front: the parse entry points and the helpers the
model's links share (``comment_sources``, ``with_links``, ``no_collection``).
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator

from compiler.model import Derived, Graph, Node, SourceLoc
from compiler.parse.graph_lines import GraphTextError, scan_nodes
from compiler.parse.graph_nodes import Record, comment_source, new_node, tensor_meta, with_links

__all__ = [
    "GraphTextError",
    "Record",
    "comment_source",
    "comment_sources",
    "new_node",
    "no_collection",
    "parse_graph",
    "parse_nodes",
    "tensor_meta",
    "with_links",
]

# A ``# File:`` comment as a whole line (``re.match``).
_FILE_COMMENT_LINE = re.compile(
    r"[ \t]*# (?:Backward of forward node: )?File: (.+?):(\d+) in (.+?), code: (.*)"
)


def parse_graph(stage: str, text: str) -> Graph:
    """Parse torch's readable graph text into a ``Graph`` now; never raises. (A capture
    or load parses on first read instead: ``compiler/link/derive.py``.)

    Example:
        >>> text = gm.print_readable(print_output=False)  # doctest: +SKIP
        >>> g = parse_graph("dynamo_output_graph", text)  # doctest: +SKIP
        >>> [n.op for n in g.nodes]  # doctest: +SKIP
        ['placeholder', 'call_function', 'output']
    """
    parsed = (*parse_nodes(text), comment_sources(text))
    return Graph(stage=stage, text=text, derived=Derived().known(parsed))


def parse_nodes(text: str) -> tuple[tuple[Node, ...], str | None]:
    """(nodes, parse error) of a graph's text: what a graph's first read runs.

    A line outside what torch prints gives no nodes and an error naming that line.

    Example:
        >>> nodes, error = parse_nodes(gm.print_readable(print_output=False))  # doctest: +SKIP
    """
    with no_collection():
        try:
            return scan_nodes(text), None
        except GraphTextError as exc:
            return (), str(exc)


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """The garbage collector paused: a big graph's syntax tree (or its tens of thousands
    of nodes, linked) is hundreds of thousands of new objects, and allocating them sets
    off full collections that find nothing to free: a third of the time.

    Example:
        >>> with no_collection():
        ...     nodes, error = parse_nodes(text)  # doctest: +SKIP
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def comment_sources(text: str) -> dict[int, SourceLoc]:
    """The user source location each ``# File:`` comment of a graph's text names, by
    1-based line: the lines the parser reads node sources from (``Node.source``), which a
    view shows linked too.

    Example:
        >>> text = "x = 1\\n    # File: /m.py:7 in f, code: y = x.sin()\\ny = 2"
        >>> comment_sources(text)[2].line
        7
    """
    out: dict[int, SourceLoc] = {}
    # a source line is named again and again: each distinct comment line is read once
    seen: dict[str, SourceLoc | None] = {}
    lines = text.split("\n")
    for i in [i for i, line in enumerate(lines) if "File: " in line]:
        line = lines[i]
        if line not in seen:
            m = _FILE_COMMENT_LINE.match(line)
            seen[line] = None
            if m is not None:
                seen[line] = SourceLoc(
                    filename=m[1], line=int(m[2]), function=m[3], code=m[4].rstrip(" \t")
                )
        loc = seen[line]
        if loc is not None:
            out[i + 1] = loc
    return out


