"""Every text torch printed, for every torch version kept, read through the parse room.

``tests/data/formats/torch-<version>/`` holds small real texts (``make_fixtures.py``
wrote them on that torch, with what the programs were in ``manifest.json``). Each check
holds a reader's typed result against the text itself (Python's ``ast`` on a graph, the
lines of a guard tree) or against the program, never against a stored copy of our own
output: when a torch release changes a format, its new fixture fails here and one
reader in ``compiler/parse/`` changes.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from compiler.parse.dynamo_text import (
    guard_list,
    parse_graph_break,
    parse_recompile_reasons,
    parse_stack_trace,
    subject_of,
)
from compiler.parse.graph_text import parse_nodes
from compiler.parse.guards.recompiles import failed_guard, tensor_match_sizes
from compiler.parse.output_code import (
    aot_id,
    graph_kind,
    parse_schedule,
    provenance_maps,
    split_kernels,
)
from compiler.parse.words.breaks import break_words
from compiler.parse.words.names import (
    descriptors,
    input_index,
    module_path_of_placeholder,
    tangent_of,
)
from compiler.parse.words.per_process import normalized

FORMATS = Path(__file__).parent / "data" / "formats"
VERSIONS = sorted(p for p in FORMATS.glob("torch-*") if (p / "manifest.json").is_file())
GRAPHS = (
    "dynamo_output_graph.txt",
    "aot_joint_graph.txt",
    "aot_forward_graph.txt",
    "aot_backward_graph.txt",
    "inductor_post_grad_graph.forward.txt",
    "inductor_post_grad_graph.backward.txt",
)
DIRECTIONS = ("forward", "backward")


class Fixtures:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))

    def text(self, name: str) -> str | None:
        path = self.folder / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def needed(self, name: str) -> str:
        text = self.text(name)
        assert text, f"{self.folder.name}: {name} is missing (rerun make_fixtures.py)"
        return text


@pytest.fixture(params=VERSIONS, ids=[p.name for p in VERSIONS])
def fx(request: pytest.FixtureRequest) -> Fixtures:
    return Fixtures(request.param)


def test_fixtures_of_at_least_one_torch_are_kept():
    assert VERSIONS, f"no torch-*/manifest.json under {FORMATS}"


def test_every_fixture_the_manifest_names_is_there_and_small(fx: Fixtures):
    for name in fx.manifest["files"]:
        size = (fx.folder / name).stat().st_size
        assert 0 < size <= 48_000, f"{fx.folder.name}/{name}: {size} bytes"


def _forward(text: str) -> ast.FunctionDef:
    """The top-level ``forward`` of a printed graph, by Python's own parser."""
    cls = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef))
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")


def _assigned(fn: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """(names a statement computes, names only renamed or freed) in ``forward``."""
    computed: set[str] = set()
    renamed: set[str] = set()
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple):
            continue  # a joint graph's flattened inputs
        if isinstance(stmt, ast.AnnAssign) and stmt.value and isinstance(stmt.target, ast.Name):
            computed.add(stmt.target.id)
        elif isinstance(stmt, ast.Assign):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            plain = isinstance(stmt.value, ast.Name) or (
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None
            )
            (renamed if plain else computed).update(names)
    return computed, renamed


@pytest.mark.parametrize("name", GRAPHS)
def test_graph_texts_give_a_node_per_statement_and_placeholder(fx: Fixtures, name: str):
    text = fx.needed(name)
    nodes, error = parse_nodes(text)
    assert error is None, error
    fn = _forward(text)
    params = [a.arg for a in fn.args.args if a.arg != "self"]
    # a joint graph takes (primals, tangents) and declares the inputs they flatten into
    declared = [
        s.target.id
        for s in fn.body
        if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)
    ]
    flat = fn.body[0]
    if isinstance(flat, ast.Assign) and isinstance(flat.targets[0], ast.Tuple):
        # older torch: ``primals_1, ... = fx_pytree.tree_flatten_spec([primals, tangents], ...)``
        declared = [e.id for e in flat.targets[0].elts if isinstance(e, ast.Name)]
    params = declared or params
    placeholders = [n for n in nodes if n.op == "placeholder"]
    assert [n.target for n in placeholders] == params
    computed, _ = _assigned(fn)
    ops = {n.name for n in nodes if n.op not in ("placeholder", "output")}
    assert ops == computed
    assert [n.op for n in nodes].count("output") == 1
    # every computed node annotated carries the tensor metadata its annotation prints
    annotated = {
        s.target.id
        for s in fn.body
        if isinstance(s, ast.AnnAssign) and s.value and isinstance(s.target, ast.Name)
    }
    assert all(n.meta for n in nodes if n.name in annotated)
    # and the program's line, where a ``File:`` comment names it (backward nodes too)
    if "make_fixtures.py:" in text and name != "dynamo_output_graph.txt":
        lines = {n.source.line for n in nodes if n.source is not None}
        assert fx.manifest["forward_line"] in lines


def test_dynamo_placeholders_name_the_modules_of_the_parameters(fx: Fixtures):
    nodes, _ = parse_nodes(fx.needed("dynamo_output_graph.txt"))
    paths = {module_path_of_placeholder(n.target) for n in nodes if n.op == "placeholder"}
    paths.discard(None)
    assert paths == {p.rpartition(".")[0] for p in fx.manifest["parameters"]}


