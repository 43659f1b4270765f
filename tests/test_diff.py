"""compiler.diff on real compiles: kernels, guards and nodes by stable identity."""

from __future__ import annotations

import linecache

import pytest
import torch

import compiler
from compiler.diff.identity import node_identities


def _function(source: str, name: str = "f"):
    """A function whose source lines are real (linecache), as a cell's would be."""
    filename = f"<diff-test-{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns: dict = {"torch": torch}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def _kernels(exp: compiler.Exploration) -> int:
    return sum(len(c.kernels()) for c in exp.compiles)


@pytest.mark.slow
def test_an_edit_that_adds_a_matmul_changes_the_kernel_count_and_the_summary_says_so():
    x = torch.randn(16, 16)
    a = compiler.explore(_function("def f(x):\n    return torch.relu(x) * 2\n"), x)
    b = compiler.explore(_function("def f(x):\n    return torch.relu(x @ x).sum(0) * x\n"), x)
    before, after = _kernels(a), _kernels(b)
    assert before != after
    d = compiler.diff(a, b)
    assert d.summary.startswith(f"{before} kernel{'s' * (before != 1)} -> {after}")
    k = d.compile(str(a.compiles[0].compile_id)).kernels
    assert k is not None and k.fusion_changed
    assert f"kernels: {before} -> {after}" in d.to_text()


def test_static_against_dynamic_names_the_changed_guard_on_the_input():
    f = _function("def f(x):\n    y = torch.relu(x)\n    return y.sum() + x.cos()\n")
    static = compiler.explore(f, torch.randn(8, 4), backend="aot_eager", dynamic=False)
    dynamic = compiler.explore(f, torch.randn(8, 4), backend="aot_eager", dynamic=True)
    d = compiler.diff(static, dynamic)
    assert "guard on L['x'] changed (size=[8, 4]" in d.summary
    assert "size=[None, None]" in d.summary
    assert "guard on L['x'].size()[0] added" in d.to_text()
    graph = d.compile("0/0").stage("dynamo_output_graph")
    assert graph is not None
    changed = {n.name for n in graph.nodes if n.status == "changed"}
    assert "l_x_" in changed and "y" in changed


def test_a_removed_line_reports_its_node_removed_and_an_edited_line_its_nodes_changed():
    a = compiler.explore(
        _function("def f(x):\n    y = torch.relu(x)\n    return y.sum() + x.cos()\n"),
        torch.randn(8), backend="aot_eager",
    )  # fmt: skip
    b = compiler.explore(
        _function("def f(x):\n    return x.sum() + x.cos()\n"), torch.randn(8), backend="aot_eager"
    )
    d = compiler.diff(a, b)
    assert d.summary.startswith("node y removed")
    assert "guard on G['torch'].relu removed" in d.summary
    graph = d.compile("0/0").stage("dynamo_output_graph")
    assert graph is not None
    # cos is the same node, paired although its line was edited: changed, not added+removed
    [cos] = [n for n in graph.nodes if n.name == "cos"]
    assert cos.status == "changed" and cos.detail.startswith("source line")


def test_node_identities_survive_a_line_inserted_above():
    plain = _function("def f(x):\n    y = torch.relu(x)\n    return y + 1\n")
    shifted = _function("def f(x):\n    # a comment shifts every line\n\n    y = torch.relu(x)\n"
                        "    return y + 1\n")  # fmt: skip
    a = compiler.explore(plain, torch.randn(4), backend="aot_eager")
    b = compiler.explore(shifted, torch.randn(4), backend="aot_eager")
    ga = a.compiles[0].graphs["dynamo_output_graph"]
    gb = b.compiles[0].graphs["dynamo_output_graph"]
    assert [n.source.line for n in ga.nodes if n.source] != [
        n.source.line for n in gb.nodes if n.source
    ]
    assert set(node_identities(ga).values()) == set(node_identities(gb).values())
    assert compiler.diff(a, b).compile("0/0").stage("dynamo_output_graph").nodes == ()


def test_a_compile_diffed_with_itself_has_no_change():
    exp = compiler.explore(lambda x: x.relu() + 1, torch.randn(4), backend="aot_eager")
    d = compiler.diff(exp.compiles[0], exp.compiles[0])
    assert not d.changed
    assert d.summary.startswith("no change")


def test_diff_refuses_an_exploration_against_a_compile():
    exp = compiler.explore(lambda x: x + 1, torch.randn(2), backend="eager")
    with pytest.raises(TypeError, match="compares two Explorations or two Compiles"):
        compiler.diff(exp, exp.compiles[0])
