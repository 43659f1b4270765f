"""explorer.panes on real captures: the index, the panes, their links, the verbatim texts,
and the Python-to-JS contract (the generated JSDoc typedefs)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import programs
import pytest
import torch
from conftest import built_view, recorded_key

import compiler
from compiler.link.ids import stage_ref
from explorer._static import static_text
from explorer.export import to_html
from explorer.panes import (
    PaneNotFound,
    build_index,
    build_pane,
    kept_selection,
    pane_json,
    typedefs,
)
from explorer.panes.index_types import Selection
from explorer.panes.labels import STAGE_LABELS

RECORDING = Path(__file__).parent / "data" / "recordings" / "cuda_pointwise.json"
EVIL = programs.MARKUP
REGENERATE = (
    "python -c \"from explorer.panes import typedefs; print(typedefs(), end='')\" "
    "> explorer/static/panes/typedefs.js (and typedefs('costs') > .../typedefs_costs.js)"
)


def _key(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(fn)}:{first + offset}"
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def _pane(view: dict, pane_id: str, compile_index: int = 0) -> dict:
    panes = view["compiles"][compile_index]["panes"]
    found = [p for p in panes if p["id"] == pane_id]
    assert found, f"no pane {pane_id}; panes: {[p['id'] for p in panes]}"
    return found[0]


def _nodes(pane: dict) -> list[dict]:
    """A graph pane's nodes, one dict each, their shared values looked up in the pane's
    tables (what the browser's ``graphView`` does)."""
    cols = pane["nodes"]
    users: list[list[int]] = [[] for _ in cols["name"]]
    for i, inputs in enumerate(cols["inputs"]):
        for j in inputs:
            users[j].append(i)
    out = []
    for i in range(len(cols["name"])):
        loc = pane["sources"][cols["source"][i]] if cols["source"][i] is not None else None
        out.append(
            {
                **{k: cols[k][i] for k in ("name", "inputs", "line")},
                "users": users[i],
                "op": pane["ops"][cols["op"][i]],
                "target": pane["targets"][cols["target"][i]],
                "meta": pane["metas"][cols["meta"][i]],
                "module_stack": pane["stacks"][cols["module_stack"][i]],
                "kernels": pane["kernel_sets"][cols["kernels"][i]],
                "src": loc["src"] if loc else None,
                "function": loc["function"] if loc else "",
                "code": loc["code"] if loc else "",
            }
        )
    return out


def _node(pane: dict, name: str) -> dict:
    return next(n for n in _nodes(pane) if n["name"] == name)


def _assert_texts_are_verbatim(exp: compiler.Exploration, view: dict) -> None:
    """Every text a pane carries is exactly what torch emitted, with one entry per line
    in its line tables."""
    checked = 0
    for c, cv in zip(exp.compiles, view["compiles"], strict=True):
        ocs = {oc.key: oc for oc in c.output_code}
        for pane in cv["panes"]:
            ref = stage_ref(c, pane["id"])  # the compiler's own account of the id
            if pane["kind"] == "graph":
                graph = ocs[ref.output].graphs[ref.stage] if ref.output else c.graphs[ref.stage]
                assert pane["text"] == graph.text, pane["id"]
                n = graph.text.count("\n") + 1
                assert all(0 < line <= n for line, _ in pane["file_comments"])
                assert all(0 < line <= n for line in pane["nodes"]["line"])
                assert all(len(col) == len(graph.nodes) for col in pane["nodes"].values())
                checked += 1
            elif pane["kind"] == "output_code":
                oc = ocs[ref.output]
                assert pane["text"] == oc.text
                n = oc.text.count("\n") + 1
                for k in pane["kernels"]:
                    assert 0 <= k["first_line"] <= k["last_line"] <= n
                    assert all(0 < line <= n for line in k["call_lines"])
                checked += 1
            elif pane["id"] == "bytecode":
                b = c.bytecode
                texts = [t for t in (b.original, b.transformed) if t is not None]
                texts.append(b.decompiled or "")
                assert [blk["text"] for blk in pane["blocks"]] == texts
                checked += 1
            elif pane["id"] == "dynamo_cpp_guards_str":
                assert pane["blocks"][0]["text"] == c.guards.tree
                checked += 1
    assert checked


def test_pointwise_with_aot_eager_shows_dynamo_and_aot_panes_linked_to_source_lines():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="aot_eager")
    view = built_view(exp)
    ids = [p["id"] for p in view["compiles"][0]["panes"]]
    assert ids[:3] == ["bytecode", "dynamo_output_graph", "dynamo_cpp_guards_str"]
    assert "aot_inference_graph" in ids and ids[-1] == "compilation_metrics"
    assert all(p["label"] == STAGE_LABELS[p["stage"]] for p in view["compiles"][0]["panes"])
    sin_line = _key(programs.pointwise, "torch.sin(x)")
    dynamo = _pane(view, "dynamo_output_graph")
    aten = _pane(view, "aot_inference_graph")
    assert _node(dynamo, "sin")["src"] == sin_line
    assert _node(aten, "sin")["target"] == "torch.ops.aten.sin.default"
    assert _node(aten, "sin")["src"] == sin_line
    assert sin_line in view["src_keys"]
    # each node's line of the graph text is the line that names it (a Dynamo placeholder
    # by its target: `l_x_ = L_x_` renames the parameter `L_x_`; the output is `return`)
    lines = dynamo["text"].split("\n")
    for n in _nodes(dynamo):
        named = "return" if n["op"] == "output" else n["name"]
        assert named in lines[n["line"] - 1] or n["target"] in lines[n["line"] - 1]
    # the bytecode lines of that source line carry its key (Bytecode.original_lines)
    original = _pane(view, "bytecode")["blocks"][0]
    marked = [
        line
        for line, src in zip(original["text"].split("\n"), original["line_src"], strict=True)
        if src == sin_line
    ]
    assert any("LOAD_GLOBAL" in line for line in marked)
    # the source pane has the real text of that line
    files = {f["filename"]: f for f in view["sources"]}
    entry = files[inspect.getsourcefile(programs.pointwise)]
    assert entry["available"] and not entry["note"]
    shown = {w["start"] + i: line for w in entry["windows"] for i, line in enumerate(w["lines"])}
    assert "torch.sin(x)" in shown[int(sin_line.rsplit(":", 1)[1])]
    _assert_texts_are_verbatim(exp, view)
    assert json.loads(json.dumps(view)) == view