def test_aot_descriptors_name_the_graphs_inputs_and_outputs(fx: Fixtures):
    dynamo, _ = parse_nodes(fx.needed("dynamo_output_graph.txt"))
    n_inputs = sum(1 for n in dynamo if n.op == "placeholder")
    forward = fx.needed("aot_forward_graph.txt")
    if "AOTInput(" not in forward:
        pytest.skip(f"{fx.folder.name} prints no AOT descriptors")
    inputs, outputs = descriptors(forward)
    nodes, _ = parse_nodes(forward)
    names = {n.name for n in nodes}
    assert set(inputs) == {n.name for n in nodes if n.op == "placeholder"}
    assert all(0 <= input_index(d, n) < n_inputs for n, d in inputs.items())
    assert outputs and set(outputs.values()) <= names
    assert len(outputs) == forward.count("AOTOutput(")
    back_inputs, _ = descriptors(fx.needed("aot_backward_graph.txt"))
    tangents = [tangent_of(d) for d in back_inputs.values() if d.startswith("Tangent")]
    assert tangents and all(t in outputs for t in tangents)


def test_guard_trees_give_a_guard_per_tree_line(fx: Fixtures):
    tree = fx.needed("dynamo_cpp_guards_str.txt")
    guards = guard_list(tree)
    assert len(guards) == sum(1 for line in tree.split("\n") if "+- " in line)
    assert all(g.kind and g.line >= 1 for g in guards)
    sizes = [tensor_match_sizes(g.expr) for g in guards if g.kind == "TENSOR_MATCH"]
    x = [s for s in sizes if s and s[0] == "x"]
    assert x and x[0][1] == [str(n) for n in fx.manifest["input_size"]]
    subjects = {subject_of(g.expr) for g in guards if g.kind == "TENSOR_MATCH"}
    assert "L['x']" in subjects
    masked = normalized(tree)
    assert "0x" not in masked and "Guard latency = " not in masked.replace("Guard latency = #", "")


@pytest.mark.parametrize("label", ["explicit", "branch"])
def test_graph_break_reasons_give_the_line_and_the_cause(fx: Fixtures, label: str):
    gb = parse_graph_break(fx.needed(f"graph_break_{label}.txt"))
    assert gb.location is not None
    assert gb.location.filename.endswith("make_fixtures.py")
    assert gb.location.line == fx.manifest["break_lines"][label]
    assert gb.summary and gb.reason and gb.user_stack
    said = break_words(gb.summary, gb.reason)
    assert (said.explicit, said.data_dependent_branch) == (label == "explicit", label == "branch")
    for name in said.condition_nodes:
        assert f"{name} = " in gb.reason


def test_recompile_reasons_name_the_input_and_the_size_change(fx: Fixtures):
    payload = fx.needed("recompile_reasons.txt")
    reasons = parse_recompile_reasons(payload)
    # a JSON list of reasons, or (torch 2.13) one reason as plain text
    assert len(reasons) == (len(json.loads(payload)) if payload.startswith("[") else 1)
    expected = fx.manifest["recompile"]
    guard = failed_guard(reasons[0].reason)
    assert (guard.input, guard.what, guard.tensor) == (expected["input"], "size", True)
    assert guard.changes == (tuple(str(n) for n in expected["sizes"]),)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_output_code_gives_its_kernels_and_the_maps_link_them(fx: Fixtures, direction: str):
    code = fx.needed(f"inductor_output_code.{direction}.txt")
    assert aot_id(code) and graph_kind(aot_id(code)) in ("forward", "backward", "inference")
    kernels = split_kernels(code)
    defined = [ln for ln in code.split("\n") if " = async_compile." in ln]
    assert len(kernels) == len(defined) > 0
    assert all(k.name in code and k.source and k.first_line <= k.last_line for k in kernels)
    mappings = fx.text(f"inductor_provenance_tracking_node_mappings.{direction}.json")
    if mappings is None:
        return
    provenance = provenance_maps(json.loads(mappings))
    post, _ = parse_nodes(fx.needed(f"inductor_post_grad_graph.{direction}.txt"))
    post_names = {n.name for n in post}
    names = {k.name for k in kernels}
    for kernel, nodes in provenance.kernel_to_post.items():
        assert kernel in names or kernel.startswith("extern_kernels."), kernel
        assert set(nodes) <= post_names
    for node, kernels_of in provenance.post_to_kernel.items():
        assert node in post_names and all(node in provenance.kernel_to_post[k] for k in kernels_of)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_kernel_stack_traces_reach_the_programs_line(fx: Fixtures, direction: str):
    stacks = fx.text(f"inductor_provenance_tracking_kernel_stack_traces.{direction}.json")
    if stacks is None:
        pytest.skip(f"{fx.folder.name} logged no kernel stack traces for the {direction}")
    lines = {
        loc.line
        for traces in json.loads(stacks).values()
        for trace in traces
        for loc in parse_stack_trace(str(trace))
        if loc.filename.endswith("make_fixtures.py")
    }
    assert fx.manifest["forward_line"] in lines


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_the_fused_schedule_names_nodes_of_the_schedule_before_fusion(
    fx: Fixtures, direction: str
):
    pre = fx.text(f"ir_pre_fusion.{direction}.txt")
    post = fx.text(f"ir_post_fusion.{direction}.txt")
    if pre is None or post is None:
        pytest.skip(f"{fx.folder.name} logged no fusion IR for the {direction}")
    fused = parse_schedule(pre, post).fused
    assert fused
    for node in fused:
        assert node.name in post and node.kind
        assert all(m in pre for m in node.members)
