"""Higher-order ops and the nested graphs they run, linked both ways.

``torch.cond`` runs one of two branch graphs, ``while_loop`` a condition and a body,
``flex_attention`` a score function and a mask function, ``invoke_subgraph`` (regional
compilation, ``torch.compiler.nested_compile_region``) one compiled region, possibly from
many call sites. torch prints each nested graph as a nested module of the graph text
(``class cond_true_0(torch.nn.Module)``) and the op's node reads it through a
``get_attr`` node (``cond_true_0 = self.cond_true_0``). ``subgraph_calls`` reads those
facts off the parsed nodes: for each higher-order op node, which nested graph it runs in
which role, with the nested graph's id (``ids.subgraph_id``). ``callers`` goes the other
way: the op nodes that run one nested graph (an ``invoke_subgraph`` region reused twice
has two).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compiler.link import ids
from compiler.model import Node

_HIGHER_ORDER = "torch.ops.higher_order."

# the role of each nested-graph argument, in argument order, per op (torch's signatures:
# cond(pred, true_fn, false_fn, operands), while_loop(cond_fn, body_fn, ...),
# flex_attention(q, k, v, score_mod, block_mask(..., mask_mod), ...),
# invoke_subgraph(subgraph, identifier, *operands))
_ROLES = {
    "cond": ("true branch", "false branch"),
    "while_loop": ("condition", "body"),
    "flex_attention": ("score function", "mask function"),
    "flex_attention_backward": ("score function", "score gradient", "mask function"),
    "invoke_subgraph": ("region",),
    "map_impl": ("body",),
    "scan": ("combine function",),
    "associative_scan": ("combine function",),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class SubgraphCall:
    """One higher-order op node running one nested graph.

    ``node``/``node_module``: the op's node and the nested module it sits in ('' at the
    top level). ``op``: the higher-order op (``cond``, ``while_loop``, ...). ``role``:
    what the nested graph is to the op (``true branch``, ``body``, ``region``, ...).
    ``module``: the nested module's name in the graph text; ``id`` its id.
    """

    node: str
    node_module: str
    op: str
    role: str
    module: str
    id: ids.SubgraphId


def subgraph_calls(pane: ids.PaneId, nodes: Iterable[Node]) -> tuple[SubgraphCall, ...]:
    """Every (higher-order op node, nested graph) pair of one graph, in node order.

    Example:
        >>> from compiler.model import Node
        >>> nodes = [
        ...     Node(name="t", op="get_attr", target="cond_true_0"),
        ...     Node(name="f", op="get_attr", target="cond_false_0"),
        ...     Node(name="cond", op="call_function", target="torch.ops.higher_order.cond",
        ...          inputs=("gt", "t", "f", "x")),
        ...     Node(name="sin", op="call_method", target="sin", module="cond_true_0"),
        ...     Node(name="cos", op="call_method", target="cos", module="cond_false_0"),
        ... ]
        >>> [(c.node, c.role, c.module) for c in subgraph_calls("g", nodes)]
        [('cond', 'true branch', 'cond_true_0'), ('cond', 'false branch', 'cond_false_0')]
    """
    nodes = list(nodes)
    modules = {n.module for n in nodes if n.module}
    # a get_attr node reads a nested module by its attribute name (its target); a
    # region reused at a second call site is read through a second get_attr node
    attrs = {
        (n.module, n.name): n.target for n in nodes if n.op == "get_attr" and n.target in modules
    }
    calls = []
    for n in nodes:
        if n.op != "call_function" or not n.target.startswith(_HIGHER_ORDER):
            continue
        op = n.target[len(_HIGHER_ORDER) :]
        run = [attrs[(n.module, i)] for i in n.inputs if (n.module, i) in attrs]
        roles = _ROLES.get(op, ())
        for k, module in enumerate(run):
            role = roles[k] if k < len(roles) else _role_from_name(module)
            calls.append(
                SubgraphCall(
                    node=n.name,
                    node_module=n.module,
                    op=op,
                    role=role,
                    module=module,
                    id=ids.subgraph_id(pane, module),
                )
            )
    return tuple(calls)


def callers(calls: Iterable[SubgraphCall], module: str) -> tuple[SubgraphCall, ...]:
    """The op nodes that run nested graph ``module``: more than one where a compiled
    region is reused."""
    return tuple(c for c in calls if c.module == module)


def _role_from_name(module: str) -> str:
    if "mask" in module:
        return "mask function"
    if "score" in module:
        return "score function"
    return "subgraph"
