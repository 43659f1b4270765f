"""Module stacks of post-grad graphs (compiler/link/post_stacks.py) on a real GPT-2 training step.

A ``transformers`` GPT-2 built from a config (tiny widths, real structure) runs one
training step under Inductor. A custom post-grad pass keeps torch's own record of each
post-grad node's module (``node.meta["nn_module_stack"]``, ``fwd_nn_module_stack`` on
backward nodes) as Inductor hands the graph over; the stacks a trace would get (the same
compile with only the graph texts and provenance, no recorded stacks) are checked
against it. Counts are printed (``pytest -s``).
"""

from __future__ import annotations

import collections
import dataclasses
import re
from typing import Any

import programs
import pytest
import torch

import compiler
from compiler.link import derive as links
from compiler.link import module_stack
from compiler.model import Graph

pytest.importorskip(
    "transformers", reason="needs transformers: pip install transformers (torch pinned)"
)

N_LAYER = 3
_BLOCK = re.compile(r"^transformer\.h\.\d+$")


def _torch_post_grad_stacks() -> tuple[Any, list[dict[str, tuple[str, ...]]]]:
    """A post-grad pass that records each node's ``nn_module_stack`` and changes nothing."""
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

    seen: list[dict[str, tuple[str, ...]]] = []

    class Record(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            # backward nodes carry the stack of the forward op they differentiate
            seen.append(
                {
                    n.name: module_stack.module_paths(
                        n.meta.get("nn_module_stack") or n.meta.get("fwd_nn_module_stack") or {}
                    )
                    for n in graph.nodes
                }
            )

        def uuid(self) -> bytes:
            return get_hash_for_files((__file__,))

    return Record(), seen


@pytest.fixture(scope="module")
def recorded():
    step, ids = programs.gpt2_training_step(N_LAYER)
    model = next(c.cell_contents for c in step.__closure__ if hasattr(c.cell_contents, "lm_head"))

    def train_step() -> None:
        out = torch.compile(model)(ids, labels=ids)
        out.loss.backward()

    record, seen = _torch_post_grad_stacks()
    with torch._inductor.config.patch(post_grad_custom_post_pass=record):
        exp = compiler.explore(train_step, wrap=False)
    return exp, seen


def _as_trace(c: compiler.Compile) -> compiler.Compile:
    """``c`` as a TORCH_TRACE log holds it: graph texts and provenance, no stacks."""

    def bare(graphs: dict[str, Graph]) -> dict[str, Graph]:
        return {s: Graph(stage=s, text=g.text) for s, g in graphs.items()}

    outputs = tuple(dataclasses.replace(oc, graphs=bare(oc.graphs)) for oc in c.output_code)
    graphs = bare(c.graphs)
    bare = dataclasses.replace(c, graphs=graphs, output_code=outputs)
    return links.derive_compile(bare, c.key, c.parent)


def _block(stack: tuple[str, ...]) -> str | None:
    return next((p for p in stack if _BLOCK.match(p)), None)


def _post_grad_graphs(exp: compiler.Exploration):
    """(live graph, the same graph derived as from a trace) of every post-grad graph."""
    for c in exp.compiles:
        trace = _as_trace(c)
        for oc, toc in zip(c.output_code, trace.output_code, strict=True):
            if "inductor_post_grad_graph" in oc.graphs:
                yield oc.graphs["inductor_post_grad_graph"], toc.graphs["inductor_post_grad_graph"]


@pytest.mark.slow
def test_post_grad_nodes_of_a_trace_land_in_the_block_torch_recorded(recorded):
    exp, seen = recorded
    count: collections.Counter[str] = collections.Counter()
    for live, trace in _post_grad_graphs(exp):
        names = {n.name for n in live.nodes}
        truth = next((s for s in seen if set(s) == names), None)
        if truth is None:
            continue
        derived = {n.name: n.module_stack for n in trace.nodes}
        for n in live.nodes:
            want = _block(truth.get(n.name, ()))
            if want is None:
                continue
            got = _block(derived[n.name])
            count["torch names a block"] += 1
            count["same block"] += got == want
            count["no block"] += got is None
            assert got is None or got == want, (n.name, n.target, truth[n.name], derived[n.name])
    print(dict(count))
    assert count["torch names a block"] >= 50 * N_LAYER
    assert count["same block"] >= 0.95 * count["torch names a block"]


def _coverage(nodes) -> tuple[int, int]:
    nodes = [n for n in nodes if n.op != "output"]
    return sum(1 for n in nodes if n.module_stack), len(nodes)


@pytest.mark.slow
def test_post_grad_nodes_of_a_trace_have_a_stack_like_their_aot_graph(recorded):
    """Inputs and the nodes post-grad passes made get a stack too, not only the nodes
    Inductor's provenance names (86% of the nodes of a 12-layer GPT-2 training step)."""
    exp, _ = recorded
    inputs = 0
    for c in exp.compiles:
        trace = _as_trace(c)
        for oc in trace.output_code:
            post = oc.graphs["inductor_post_grad_graph"]
            aot = trace.graphs[f"aot_{oc.graph}_graph"]
            (has, total), (aot_has, aot_total) = _coverage(post.nodes), _coverage(aot.nodes)
            print(c.key, oc.key, f"post-grad {has}/{total}", f"aot {aot_has}/{aot_total}")
            assert has >= 0.98 * total * aot_has / aot_total
            inputs += sum(1 for n in post.nodes if n.op == "placeholder" and n.module_stack)
    assert inputs > 12 * N_LAYER
