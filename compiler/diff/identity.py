"""Stable node identities: the same node across two compiles of edited code.

FX names nodes by creation order (``add``, ``add_1``, ``add_6``), so a name says little
about which node of one compile is "the same" as a node of another: insert a ``relu``
and every later ``add`` may be renamed. A node's identity is built from what survives
an edit instead:

``op | target | module path | source line | #ordinal``

- ``op`` and ``target`` as torch.fx gives them (``call_function``,
  ``torch.ops.aten.relu.default``);
- the module path: the innermost entry of ``Node.module_stack``, else the nested
  module the node sits in (``Node.module``);
- the source line: the *text* of the user line the node came from (stripped), not its
  number, so that inserting a line above leaves identities alone; the number is the
  fallback where the text is unknown; empty for nodes with no user line (placeholders);
- the ordinal: the node's position among the nodes of the graph that share the four
  parts before it (``#0`` for the first ``aten.add`` made on that line, ``#1`` for the next).

Placeholders carry their target (``L_x_``, ``arg0_1``), which is as stable as the
function's signature. Two nodes that differ only in their line text (the user edited
that line) still pair up in ``compiler.diff``'s second matching pass.

Example:
    >>> import torch, compiler
    >>> from compiler.diff.identity import node_identities
    >>> exp = compiler.explore(lambda x: x.relu() + 1, torch.randn(4), backend="eager")
    >>> ids = node_identities(exp.compiles[0].graphs["dynamo_output_graph"])
    >>> ids["l_x_"]
    'placeholder|L_x_|||#0'
"""

from __future__ import annotations

from compiler.model import Graph, Node


def node_key(node: Node) -> str:
    """The graph-independent part of ``node``'s identity (without the ordinal)."""
    return "|".join((node.op, node.target, _module_path(node), _line_text(node)))


def loose_key(node: Node) -> str:
    """``node``'s identity without its source line: pairs a node whose line was edited."""
    return "|".join((node.op, node.target, _module_path(node)))


def node_identities(graph: Graph) -> dict[str, str]:
    """Each node's stable identity, keyed by ``qualified_name(node)``."""
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for node in graph.nodes:
        key = node_key(node)
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        out[qualified_name(node)] = f"{key}|#{ordinal}"
    return out


def qualified_name(node: Node) -> str:
    """The node's name, prefixed by its nested module where it has one (``sub.add``)."""
    return f"{node.module}.{node.name}" if node.module else node.name


def _module_path(node: Node) -> str:
    if node.module_stack:
        return node.module_stack[-1]
    return node.module


def _line_text(node: Node) -> str:
    if node.source is None:
        return ""
    code = " ".join(node.source.code.split())
    return code or f"line {node.source.line}"


__all__ = ["loose_key", "node_identities", "node_key", "qualified_name"]
