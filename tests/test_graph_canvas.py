"""The graph canvas (explorer/static/graph*.js) on a real 12-layer GPT-2 joint graph.

A training step of a ``transformers`` GPT-2 built from a config (12 layers, tiny widths) is
captured with ``backend="aot_eager"``; its ``aot_joint_graph`` (about 2,300 nodes) becomes a
GraphPane (``graph_fixtures.graph_pane``). A static page holds the canvas files, that pane and
a fake ctx that records ``ctx.select`` calls; Debian's chromium opens it headless and a user's
steps are played: the graph opens as its blocks, a block expands, search selects a node, an
edge is followed. The open time is printed, not asserted (benchmarks/graph_open.py measures
it on 1k/3k/5k-node graphs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "transformers", reason="needs transformers: pip install transformers (torch pinned)"
)
pytest.importorskip(
    "playwright", reason="needs playwright: bash scripts/setup.sh --browser test lab"
)

import graph_fixtures
from conftest import chromium_missing

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

if chromium_missing():
    pytest.skip(chromium_missing(), allow_module_level=True)
ARTIFACTS.mkdir(exist_ok=True)


@pytest.fixture(scope="module")
def training() -> Any:
    return graph_fixtures.gpt2_training_step(12)


@pytest.fixture(scope="module")
def joint_pane(training) -> dict[str, Any]:
    return graph_fixtures.graph_pane(training, "aot_joint_graph")


def _page_for(browser, pane: dict[str, Any], folder: Path):
    html = folder / f"canvas-{pane['stage']}.html"
    html.write_text(graph_fixtures.harness_html(pane), encoding="utf-8")
    pg = browser.new_page(viewport={"width": 1300, "height": 720})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(html.as_uri())
    pg.wait_for_function("window.harnessReady === true")
    pg.errors = errors
    return pg


@pytest.fixture(scope="module")
def page(browser, joint_pane, tmp_path_factory):
    pg = _page_for(browser, joint_pane, tmp_path_factory.mktemp("graph"))
    yield pg
    pg.close()


def _open(page) -> dict[str, Any]:
    page.evaluate("window.selects.length = 0")
    opened = page.evaluate("openPane()")
    assert page.errors == []
    return opened


def _group_labels(page) -> list[str]:
    return page.eval_on_selector_all(
        ".gc-group .gc-t1", "els => els.map(e => e.textContent.slice(2))"
    )


def _click_block(page, key: str) -> None:
    # A block may be below the fold: pan to it first, as a user scrolling down would.
    page.evaluate(f"canvas.centre(canvas.findGroup({json.dumps(key)}))")
    page.click(f".gc-group[data-group='{key}']")


def _first(joint_pane, module: str, target: str) -> tuple[int, dict[str, Any]]:
    for i, n in enumerate(joint_pane["nodes"]):
        if n["module_stack"] and n["module_stack"][-1].startswith(module) and n["target"] == target:
            return i, n
    raise LookupError(f"no {target} node in {module}")


def test_a_12_layer_joint_graph_opens_as_its_blocks_not_thousands_of_boxes(page, joint_pane):
    opened = _open(page)
    count = len(joint_pane["nodes"])
    built, painted = opened["built"], opened["painted"]
    print(
        f"\nopen {count} nodes: built {built:.0f} ms, painted {painted:.0f} ms, "
        f"{opened['boxes']} boxes"
    )
    assert count > 2000
    labels = _group_labels(page)
    assert [label for label in labels if label.startswith("h.")] == [f"h.{k}" for k in range(12)]
    assert page.locator(".gc-unit").count() == opened["boxes"] < 100
    page.screenshot(path=str(ARTIFACTS / "graph_canvas_open.png"))


def test_clicking_a_block_expands_it_and_lays_out_its_nodes(page, joint_pane):
    _open(page)
    before = page.locator(".gc-unit").count()
    _click_block(page, "transformer.h.3")
    assert page.locator(".gc-frame .gc-head[data-group='transformer.h.3']").count() == 1
    assert "h.3" not in _group_labels(page)
    inside = {
        k
        for n in joint_pane["nodes"]
        for k in n["module_stack"]
        if k.startswith("transformer.h.3.")
    }
    shown = set(page.eval_on_selector_all(".gc-unit", "els => els.map(e => e.dataset.group || '')"))
    children = {k for k in inside if k.count(".") == 3}
    assert children and children <= shown
    assert page.locator(".gc-unit").count() > before
    # A layout, not a pile: no two visible boxes overlap.
    boxes = page.eval_on_selector_all(
        ".gc-unit > rect",
        "els => els.map(e => e.getBoundingClientRect()).map(r => [r.x, r.y, r.width, r.height])",
    )
    for k, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[k + 1 :]:
            assert (
                x + w <= x2 + 0.5 or x2 + w2 <= x + 0.5 or y + h <= y2 + 0.5 or y2 + h2 <= y + 0.5
            )
    # Layered: at every open level, an edge in graph order runs downwards.
    upward = page.evaluate(
        """() => [canvas.root, canvas.findGroup('transformer.h.3')].flatMap((g) =>
          g.edges
            .filter(([a, b]) => a < b && !(g.layout.pos[a].y < g.layout.pos[b].y)))"""
    )
    assert upward == []
    page.click(".gc-head[data-group='transformer.h.3']")
    assert "h.3" in _group_labels(page)


def test_search_finds_a_node_and_selects_it(page, joint_pane):
    _open(page)
    i, node = _first(joint_pane, "transformer.h.7.mlp", "torch.ops.aten.addmm.default")
    page.fill(".gc-search", node["name"])
    first_hit = page.locator(".gc-hit .gc-hit-name").first
    assert first_hit.text_content() == node["name"]
    page.keyboard.press("Enter")
    assert page.evaluate("window.selects") == [{"node": node["name"], "src": node["src"]}]
    box = page.locator(f".gc-node[data-node='{i}']")
    assert box.count() == 1
    assert "gc-sel" in box.get_attribute("class")
    assert page.locator(".gc-side-name").text_content() == node["name"]
    page.screenshot(path=str(ARTIFACTS / "graph_canvas_search.png"))


def test_following_an_edge_selects_a_neighbour(page, joint_pane):
    _open(page)
    i, node = _first(joint_pane, "transformer.h.2.attn", "torch.ops.aten.bmm.default")
    page.evaluate(f"canvas.reveal({i}); canvas.choose({i}, true)")
    users = node["users"]
    assert users
    user = joint_pane["nodes"][users[0]]
    assert page.locator(".gc-side-list.gc-nb-out .gc-follow").count() == len(users)
    page.click(f".gc-side-list.gc-nb-out .gc-follow[data-node='{user['name']}']")
    assert page.evaluate("window.selects")[-1] == {"node": user["name"], "src": user["src"]}
    assert "gc-sel" in page.locator(f".gc-node[data-node='{users[0]}']").get_attribute("class")
    # The node we came from is now an input of the selection, highlighted as such.
    assert "gc-nb-in" in page.locator(f".gc-node[data-node='{i}']").get_attribute("class")
    assert page.locator(".gc-side-name").text_content() == user["name"]
    # And back up the same edge through the drawn neighbourhood of the new selection.
    page.click(f".gc-hood-unit.gc-nb-in[data-node='{node['name']}']")
    assert page.evaluate("window.selects")[-1] == {"node": node["name"], "src": node["src"]}
    assert "gc-sel" in page.locator(f".gc-node[data-node='{i}']").get_attribute("class")


def test_a_source_line_selection_colours_its_nodes_and_the_blocks_holding_them(page, joint_pane):
    _open(page)
    node = next(
        n for n in joint_pane["nodes"] if n["src"] and "transformer.h.5" in n["module_stack"]
    )
    page.evaluate(f"canvas.update({json.dumps({'src': node['src']})})")
    marked = page.eval_on_selector_all(
        ".gc-src", "els => els.map(e => e.dataset.group || e.dataset.node)"
    )
    assert "transformer.h.5" in marked
    assert all(
        "hl-1" in c
        for c in page.eval_on_selector_all(".gc-src", "els => els.map(e => e.className.baseVal)")
    )


def test_the_dynamo_graph_opens_as_the_module_tree_the_capture_recorded(
    browser, training, tmp_path
):
    pane = graph_fixtures.graph_pane(training, "dynamo_output_graph")
    _, graph = graph_fixtures.largest(training, "dynamo_output_graph")
    assert any(n.module_stack for n in graph.nodes)  # the capture's own stacks, not test data
    pg = _page_for(browser, pane, tmp_path)
    opened = _open(pg)
    print(f"\nopen {len(pane['nodes'])} nodes (dynamo): painted {opened['painted']:.0f} ms")
    labels = _group_labels(pg)
    assert [label for label in labels if label.startswith("h.")] == [f"h.{k}" for k in range(12)]
    _click_block(pg, "transformer.h.11")
    assert pg.locator(".gc-group[data-group='transformer.h.11.attn']").count() == 1
    # The block reads top to bottom: ln_1, attn, the residual add, ln_2, mlp, the add.
    # (Dynamo lists every parameter first; the block's order must not follow them.)
    upward = pg.evaluate(
        """() => { const g = canvas.findGroup('transformer.h.11');
          return g.edges.filter(([a, b]) => !(g.layout.pos[a].y < g.layout.pos[b].y)); }"""
    )
    assert upward == []
    pg.close()


@pytest.fixture(scope="module")
def inductor_training() -> Any:
    return graph_fixtures.gpt2_training_step(2, backend="inductor")


@pytest.mark.slow
def test_an_inductor_joint_graph_opens_as_the_blocks_the_capture_recorded(
    browser, inductor_training, tmp_path
):
    pane = graph_fixtures.graph_pane(inductor_training, "aot_joint_graph")
    _, graph = graph_fixtures.largest(inductor_training, "aot_joint_graph")
    assert any(n.module_stack for n in graph.nodes)  # the capture's own stacks, not test data
    pg = _page_for(browser, pane, tmp_path)
    opened = _open(pg)
    assert opened["boxes"] < len(pane["nodes"]) / 4
    # Two blocks fit in the view, open or not: each is one box or one frame.
    for block in ("transformer.h.0", "transformer.h.1"):
        assert pg.locator(f"[data-group='{block}']").count() == 1
    pg.close()


@pytest.mark.slow
def test_a_kernel_link_of_a_node_selects_that_kernel(browser, inductor_training, tmp_path):
    pane = graph_fixtures.graph_pane(inductor_training, "aot_forward_graph")
    i, node = next(
        (i, n) for i, n in enumerate(pane["nodes"]) if n["kernels"] and n["module_stack"]
    )
    pg = _page_for(browser, pane, tmp_path)
    _open(pg)
    pg.fill(".gc-search", node["name"])
    pg.keyboard.press("Enter")
    assert "gc-sel" in pg.locator(f".gc-node[data-node='{i}']").get_attribute("class")
    assert pg.locator(".gc-kernel").all_text_contents() == node["kernels"]
    pg.locator(".gc-kernel").first.click()
    assert pg.evaluate("window.selects")[-1] == {"kernel": node["kernels"][0]}
    # The shell feeds the kernel back: every node that went into it is marked.
    fused = {str(j) for j, n in enumerate(pane["nodes"]) if node["kernels"][0] in n["kernels"]}
    marked = pg.eval_on_selector_all(".gc-node.gc-kin", "els => els.map(e => e.dataset.node)")
    assert str(i) in marked
    assert set(marked) <= fused
    pg.close()


def test_a_selected_node_in_a_collapsed_block_marks_the_block_until_revealed(page, joint_pane):
    _open(page)
    i, node = _first(joint_pane, "transformer.h.9.attn", "torch.ops.aten.bmm.default")
    page.evaluate(f"canvas.update({json.dumps({'node': node['name'], 'src': node['src']})})")
    assert "gc-sel-in" in page.locator(".gc-group[data-group='transformer.h.9']").get_attribute(
        "class"
    )
    assert page.locator(f".gc-node[data-node='{i}']").count() == 0
    page.evaluate(f"canvas.reveal({i})")
    assert "gc-sel" in page.locator(f".gc-node[data-node='{i}']").get_attribute("class")
    assert page.locator(".gc-head[data-group='transformer.h.9']").count() == 1