def test_a_graph_pane_links_each_file_comment_to_the_source_line_it_names():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="aot_eager")
    for stage in ("dynamo_output_graph", "aot_inference_graph"):
        pane = pane_json(build_pane(exp, exp.compiles[0].key, stage))
        lines = pane["text"].split("\n")
        comments = [i + 1 for i, ln in enumerate(lines) if ln.lstrip().startswith("# File: ")]
        assert comments and [line for line, _ in pane["file_comments"]] == comments, stage
        for line, j in pane["file_comments"]:
            ref = pane["sources"][j]
            named = lines[line - 1].split("# File: ", 1)[1].split(" in ", 1)[0]
            assert ref["src"] == named and lines[line - 1].endswith(f"code: {ref['code']}")
            # the node under the comment came from the line it names
            node = pane["nodes"]["line"].index(line + 1)
            assert pane["nodes"]["source"][node] == j
        # a location is stored once, however many lines and nodes name it
        assert len({json.dumps(r) for r in pane["sources"]}) == len(pane["sources"])


def test_the_index_builds_no_pane_and_each_pane_is_built_on_request():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="aot_eager")
    index = build_index(exp)
    c = index.compiles[0]
    assert c.key == exp.compiles[0].key and index.default_selection.compile == c.key
    refs = {p.id: p for p in c.panes}
    graph = build_pane(exp, c.key, "aot_inference_graph")
    assert graph.kind == refs["aot_inference_graph"].kind == "graph"
    assert graph.label == refs["aot_inference_graph"].label
    with pytest.raises(PaneNotFound, match="compile 0/0 has no pane 'nope'"):
        build_pane(exp, c.key, "nope")
    with pytest.raises(PaneNotFound, match="no compile '9/9' in this exploration"):
        build_pane(exp, "9/9", "bytecode")
    # what opens is decided here, once, and carried in the index: each compile's default
    # pane, the default selection, and what a new version keeps of the old selection
    assert c.default_stage == "dynamo_output_graph"
    problem = any(f.severity == "problem" for f in exp.findings())
    assert index.default_selection.stage == ("findings" if problem else c.default_stage)
    old = {"compile": c.key, "stage": "aot_inference_graph", "node": "sin", "src": "x:1"}
    assert kept_selection(index, {**old, "kernel": "k"}, lambda *_: True) == Selection(
        compile=c.key, stage="aot_inference_graph", node="sin"
    )
    moved = kept_selection(index, {**old, "stage": "ttir"}, lambda *_: True)
    assert (moved.stage, moved.node) == (c.default_stage, None)
    assert kept_selection(index, {"compile": "9/9"}, lambda *_: True) == index.default_selection


