"""The schema 2.0 ids and links, derived in compiler/link/derive.py, on real captures."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import programs
import pytest
import torch

import compiler
from compiler.link import module_stack
from compiler.model import Derived

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = sorted(
    [
        *(ROOT / "notebooks" / "recordings").glob("*.json"),
        *(ROOT / "tests/data/recordings").glob("*.json"),
    ]
)
RECORDINGS = [p for p in RECORDINGS if p.name != "environment.json"]


@pytest.fixture(scope="module")
def blocks():
    torch.manual_seed(0)
    model = programs.Blocks()
    x = torch.randn(4, 8, requires_grad=True)
    return model, compiler.explore(model, x)


def _kernel_ids(c):
    return [k.id for oc in c.output_code for k in oc.kernels]


@pytest.mark.slow
def test_kernel_ids_are_unique_and_start_with_their_output_code_key(blocks):
    _, exp = blocks
    (c,) = exp.compiles
    ids = _kernel_ids(c)
    assert ids and len(ids) == len(set(ids))
    for oc in c.output_code:
        assert oc.key
        for k in oc.kernels:
            assert k.id == f"{oc.key}/{k.name}"


@pytest.mark.slow
def test_graph_nodes_link_only_to_kernels_of_their_compile(blocks):
    _, exp = blocks
    (c,) = exp.compiles
    ids = set(_kernel_ids(c))
    graphs = [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
    linked = [kid for g in graphs for n in g.nodes for kid in n.kernels]
    assert linked and set(linked) <= ids
    dynamo = c.graphs["dynamo_output_graph"]
    linear = next(n for n in dynamo.nodes if n.target.endswith("linear"))
    # the matmul of a Linear runs as a library call on the CPU
    assert any("addmm" in kid or "mm" in kid for kid in linear.kernels)


@pytest.mark.slow
def test_live_module_stacks_name_real_submodules_outermost_first(blocks):
    model, exp = blocks
    names = dict(model.named_modules())
    dynamo = exp.compiles[0].graphs["dynamo_output_graph"]
    stacks = [n.module_stack for n in dynamo.nodes if n.module_stack]
    assert stacks
    for stack in stacks:
        assert all(path in names for path in stack)
        assert all(b.startswith(a + ".") for a, b in itertools.pairwise(stack))
    lin = next(n for n in dynamo.nodes if n.target.endswith("linear"))
    assert lin.module_stack == ("h.0", "h.0.lin")


@pytest.mark.slow
def test_trace_reconstruction_agrees_with_torch_for_nodes_that_read_parameters(blocks):
    _, exp = blocks
    dynamo = exp.compiles[0].graphs["dynamo_output_graph"]
    bare = tuple(dataclasses.replace(n, module_stack=()) for n in dynamo.nodes)
    from_text = module_stack.dynamo_stacks(
        dataclasses.replace(dynamo, derived=Derived().known((bare, None, {})))
    )
    reads_params = [
        n
        for n in dynamo.nodes
        if n.op == "call_function" and any("_parameters_" in i for i in n.inputs)
    ]
    assert reads_params
    for n in reads_params:
        assert from_text[n.name] == n.module_stack, n.name


@pytest.mark.slow
def test_aot_and_post_grad_nodes_inherit_module_stacks(blocks):
    _, exp = blocks
    c = exp.compiles[0]
    forward = c.graphs["aot_forward_graph"]
    assert any(n.module_stack and n.module_stack[0] == "h.1" for n in forward.nodes)
    post = next(oc for oc in c.output_code if oc.graph == "forward").graphs
    assert any(n.module_stack for g in post.values() for n in g.nodes)


@pytest.mark.slow
def test_bytecode_line_tables_point_into_the_compiled_function(blocks):
    _, exp = blocks
    b = exp.compiles[0].bytecode
    assert b is not None and b.original and b.source
    c = exp.compiles[0]
    last = c.first_line + b.source.count("\n")
    assert len(b.original_lines) == len(b.original.split("\n"))
    assert len(b.transformed_lines) == len(b.transformed.split("\n"))
    lines = {n for n in b.original_lines if n is not None}
    assert lines and all(c.first_line <= n <= last for n in lines)


def test_a_graph_break_makes_resume_functions_children_of_the_breaking_compile():
    def f(x):
        y = x * 2
        print("break")
        return y + 1

    exp = compiler.explore(f, torch.randn(3), backend="eager")
    by_key = {c.key: c for c in exp.compiles}
    assert len(by_key) == len(exp.compiles)
    resumes = [c for c in exp.compiles if c.is_resume]
    assert resumes
    for r in resumes:
        assert by_key[r.parent].graph_breaks


def test_a_recompile_hangs_under_the_compile_before_it():
    exp = compiler.explore(
        programs.shape_loop, lambda f: torch.compile(f, backend="eager", dynamic=False), wrap=False
    )
    recompiled = [c for c in exp.compiles if c.compile_id.frame_compile_id]
    assert recompiled
    for c in recompiled:
        prev = exp.compile(c.parent)
        assert prev.compile_id.frame_id == c.compile_id.frame_id
        assert prev.compile_id.frame_compile_id == c.compile_id.frame_compile_id - 1


SCHEMA_1_RECORDINGS = [p for p in RECORDINGS if '"schema_version": [1,' in p.read_text()[:40]]


def test_schema_1_recordings_are_kept_to_test_the_upgrade():
    assert len(SCHEMA_1_RECORDINGS) >= 2


@pytest.mark.parametrize("path", SCHEMA_1_RECORDINGS, ids=lambda p: p.name)
def test_schema_1_recordings_load_upgraded_with_ids_and_links(path):
    text = path.read_text()
    exp = compiler.Exploration.from_json(text)
    assert exp.compiles
    for c in exp.compiles:
        assert c.key == (str(c.compile_id) if c.rank is None else f"rank{c.rank}:{c.compile_id}")
        for oc in c.output_code:
            assert all(k.id == f"{oc.key}/{k.name}" for k in oc.kernels)
    assert compiler.Exploration.from_json(exp.to_json()) == exp


def test_recorded_triton_lowering_maps_lines_into_the_kernel_source():
    exp = compiler.Exploration.from_json(
        (ROOT / "tests/data/recordings/cuda_pointwise.json").read_text()
    )
    kernels = [k for c in exp.compiles for k in c.kernels() if k.variants]
    assert kernels
    for k in kernels:
        n_source = k.source.count("\n") + 1
        for v in k.variants:
            for s in v.stages:
                if not s.text:
                    continue
                assert len(s.source_lines) == len(s.text.split("\n"))
                assert all(n is None or 1 <= n <= n_source for n in s.source_lines)
                if s.stage in ("ttir", "ptx"):
                    # the kernel's loads carry locations in both
                    mapped = [n for n in s.source_lines if n is not None]
                    assert mapped, (k.name, s.stage)
                    assert any("tl.load" in k.source.split("\n")[n - 1] for n in mapped)


def test_an_autotune_winner_links_only_to_a_kernel_of_its_compile():
    exp = compiler.Exploration.from_json(
        (ROOT / "notebooks/recordings/matmul_max_autotune.json").read_text()
    )
    records = [(c, a) for c in exp.compiles for a in c.autotuning]
    assert records
    linked = [(c, a) for c, a in records if a.chosen_kernel is not None]
    assert linked
    for c, a in linked:
        kernel = next(k for k in c.kernels() if k.id == a.chosen_kernel)
        assert kernel.language == "extern" or kernel.name.startswith("triton_tem_")


@pytest.mark.slow
def test_joint_graph_nodes_link_to_kernels_only_through_same_op_nodes(blocks):
    _, exp = blocks
    c = exp.compiles[0]
    joint = c.graphs["aot_joint_graph"]
    ids = {k.id: oc.graph for oc in c.output_code for k in oc.kernels}
    linked = [n for n in joint.nodes if n.kernels]
    assert linked
    for n in linked:
        for kid in n.kernels:
            aot = c.graphs[f"aot_{ids[kid]}_graph"].node(n.name)
            assert aot is not None and aot.target == n.target and kid in aot.kernels


def test_a_graph_parses_once_through_its_cache_on_first_read_and_never_raises():
    from compiler.model import Derived, Graph, Node
    from compiler.model.graph import graph_later

    calls = []

    def parse():
        calls.append(1)
        return (Node(name="a", op="placeholder", target="a"),), None, {}

    cache = Derived()
    g = Graph(stage="dynamo_output_graph", text="...", derived=graph_later(cache, parse))
    assert calls == [] and cache.pending()["graph"] == 1
    assert [n.name for n in g.nodes] == ["a"] and g.parse_error is None
    assert g.nodes is g.nodes and calls == [1] and cache.counts["graph"] == 1
    # equality is the graph's fields: what torch printed, not what was parsed from it
    assert g == Graph(stage="dynamo_output_graph", text="...")

    def broken():
        raise RecursionError("too deep")

    bad = Graph(stage="aot_joint_graph", text="...", derived=graph_later(cache, broken))
    assert bad.nodes == () and bad.parse_error == "RecursionError: too deep"


def test_load_trace_parses_a_graph_only_when_its_nodes_are_read():
    exp = compiler.load_trace(ROOT / "tests/data/traces/graph_break_eager", strict=True)
    g = exp.compiles[0].graphs["dynamo_output_graph"]
    cache = g.derived.cache
    assert cache.counts["graph"] == 0 and cache.pending()["graph"] > 1
    assert g.nodes
    # Dynamo's graph, and no other (reading it computes no link through another graph)
    assert cache.counts["graph"] == 1


def test_linking_a_node_keeps_every_other_field_of_it():
    import dataclasses

    from compiler.model import Node, SourceLoc, TensorMeta
    from compiler.parse.graph_text import with_links

    values = {
        f.name: (f"v_{f.name}",) if "tuple" in str(f.type) else f"v_{f.name}"
        for f in dataclasses.fields(Node)
    }
    values.update(
        kwargs={"k": "v"},
        meta=(TensorMeta(dtype="f32", shape=("4",), stride=("1",), device="cpu"),),
        source=SourceLoc(filename="f.py", line=3),
        line=7,
        module="",  # links and stacks are by name in the top module
        module_stack=(),
    )
    n = Node(**values)
    linked = with_links((n,), {n.name: ("forward/k0",)}, {n.name: ("h", "h.0")})
    assert linked == (dataclasses.replace(n, kernels=("forward/k0",), module_stack=("h", "h.0")),)
    # a stack torch recorded is kept; a node of a nested module is left as it is
    recorded = dataclasses.replace(n, module_stack=("a",))
    assert with_links((recorded,), {}, {n.name: ("h",)})[0] is recorded
    nested = dataclasses.replace(n, module="sub")
    assert with_links((nested,), {n.name: ("k",)}, {n.name: ("h",)})[0] is nested
