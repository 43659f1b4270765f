"""Graph panes: nodes and edges for the built-in renderer, or an SVG from Graphviz.

A graph of at most ``DOT_MAX_NODES`` nodes is laid out by ``dot`` when it is on
``PATH``; anything else (no ``dot``, too many nodes, ``dot`` failing or timing out)
degrades to the built-in JavaScript renderer with a note saying why. Never raises.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

from compiler import Graph, Node

DOT_MAX_NODES = 400
DOT_TIMEOUT_S = 30.0
_LABEL_MAX = 48
_PARAM_OPS = ("placeholder", "get_attr")

_PARAM = re.compile(r"^l_self_modules_(?P<path>.+?)_(?:parameters|buffers)_")
_OLD_PARAM = re.compile(r"^l__self___(?P<path>\w+?)(?:_(?:weight|bias|running_mean|running_var))?$")


def src_key(loc: Any) -> str | None:
    """The stable source-line key ``file:line`` of a ``SourceLoc`` (None for None)."""
    if loc is None or not loc.filename or not loc.line:
        return None
    return f"{loc.filename}:{loc.line}"


def _param_path(node: Node) -> list[str] | None:
    """Module path from Dynamo's parameter names: ``l_self_modules_a_modules_0_...``."""
    for text in (node.name, node.target if node.op in ("get_attr", "call_module") else ""):
        text = text.lower() if text.startswith("L_") else text
        m = _PARAM.match(text)
        if m:
            return m["path"].split("_modules_")
        m = _OLD_PARAM.match(text)
        if m:
            return [m["path"]]
    return None


def group_paths(nodes: tuple[Node, ...], index: dict[tuple[str, str], int]) -> list[list[str]]:
    """A module-hierarchy path per node, for grouping large graphs.

    Nested graphs use ``Node.module``; parameters and the calls that read them use
    the module path in Dynamo's parameter names; other nodes group by the user
    function and source line they came from. Inputs and outputs stay ungrouped.
    """
    functions = {n.source.function for n in nodes if n.source is not None}
    paths: list[list[str]] = []
    for n in nodes:
        path = n.module.split(".") if n.module else _param_path(n)
        if path is None and n.op not in ("placeholder", "output"):
            for name in n.inputs:
                i = index.get((n.module, name))
                if i is not None and i < len(paths) and paths[i] and nodes[i].op in _PARAM_OPS:
                    path = paths[i]
                    break
        if path is None and n.source is not None and n.op not in ("placeholder", "output"):
            path = [f"line {n.source.line}"]
            if len(functions) > 1:
                path.insert(0, n.source.function or "?")
        paths.append(path or [])
    return paths


def node_index(graph: Graph) -> dict[tuple[str, str], int]:
    return {(n.module, n.name): i for i, n in enumerate(graph.nodes)}


def edges(graph: Graph, index: dict[tuple[str, str], int]) -> list[list[int]]:
    """``[input_index, node_index]`` for every input of every node."""
    out = []
    for i, n in enumerate(graph.nodes):
        for name in n.inputs:
            j = index.get((n.module, name), index.get(("", name)))
            if j is not None and j != i:
                out.append([j, i])
    return out


def _dot_string(text: str) -> str:
    """A DOT double-quoted string holding ``text`` literally (no escapes interpreted)."""
    text = " ".join(text.split("\n"))
    if len(text) > _LABEL_MAX:
        text = text[: _LABEL_MAX - 1] + "…"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_source(graph: Graph, edge_list: list[list[int]]) -> str:
    """DOT for ``graph``; node ``i`` gets ``id="n-i"`` so the front-end can find it."""
    out = [
        "digraph G {",
        '  graph [rankdir=TB, nodesep=0.2, ranksep=0.3, bgcolor="transparent"];',
        '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10, '
        'height=0.3, margin="0.08,0.03"];',
        "  edge [arrowsize=0.6];",
    ]
    for i, n in enumerate(graph.nodes):
        target = n.target.rsplit(".", 2)[-2] if n.target.startswith("torch.ops.") else n.target
        lines = [n.name]
        if n.op not in ("placeholder", "output", "get_attr") and target != n.name:
            lines.append(target)
        if n.meta:
            m = n.meta[0]
            lines.append(f"{m.dtype}[{', '.join(m.shape)}]")
        label = "\\n".join(_dot_string(s)[1:-1] for s in lines)
        op = re.sub(r"[^a-z_]", "", n.op)
        out.append(f'  n{i} [id="n-{i}", class="op-{op}", label="{label}"];')
    out.extend(f"  n{a} -> n{b};" for a, b in edge_list)
    out.append("}")
    return "\n".join(out)


def run_dot(source: str) -> tuple[str | None, str]:
    """(SVG text, note). The SVG is None when ``dot`` failed; the note says why."""
    exe = shutil.which("dot")
    if exe is None:
        return None, "built-in: dot not found"
    try:
        done = subprocess.run(
            [exe, "-Tsvg"],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=DOT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"built-in: dot failed ({type(exc).__name__}: {exc})"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"built-in: dot failed (exit {done.returncode}: {' '.join(err[:2])})"
    svg = done.stdout.decode("utf-8", "replace")
    start = svg.find("<svg")
    if start < 0:
        return None, "built-in: dot produced no SVG"
    return svg[start:], "Graphviz dot"


def graph_pane_data(
    graph: Graph,
    *,
    renderer: str,
    node_extra: Callable[[Node], dict[str, Any]],
) -> tuple[dict[str, Any], str | None]:
    """The pane dict for one graph, and the DOT source when dot should render it.

    ``renderer`` is ``auto`` (dot when available and small enough), ``dot`` or
    ``builtin``. The caller runs ``run_dot`` on the returned DOT source (possibly in
    parallel with other graphs) and passes the result to ``attach_svg``.
    """
    index = node_index(graph)
    edge_list = edges(graph, index)
    paths = group_paths(graph.nodes, index)
    nodes = []
    for i, n in enumerate(graph.nodes):
        nodes.append(
            {
                "name": n.name,
                "op": n.op,
                "target": n.target,
                "args": list(n.args),
                "kwargs": dict(n.kwargs),
                "meta": [
                    {
                        "dtype": m.dtype,
                        "shape": list(m.shape),
                        "stride": list(m.stride),
                        "device": m.device,
                    }
                    for m in n.meta
                ],
                "module": n.module,
                "line": n.line,
                "group": paths[i],
                "inputs": [],
                **node_extra(n),
            }
        )
    for n in nodes:
        n["users"] = []
    for a, b in edge_list:
        nodes[b]["inputs"].append(a)
        nodes[a]["users"].append(b)
    pane: dict[str, Any] = {
        "nodes": nodes,
        "svg": None,
        "renderer": "builtin",
        "renderer_note": "",
        "parse_error": graph.parse_error,
    }
    count = len(graph.nodes)
    dot = None
    if renderer == "builtin":
        pane["renderer_note"] = "built-in: requested"
    elif count == 0:
        pane["renderer_note"] = "built-in: the graph has no parsed nodes"
    elif renderer == "auto" and count > DOT_MAX_NODES:
        pane["renderer_note"] = f"built-in: {count:,} nodes is too many for dot"
    elif shutil.which("dot") is None:
        pane["renderer_note"] = "built-in: dot not found"
    else:
        dot = dot_source(graph, edge_list)
    return pane, dot


def attach_svg(pane: dict[str, Any], result: tuple[str | None, str]) -> None:
    svg, note = result
    pane["renderer_note"] = note
    if svg is not None:
        pane["svg"] = svg
        pane["renderer"] = "dot"
