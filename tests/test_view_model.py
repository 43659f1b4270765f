"""build_view on real captures: the panes, the cross-links and the fidelity of every text."""

from __future__ import annotations

import html
import inspect
import json
from pathlib import Path

import programs
import pytest
import torch
from conftest import recorded_key

import compiler
from explorer.export import to_html
from explorer.view_model import STAGE_LABELS, build_view

RECORDING = Path(__file__).parent / "data" / "recordings" / "cuda_pointwise.json"
EVIL = programs.MARKUP


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


def _joined(text: dict) -> list[str]:
    return ["".join(tok for _, tok in line) for line in text["lines"]]


def _node(pane: dict, name: str) -> dict:
    return next(n for n in pane["graph"]["nodes"] if n["name"] == name)


def _assert_texts_are_verbatim(exp: compiler.Exploration, view: dict) -> None:
    """Every text the view shows reassembles, line by line, to what torch emitted."""
    checked = 0
    for c, cv in zip(exp.compiles, view["compiles"], strict=True):
        oc_by_key = dict(
            zip(
                [p["id"].split("/")[0] for p in cv["panes"] if p["kind"] == "output_code"],
                c.output_code,
                strict=False,
            )
        )
        for pane in cv["panes"]:
            if pane["kind"] == "graph":
                nested = "/" in pane["id"]
                graph = oc_by_key_graph(c, pane) if nested else c.graphs[pane["id"]]
                assert _joined(pane["text"]) == graph.text.split("\n"), pane["id"]
                checked += 1
            elif pane["kind"] == "output_code":
                oc = oc_by_key[pane["id"].split("/")[0]]
                assert _joined(pane["text"]) == oc.text.split("\n")
                checked += 1
            elif pane["id"] == "bytecode":
                texts = [c.bytecode.original, c.bytecode.transformed, c.bytecode.decompiled or ""]
                got = [b["text"] for b in pane["blocks"]]
                for text, block in zip([t for t in texts if t is not None], got, strict=True):
                    assert _joined(block) == text.split("\n")
                    checked += 1
            elif pane["id"] == "dynamo_cpp_guards_str":
                assert _joined(pane["blocks"][0]["text"]) == c.guards.tree.split("\n")
                checked += 1
    assert checked


def oc_by_key_graph(c: compiler.Compile, pane: dict) -> compiler.Graph:
    key, stage = pane["id"].split("/")
    kinds = [oc.graph for oc in c.output_code]
    return c.output_code[kinds.index(key)].graphs[stage]


def test_pointwise_with_aot_eager_shows_dynamo_and_aot_panes_linked_to_source_lines():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="aot_eager")
    view = build_view(exp)
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
    # the bytecode lines of that source line carry its key (dis line numbers)
    original = _pane(view, "bytecode")["blocks"][0]["text"]
    marked = [
        line
        for line, src in zip(_joined(original), original["line_src"], strict=True)
        if src == sin_line
    ]
    assert any("LOAD_GLOBAL" in line for line in marked)
    # the source pane has the real text of that line
    files = {f["filename"]: f for f in view["sources"]}
    entry = files[inspect.getsourcefile(programs.pointwise)]
    assert entry["available"] and not entry["note"]
    shown = {
        w["start"] + i: "".join(t for _, t in line)
        for w in entry["windows"]
        for i, line in enumerate(w["lines"])
    }
    assert "torch.sin(x)" in shown[int(sin_line.rsplit(":", 1)[1])]
    _assert_texts_are_verbatim(exp, view)
    assert json.loads(json.dumps(view)) == view


@pytest.mark.slow
def test_inductor_view_links_dynamo_node_post_grad_node_and_kernel_of_one_source_line():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4))
    view = build_view(exp)
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
    assert _node(_pane(view, "dynamo_output_graph"), "sin")["src"] == sin_line
    assert kernel["id"] in _node(_pane(view, "dynamo_output_graph"), "sin")["kernels"]
    post = _node(_pane(view, "inference/inductor_post_grad_graph"), "sin")
    assert post["src"] == sin_line and kernel["id"] in post["kernels"]
    first, last = kernel["first_line"], kernel["last_line"]
    assert code["text"]["line_kernel"][first - 1 : last] == [kernel["id"]] * (last - first + 1)
    # the kernel body is lexed as C++, and still reads back exactly
    body = code["text"]["lines"][first : last - 1]
    assert any(cls == "kt" for line in body for cls, _ in line)
    assert "\n".join(_joined(code["text"])[first : last - 1]) == exp.compiles[0].kernels()[0].source
    _assert_texts_are_verbatim(exp, view)
    json.dumps(view)


