"""Module stacks of AOT graphs (compiler/link/aot_stacks.py) on real GPT-2 training steps.

A ``transformers`` GPT-2 built from a config (4 layers, tiny widths) runs one training step
under ``backend="aot_eager"`` with forward and backward compilers that keep the graph
modules torch hands them: their ``node.meta`` holds torch's own record of each node's
module (``nn_module_stack`` on forward nodes, ``fwd_nn_module_stack`` on backward nodes),
which the logged text omits. That record is what the stacks derived from the text are
checked against. Counts are printed (``pytest -s``).
"""

from __future__ import annotations

import collections
import functools
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import programs
import pytest
import torch

import compiler
from compiler.link import aot_stacks, module_stack

pytest.importorskip(
    "transformers", reason="needs transformers: pip install transformers (torch pinned)"
)

N_LAYER = 4
_BLOCK = re.compile(r"^transformer\.h\.\d+$")


def _record(fn: Any, *args: Any) -> tuple[compiler.Exploration, dict[str, list[Any]]]:
    """``explore(fn, *args)`` under aot_eager, with the graph modules AOT compiled."""
    from torch._dynamo.backends.debugging import aot_eager, boxed_nop

    modules: dict[str, list[torch.fx.GraphModule]] = {"forward": [], "backward": []}

    def keep(kind: str):
        def compile_(gm, inputs):
            modules[kind].append(gm)
            return boxed_nop(gm, inputs)

        return compile_

    backend = functools.partial(
        aot_eager, fw_compiler=keep("forward"), bw_compiler=keep("backward")
    )
    return compiler.explore(fn, *args, backend=backend), modules


@pytest.fixture(scope="module")
def recorded():
    step, ids = programs.gpt2_training_step(N_LAYER)
    return _record(step, ids)


def _block(stack: tuple[str, ...], pattern: re.Pattern[str] = _BLOCK) -> str | None:
    return next((p for p in stack if pattern.match(p)), None)


def _model_compile(exp: compiler.Exploration) -> compiler.Compile:
    joint = [c for c in exp.compiles if "aot_joint_graph" in c.graphs]
    return max(joint, key=lambda c: len(c.graphs["aot_joint_graph"].nodes))


def _torch_record(graph: compiler.Graph, modules: list[torch.fx.GraphModule], key: str):
    names = {n.name for n in graph.nodes}
    gm = next(m for m in modules if {n.name for n in m.graph.nodes} == names)
    return {n.name: module_stack.module_paths(n.meta.get(key) or {}) for n in gm.graph.nodes}


def _agreement(
    graph: compiler.Graph, truth: dict[str, tuple[str, ...]], pattern: re.Pattern[str] = _BLOCK
) -> collections.Counter:
    count: collections.Counter = collections.Counter()
    for n in graph.nodes:
        want = _block(truth.get(n.name, ()), pattern)
        if want is None:
            continue
        got = _block(n.module_stack, pattern)
        count["torch names a block"] += 1
        count["same block"] += got == want
        count["no block"] += got is None
        count["other block"] += got is not None and got != want
    return count


def _parameters(c: compiler.Compile, graph: compiler.Graph) -> dict[str, tuple[str, Any]]:
    """AOT placeholder -> (module path, Dynamo placeholder) for those that are parameters,
    through the descriptor's index into the Dynamo graph's placeholders."""
    dynamo = [n for n in c.graphs["dynamo_output_graph"].nodes if n.op == "placeholder"]
    inputs, _ = aot_stacks.descriptors(graph.text)
    out = {}
    for name, desc in inputs.items():
        m = re.fullmatch(r"PlainAOTInput\(idx=(\d+)\)", desc)
        if m:
            placeholder = dynamo[int(m[1])]
            path = module_stack.module_path_of_placeholder(placeholder.target)
            if path:
                out[name] = (path, placeholder)
    return out


def _check_parameters_and_readers(c: compiler.Compile, stage: str) -> collections.Counter:
    """Every parameter placeholder sits in its module (and has its Dynamo placeholder's
    shape); every node reading a parameter of block k sits in block k."""
    graph = c.graphs[stage]
    params = _parameters(c, graph)
    count: collections.Counter = collections.Counter()
    by_name = {n.name: n for n in graph.nodes}
    # the joint graph prints its placeholders' types apart from them: the forward has them
    forward = {n.name: n for n in c.graphs["aot_forward_graph"].nodes}
    for name, (path, placeholder) in params.items():
        node = by_name[name]
        meta = node.meta or forward[name].meta
        assert [m.shape for m in meta] == [m.shape for m in placeholder.meta], name
        assert node.module_stack == module_stack.stack_of_path(path), (name, path)
        count["parameter placeholders"] += 1
    for n in graph.nodes:
        blocks = {_block(module_stack.stack_of_path(params[i][0])) for i in n.inputs if i in params}
        blocks.discard(None)
        if n.op != "output" and len(blocks) == 1:
            count["nodes reading a block's parameter"] += 1
            assert _block(n.module_stack) in blocks, (n.name, n.module_stack, blocks)
    return count


def _coverage(c: compiler.Compile) -> dict[str, str]:
    out = {}
    for stage in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        nodes = [n for n in c.graphs[stage].nodes if n.op != "output"]
        out[stage] = f"{sum(1 for n in nodes if n.module_stack)}/{len(nodes)}"
    return out