@pytest.mark.slow
def test_inductor_panes_link_dynamo_node_post_grad_node_and_kernel_of_one_source_line():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4))
    view = built_view(exp)
    ids = [p["id"] for p in view["compiles"][0]["panes"]]
    for pane_id in (
        "inference/inductor_post_grad_graph",
        "inference/ir_post_fusion",
        "inference/inductor_output_code",
    ):
        assert pane_id in ids
    sin_line = _key(programs.pointwise, "torch.sin(x)")
    code = _pane(view, "inference/inductor_output_code")
    (kernel,) = code["kernels"]
    assert kernel["language"] == "cpp" and sin_line in kernel["src"]
    assert kernel["id"] == exp.compiles[0].kernels()[0].id
    assert kernel["id"] in _node(_pane(view, "dynamo_output_graph"), "sin")["kernels"]
    post = _node(_pane(view, "inference/inductor_post_grad_graph"), "sin")
    assert post["src"] == sin_line and kernel["id"] in post["kernels"]
    # the kernel's lines hold its source (the browser marks them as its, and as C++)
    first, last = kernel["first_line"], kernel["last_line"]
    body = "\n".join(code["text"].split("\n")[first : last - 1])
    assert body == exp.compiles[0].kernels()[0].source
    _assert_texts_are_verbatim(exp, view)
    json.dumps(view)


def test_gpu_recording_shows_the_triton_kernel_linked_to_its_source_lines():
    exp = compiler.Exploration.from_json(RECORDING.read_text())
    view = built_view(exp)
    code = _pane(view, "inference/inductor_output_code")
    (kernel,) = code["kernels"]
    assert kernel["language"] == "triton"
    sin_line = recorded_key(exp, "torch.sin(x)")
    assert sin_line in kernel["src"]
    assert kernel["id"] in _node(_pane(view, "dynamo_output_graph"), "sin")["kernels"]
    body = code["text"].split("\n")[kernel["first_line"] : kernel["last_line"] - 1]
    assert "@triton.jit" in body
    _assert_texts_are_verbatim(exp, view)


def test_graph_break_puts_the_resume_function_under_the_breaking_compile():
    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="eager")
    view = built_view(exp)
    first, resume = view["compiles"]
    assert first["markers"] == ["graph_break"] and first["parent"] is None
    assert resume["is_resume"] and resume["parent"] == first["key"]
    breaks = _pane(view, "dynamo_graph_break_reason")
    if_line = _key(programs.data_dependent, "if x.sum() > 0")
    assert breaks["items"][0]["src"] == if_line
    # only user frames are linked, never the capture wrapper's own
    for frame in breaks["items"][0]["user_stack"]:
        assert frame["src"] is None or "compiler/capture/explore.py" not in frame["src"]
    _assert_texts_are_verbatim(exp, view)


def test_recompiles_hang_under_the_compile_they_replace():
    exp = compiler.explore(
        programs.shape_loop, lambda f: torch.compile(f, backend="eager", dynamic=False), wrap=False
    )
    view = built_view(exp)
    parents = {c["key"]: c["parent"] for c in view["compiles"]}
    assert parents == {"0/0": None, "0/1": "0/0", "0/2": "0/1"}
    assert "recompile" in view["compiles"][1]["markers"]
    assert _pane(view, "recompile_reasons", 1)["items"]


def test_graph_nodes_carry_the_module_stack_the_compiler_recorded():
    exp = compiler.explore(programs.FeaturePyramid(), torch.randn(1, 3, 8, 8), backend="eager")
    pane = build_pane(exp, exp.compiles[0].key, "dynamo_output_graph")
    graph = exp.compiles[0].graphs["dynamo_output_graph"]
    stacks = [pane.stacks[j] for j in pane.nodes.module_stack]
    assert stacks == [n.module_stack for n in graph.nodes]
    conv = stacks[pane.nodes.name.index("conv2d")]
    assert conv and conv[-1] == "c1"
    # each distinct stack is stored once
    assert len(set(pane.stacks)) == len(pane.stacks) < len(stacks)
    # inputs and users are indices of the same edges the graph names
    names = pane.nodes.name
    for inputs, g in zip(pane.nodes.inputs, graph.nodes, strict=True):
        assert [names[i] for i in inputs] == [s for s in g.inputs if s != g.name]