def test_gpu_recording_shows_the_triton_kernel_linked_to_its_source_lines():
    exp = compiler.Exploration.from_json(RECORDING.read_text())
    view = build_view(exp)
    code = _pane(view, "inference/inductor_output_code")
    (kernel,) = code["kernels"]
    assert kernel["language"] == "triton"
    sin_line = recorded_key(exp, "torch.sin(x)")
    assert sin_line in kernel["src"]
    assert kernel["id"] in _node(_pane(view, "dynamo_output_graph"), "sin")["kernels"]
    body = _joined(code["text"])[kernel["first_line"] : kernel["last_line"] - 1]
    assert "@triton.jit" in body
    _assert_texts_are_verbatim(exp, view)


def test_graph_break_puts_the_resume_function_under_the_breaking_compile():
    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="eager")
    view = build_view(exp)
    first, resume = view["compiles"]
    assert first["markers"] == ["graph_break"] and first["parent"] is None
    assert resume["is_resume"] and resume["parent"] == first["id"]
    breaks = _pane(view, "dynamo_graph_break_reason")
    if_line = _key(programs.data_dependent, "if x.sum() > 0")
    assert breaks["items"][0]["src"] == if_line
    # only user frames are linked, never the capture wrapper's own
    for frame in breaks["items"][0]["user_stack"]:
        assert frame["src"] is None or "compiler/explore.py" not in frame["src"]
    _assert_texts_are_verbatim(exp, view)


def test_recompiles_hang_under_the_compile_they_replace():
    exp = compiler.explore(
        programs.shape_loop, lambda f: torch.compile(f, backend="eager", dynamic=False), wrap=False
    )
    view = build_view(exp)
    parents = {c["id"]: c["parent"] for c in view["compiles"]}
    assert parents == {"0/0": None, "0/1": "0/0", "0/2": "0/1"}
    assert "recompile" in view["compiles"][1]["markers"]
    assert _pane(view, "recompile_reasons", 1)["items"]


def test_without_dot_on_path_graphs_use_the_builtin_renderer_with_a_note(monkeypatch):
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="eager")
    monkeypatch.setenv("PATH", "")
    graph = _pane(build_view(exp), "dynamo_output_graph")["graph"]
    assert graph["renderer"] == "builtin" and graph["svg"] is None
    assert graph["renderer_note"] == "built-in: dot not found"


def test_a_failing_dot_degrades_to_the_builtin_renderer(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: out of memory' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="eager")
    graph = _pane(build_view(exp), "dynamo_output_graph")["graph"]
    assert graph["renderer"] == "builtin"
    assert graph["renderer_note"].startswith("built-in: dot failed (exit 3")


def test_graphviz_svg_has_an_id_per_node():
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="eager")
    graph = _pane(build_view(exp), "dynamo_output_graph")["graph"]
    assert graph["renderer"] == "dot" and graph["renderer_note"] == "Graphviz dot"
    svg = html.unescape(graph["svg"])  # Graphviz writes "-" as &#45;
    for i in range(len(graph["nodes"])):
        assert f'id="n-{i}"' in svg


def test_large_graph_goes_to_the_builtin_renderer_grouped_by_source_line():
    def chain(x):
        for _ in range(220):
            x = x * 1.0001 + 0.1
        return x

    exp = compiler.explore(chain, torch.randn(8), backend="eager")
    graph = _pane(build_view(exp), "dynamo_output_graph")["graph"]
    count = len(graph["nodes"])
    assert count > 400
    assert graph["renderer"] == "builtin"
    assert graph["renderer_note"] == f"built-in: {count:,} nodes is too many for dot"
    assert {tuple(n["group"]) for n in graph["nodes"] if n["op"] == "call_function"} == {
        (f"line {chain.__code__.co_firstlineno + 2}",)
    }


def test_module_parameters_group_nodes_by_module_path():
    exp = compiler.explore(programs.FeaturePyramid(), torch.randn(1, 3, 8, 8), backend="eager")
    nodes = _pane(build_view(exp), "dynamo_output_graph")["graph"]["nodes"]
    groups = {n["name"]: n["group"] for n in nodes}
    assert groups["l_self_modules_c1_parameters_weight_"] == ["c1"]
    assert groups["conv2d"] == ["c1"]  # the call reading c1's weight
    assert groups["l_x_"] == []


def test_markup_in_user_code_stays_plain_text_in_the_view_and_the_html(tmp_path):
    module = programs.markup_program(tmp_path)
    exp = compiler.explore(module.evil, torch.randn(4), backend="aot_eager")
    view = build_view(exp)
    node = _node(_pane(view, "dynamo_output_graph"), "sin")
    assert node["code"].endswith(f"# </script>{EVIL}")
    source_text = json.dumps(view["sources"])
    assert "onerror=alert(1)" in source_text
    page = to_html(exp)
    assert "<img" not in page and "</script><img" not in page
    assert page.count("</script>") == 2  # the JSON element's and the module's own
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in page


def test_unknown_graph_renderer_is_refused():
    exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
    with pytest.raises(
        ValueError, match="graph_renderer must be 'auto', 'dot' or 'builtin', not 'x'"
    ):
        build_view(exp, graph_renderer="x")