def test_every_parameter_placeholder_of_the_joint_graph_lands_in_its_module(recorded):
    exp, _ = recorded
    c = _model_compile(exp)
    for stage in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        count = _check_parameters_and_readers(c, stage)
        print(stage, dict(count))
        # the backward graph holds only the parameters it reads
        if stage != "aot_backward_graph":
            assert count["parameter placeholders"] >= 12 * N_LAYER


def test_forward_nodes_land_in_the_block_torch_recorded(recorded):
    exp, modules = recorded
    c = _model_compile(exp)
    graph = c.graphs["aot_forward_graph"]
    count = _agreement(graph, _torch_record(graph, modules["forward"], "nn_module_stack"))
    print("aot_forward_graph", dict(count), _coverage(c))
    assert count["other block"] == 0
    assert count["same block"] >= 0.95 * count["torch names a block"]


def test_backward_nodes_land_in_the_block_of_the_forward_op_torch_recorded(recorded):
    exp, modules = recorded
    c = _model_compile(exp)
    graph = c.graphs["aot_backward_graph"]
    count = _agreement(graph, _torch_record(graph, modules["backward"], "fwd_nn_module_stack"))
    print("aot_backward_graph", dict(count))
    assert count["other block"] == 0
    assert count["same block"] >= 0.95 * count["torch names a block"]


def test_most_joint_graph_nodes_have_a_stack_and_every_block_its_share(recorded):
    exp, _ = recorded
    c = _model_compile(exp)
    nodes = [n for n in c.graphs["aot_joint_graph"].nodes if n.op != "output"]
    per_block = collections.Counter(_block(n.module_stack) for n in nodes)
    print("aot_joint_graph", _coverage(c), dict(per_block))
    assert sum(1 for n in nodes if n.module_stack) >= 0.95 * len(nodes)
    blocks = [per_block[f"transformer.h.{k}"] for k in range(N_LAYER)]
    # the blocks are the same code, so each holds about as many nodes
    assert min(blocks) >= 0.9 * max(blocks) > 0


def test_compiles_outside_any_module_get_no_stacks(recorded):
    exp, _ = recorded
    outside = [
        c
        for c in exp.compiles
        if "dynamo_output_graph" in c.graphs
        and not any(n.module_stack for n in c.graphs["dynamo_output_graph"].nodes)
    ]
    assert outside
    for c in outside:
        for stage, g in c.graphs.items():
            assert not any(n.module_stack for n in g.nodes), (c.key, stage)


class TwoLinears(torch.nn.Module):
    """Two modules whose ops come from the same source line (``nn.Linear.forward``)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)).sum()


def test_where_neighbours_disagree_a_node_gets_no_module_rather_than_the_wrong_one():
    torch.manual_seed(0)
    model = TwoLinears()

    def step(x: torch.Tensor) -> None:
        model(x).backward()

    exp, modules = _record(step, torch.randn(2, 4, requires_grad=True))
    c = _model_compile(exp)
    top = re.compile(r"^(a|b)$")
    for stage, kind, key in (
        ("aot_forward_graph", "forward", "nn_module_stack"),
        ("aot_backward_graph", "backward", "fwd_nn_module_stack"),
    ):
        graph = c.graphs[stage]
        count = _agreement(graph, _torch_record(graph, modules[kind], key), top)
        print(stage, dict(count))
        assert count["other block"] == 0
        assert count["same block"] > 0


_TRACED = textwrap.dedent(
    """
    import sys, torch
    import torch._inductor.config as ic, torch._functorch.config as fc
    sys.path.insert(0, {tests!r})
    import test_aot_stacks as t
    ic.trace.provenance_tracking_level = 1
    fc.enable_autograd_cache = False
    step, ids = t.programs.gpt2_training_step(t.N_LAYER)
    torch.compile(step, backend="aot_eager")(ids)
    """
)


def test_a_trace_puts_aot_nodes_in_the_blocks_live_capture_does(recorded, tmp_path, subprocess_env):
    out = tmp_path / "trace"
    code = _TRACED.format(tests=str(Path(__file__).parent))
    env = dict(subprocess_env, TORCH_TRACE=str(out))
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    traced = _model_compile(compiler.load_trace(out))
    live = _model_compile(recorded[0])
    count: collections.Counter = collections.Counter()
    for stage in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        _check_parameters_and_readers(traced, stage)
        live_blocks = {n.name: _block(n.module_stack) for n in live.graphs[stage].nodes}
        for n in traced.graphs[stage].nodes:
            want = live_blocks.get(n.name)
            if want is not None:
                count["live names a block"] += 1
                count["same block"] += _block(n.module_stack) == want
    print("trace", _coverage(traced), dict(count))
    assert count["same block"] >= 0.95 * count["live names a block"] > 0


@pytest.mark.slow
def test_an_inductor_training_step_puts_placeholders_and_backward_nodes_in_their_blocks(
    gpt2_training_inductor,
):
    c = _model_compile(gpt2_training_inductor)  # a 2-layer GPT-2 (tests/conftest.py)
    for stage in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        count = _check_parameters_and_readers(c, stage)
        print("inductor", stage, dict(count))
    print("inductor", _coverage(c))
    backward = [n for n in c.graphs["aot_backward_graph"].nodes if n.op != "output"]
    assert sum(1 for n in backward if n.module_stack) >= 0.95 * len(backward)