def test_markup_in_user_code_stays_plain_text_in_the_panes_and_the_html(tmp_path):
    module = programs.markup_program(tmp_path)
    exp = compiler.explore(module.evil, torch.randn(4), backend="aot_eager")
    view = built_view(exp)
    node = _node(_pane(view, "dynamo_output_graph"), "sin")
    assert node["code"].endswith(f"# </script>{EVIL}")
    assert "onerror=alert(1)" in json.dumps(view["sources"])
    page = to_html(exp)
    assert "<img" not in page and "</script><img" not in page
    assert page.count("</script>") == 3  # the two JSON elements' and the module's own
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in page


def test_the_committed_typedefs_match_the_pane_classes():
    committed = static_text("panes/typedefs.js")
    assert static_text("panes/typedefs_costs.js") == typedefs("costs"), REGENERATE
    assert committed == typedefs(), (
        "explorer/static/panes/typedefs.js is out of date with explorer/panes/types.py; "
        f"regenerate it with: {REGENERATE}"
    )
    for kind in ("GraphPane", "OutputCodePane", "FindingsPane", "Index"):
        assert f"@typedef {{object}} {kind}" in committed


def test_every_pane_of_a_capture_has_the_fields_its_typedef_names():
    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="aot_eager")
    text = typedefs() + typedefs("costs")
    for c in build_index(exp).compiles:
        for ref in c.panes:
            data = pane_json(build_pane(exp, c.key, ref.id))
            block = text.split(
                f"@typedef {{object}} {type(build_pane(exp, c.key, ref.id)).__name__}\n"
            )[1]
            props = [
                ln.split()[-1] for ln in block.split("*/")[0].splitlines() if "@property" in ln
            ]
            assert sorted(data) == sorted(props), ref.id


def test_the_index_says_which_output_code_pane_shows_each_kernel():
    recording = Path(__file__).parent.parent / "notebooks" / "recordings" / "training_step.json"
    exp = compiler.Exploration.from_json(recording.read_text())
    view = built_view(exp)
    checked = 0
    for c, cv in zip(exp.compiles, view["compiles"], strict=True):
        assert set(cv["kernels"]) == {k.id for k in c.kernels()}
        panes = {p["id"]: p for p in cv["panes"]}
        for kid, ref in cv["kernels"].items():
            shown = panes[ref["pane"]]
            assert shown["kind"] == "output_code"
            (info,) = [k for k in shown["kernels"] if k["id"] == kid]
            assert info["name"] == ref["name"]
            checked += 1
    # a training step has forward and backward output codes: kernels of both are mapped
    shown_in = {ref["pane"] for cv in view["compiles"] for ref in cv["kernels"].values()}
    assert checked and len(shown_in) >= 2


def test_a_graph_pane_links_each_higher_order_op_to_its_nested_graphs_and_back():
    def f(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    exp = compiler.explore(f, torch.randn(4), backend="eager")
    key = str(exp.compiles[0].compile_id)
    pane = build_pane(exp, key, "dynamo_output_graph")
    names, targets = pane.nodes.name, [pane.targets[t] for t in pane.nodes.target]
    graph = exp.compiles[0].graphs["dynamo_output_graph"]
    assert [(s.role, s.module) for s in pane.subgraphs] == [
        ("true branch", "cond_true_0"),
        ("false branch", "cond_false_0"),
    ]
    for link in pane.subgraphs:
        assert targets[link.caller] == "torch.ops.higher_order.cond"
        nested = [i for i, n in enumerate(graph.nodes) if n.module == link.module]
        assert (link.first, link.last) == (nested[0], nested[-1])
        assert names[link.first] == graph.nodes[nested[0]].name
        assert link.id == f"dynamo_output_graph#{link.module}"


_KINDS_IMPORTED = r"""
import json, sys
import compiler
from explorer.export import to_html
from explorer.panes import KINDS, build_index

exp = compiler.load_trace(sys.argv[1])
to_html(exp)
shown = {p.kind for c in build_index(exp).compiles for p in c.panes}
homes = {k.kind: f"explorer.panes.{k.home}" for k in KINDS}
print(json.dumps({"shown": sorted({homes[k] for k in shown}),
                  "imported": sorted({m for m in homes.values() if m in sys.modules})}))
"""


@pytest.mark.parametrize("trace", ["cache_config/a", "graph_break_eager"])
def test_a_page_imports_the_modules_of_the_kinds_it_shows_and_no_other(tmp_path, trace):
    # each kind's module (and the dataclasses its panes are) is imported when its first
    # pane is built (explorer/panes/kinds.py): a page of a one-process CPU trace creates
    # no class of the ranks, GPU, profile or cost panes it does not show
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", _KINDS_IMPORTED, str(root / "tests" / "data" / "traces" / trace)],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["imported"] == got["shown"], got
