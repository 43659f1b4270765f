"""Module stacks for post-grad graphs nodes that Inductor's provenance map does not name.

Inductor's provenance map (post-grad node -> Dynamo node) gives most forward nodes of a
post-grad graph their module stack, but not the graph's inputs (parameters, saved
tensors, tangents), not what post-grad passes created, and, on torch 2.13, nothing of the
backward graph. Two facts fill most of the rest:

1. **The AOT graph it came from.** A post-grad graph is its AOT graph (forward, backward
   or inference) after Inductor's passes, and keeps its node names. The AOT graph's
   stacks come from its input descriptors, source lines and dataflow
   (``compiler/link/aot_stacks.py``), so a node of the same name running the same op (or a
   placeholder of the same name: the same input) takes the AOT node's stack.
2. **Source lines and dataflow,** for nodes the passes created: the same vote among the
   stacks of the Dynamo nodes on the node's user line that ``aot_stacks`` runs, else the
   modules its inputs agree on.

Provenance stays first: what it names is kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.link import aot_stacks, module_stack
from compiler.model import Graph

Stack = tuple[str, ...]
Stacks = dict[str, Stack]


def from_aot(graph: Graph, aot: Graph, fixed: Mapping[str, Stack]) -> Stacks:
    """``fixed`` plus, for the nodes it lacks, the stack of the AOT node of the same name
    where that node is the same input or runs the same op (passes reuse names).

    Example:
        >>> from_aot(post_grad, aot_forward, {})["primals_2"]  # doctest: +SKIP
        ('transformer', 'transformer.wte')
    """
    out = dict(fixed)
    same = {n.name: n for n in aot.nodes if n.module_stack and n.module == ""}
    for n in graph.nodes:
        if n.name in out or n.module or n.op == "output":
            continue
        a = same.get(n.name)
        if a is not None and a.op == n.op and a.target == n.target:
            out[n.name] = a.module_stack
    return out


def post_grad_stacks(
    graph: Graph,
    fixed: Mapping[str, Stack],
    *,
    aot: Graph | None = None,
    index: aot_stacks.DynamoIndex | None = None,
) -> Stacks:
    """Stacks for the nodes of a post-grad graph (see the module doc): ``fixed`` (from
    provenance), then the AOT graph ``aot``'s stacks by name, then source lines and
    dataflow through ``index`` (the compile's Dynamo graph), else dataflow alone.

    Example:
        >>> post_grad_stacks(g, provenance_stacks, aot=aot_forward, index=idx)  # doctest: +SKIP
    """
    known = from_aot(graph, aot, fixed) if aot is not None else dict(fixed)
    if index is None:
        return module_stack.propagate(graph.nodes, known, frozenset())
    return aot_stacks.aot_stacks(graph, index, fixed=known)
