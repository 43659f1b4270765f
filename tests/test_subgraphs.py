"""Higher-order ops link to the nested graphs they run, both ways, as torch built them.

Each program compiles once, under ``compiler.recording()``, with a backend that keeps
torch's own GraphModule: which nested module each higher-order op node runs is read from
that GraphModule (its ``get_attr`` arguments and submodules) and compared with what
``compiler.link.subgraphs`` reads off the graph text the explorer captured.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from compiler.link import ids
from compiler.link.subgraphs import callers, subgraph_calls

PANE = ids.compile_pane("dynamo_output_graph")


def _captured(fn, *args):
    """(our Exploration, torch's GraphModule of the first graph) from one compile."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    with compiler.recording() as rec:
        torch.compile(fn, backend=keep)(*args)
    return rec.exploration(), graphs[0]


def _torch_pairs(gm: torch.fx.GraphModule) -> list[tuple[str, str]]:
    """(op node, nested module) for every higher-order op of the top graph, from torch."""
    pairs = []
    submodules = dict(gm.named_children())
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.HigherOrderOperator):
            flat, _ = torch.utils._pytree.tree_flatten((node.args, node.kwargs))
            for arg in flat:
                if (
                    isinstance(arg, torch.fx.Node)
                    and arg.op == "get_attr"
                    and arg.target in submodules
                ):
                    pairs.append((node.name, str(arg.target)))
    return pairs


def _ours(exp) -> tuple:
    graph = exp.compiles[0].graphs["dynamo_output_graph"]
    assert graph.parse_error is None
    return subgraph_calls(PANE, graph.nodes), graph


def _check_against_torch(fn, *args):
    exp, gm = _captured(fn, *args)
    calls, graph = _ours(exp)
    expected = _torch_pairs(gm)
    assert expected, "torch built no higher-order op"
    assert [(c.node, c.module) for c in calls if not c.node_module] == expected
    for call in calls:  # the nested graph is in the captured text, with its nodes
        assert any(n.module == call.module for n in graph.nodes)
        assert call.id == ids.subgraph_id(PANE, call.module)
        assert call in callers(calls, call.module)
    return calls


def test_cond_links_its_node_to_both_branches():
    def f(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    calls = _check_against_torch(f, torch.randn(4))
    assert [(c.op, c.role) for c in calls] == [("cond", "true branch"), ("cond", "false branch")]


def test_while_loop_links_its_condition_and_body():
    from torch._higher_order_ops.while_loop import while_loop

    def f(x):
        return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (torch.tensor(0), x))

    calls = _check_against_torch(f, torch.randn(4))
    assert [c.role for c in calls] == ["condition", "body"]


def test_flex_attention_links_its_score_and_mask_functions():
    flex = pytest.importorskip("torch.nn.attention.flex_attention")

    def causal(b, h, q, kv):
        return q >= kv

    q = torch.randn(1, 2, 16, 8)
    mask = flex.create_block_mask(causal, None, None, 16, 16, device="cpu")

    def f(q, k, v):
        return flex.flex_attention(
            q, k, v, score_mod=lambda s, b, h, i, j: s + (i - j), block_mask=mask
        )

    calls = _check_against_torch(f, q, q, q)
    flex_calls = [c for c in calls if c.op == "flex_attention"]
    assert {c.role for c in flex_calls} == {"score function", "mask function"}


def test_a_nested_compile_region_is_one_graph_called_from_each_place_it_is_reused():
    @torch.compiler.nested_compile_region
    def block(x):
        return torch.relu(x) * 2

    def f(x):
        return block(block(x) + 1)

    calls = _check_against_torch(f, torch.randn(4))
    regions = {c.module for c in calls if c.op == "invoke_subgraph"}
    assert len(regions) == 1, "one compiled region"
    (region,) = regions
    assert len(callers(calls, region)) == 2, "called from both places"


def test_a_reused_region_stays_one_graph_in_the_forward_and_backward_graphs():
    @torch.compiler.nested_compile_region
    def block(x):
        return torch.relu(x) * 2

    def f(x):
        return block(block(x) + 1)

    exp = compiler.explore(f, torch.randn(4, requires_grad=True), backend="aot_eager")
    c = exp.compiles[0]
    for stage in ("aot_forward_graph", "aot_backward_graph"):
        nodes = c.graphs[stage].nodes
        calls = subgraph_calls(ids.compile_pane(stage), nodes)
        ops = [n for n in nodes if n.target == "torch.ops.higher_order.invoke_subgraph"]
        regions = {call.module for call in calls}
        assert len(regions) == 1, (stage, regions)
        assert len(callers(calls, regions.pop())) == len(ops) == 2
