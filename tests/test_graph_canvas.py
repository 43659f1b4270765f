"""The graph canvas on a real model's graphs, in the exported page.

A training step of a ``transformers`` GPT-2 built from a config (6 layers, tiny widths, no
weights) is captured with ``backend="aot_eager"`` and exported with ``to_html``; Debian's
chromium opens the page headless and a user's steps are played on its largest graphs: the
graph opens as its blocks, a block expands, search selects a node, an edge is followed, a
source line colours its nodes. What the page should show is read from the pane the real
builder made (``explorer.panes.build_pane``). ``benchmarks/graph_open.py`` times the
canvas on larger graphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "transformers", reason="needs transformers: pip install transformers (torch pinned)"
)
pytest.importorskip(
    "playwright", reason="needs playwright: bash scripts/setup.sh --browser test lab"
)

from conftest import GPT2_LAYERS, chromium_missing, open_html

import compiler
from explorer.export import to_html
from explorer.panes import build_pane

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# the full tier: a browser on a 6-layer GPT-2 (a minute of the fast tier's ten)
pytestmark = pytest.mark.slow
# more numbered blocks than the canvas keeps closed together (GC_REPEAT_MIN in graph/tree.js)
LAYERS = GPT2_LAYERS

if chromium_missing():
    pytest.skip(chromium_missing(), allow_module_level=True)
ARTIFACTS.mkdir(exist_ok=True)


@dataclass(frozen=True, kw_only=True, slots=True)
class PaneNode:
    """One node of a built graph pane, read back from its columns and tables."""

    index: int
    name: str
    target: str
    stack: tuple[str, ...]
    src: str | None
    inputs: tuple[int, ...]
    users: tuple[int, ...]
    kernels: tuple[str, ...]
    line: int  # 1-based, in the graph's text


@dataclass(frozen=True, kw_only=True, slots=True)
class Opened:
    """A graph pane open on the canvas of the exported page, and its built nodes."""

    page: Any
    nodes: tuple[PaneNode, ...]
    errors: list[str]


def _largest(exp: compiler.Exploration, stage: str) -> compiler.Compile:
    return max(
        (c for c in exp.compiles if stage in c.graphs), key=lambda c: len(c.graphs[stage].nodes)
    )


def _pane_nodes(exp: compiler.Exploration, key: str, stage: str) -> tuple[PaneNode, ...]:
    pane = build_pane(exp, key, stage)
    cols = pane.nodes
    users: list[list[int]] = [[] for _ in cols.name]
    for i, inputs in enumerate(cols.inputs):
        for j in inputs:
            users[j].append(i)
    return tuple(
        PaneNode(
            index=i,
            name=name,
            target=pane.targets[cols.target[i]],
            stack=pane.stacks[cols.module_stack[i]],
            src=None if cols.source[i] is None else pane.sources[cols.source[i]].src,
            inputs=cols.inputs[i],
            users=tuple(users[i]),
            kernels=pane.kernel_sets[cols.kernels[i]],
            line=cols.line[i],
        )
        for i, name in enumerate(cols.name)
    )


def _open(browser, exp: compiler.Exploration, page_file: Path, stage: str) -> Opened:
    """Open the page, the compile with the largest ``stage`` graph and that graph's tab."""
    c = _largest(exp, stage)
    page, errors = open_html(browser, page_file, width=1300, height=720)
    page.locator(f'.tce-compile[data-compile="{c.key}"]').click()
    page.locator(f'.tce-tab[data-stage="{stage}"]').click()
    page.locator(".tce-pane .gc-unit").first.wait_for()
    return Opened(page=page, nodes=_pane_nodes(exp, c.key, stage), errors=errors)


@pytest.fixture(scope="module")
def training(gpt2_training) -> compiler.Exploration:
    return gpt2_training


@pytest.fixture(scope="module")
def page_file(training, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("canvas") / "gpt2.html"
    to_html(training, path)
    return path


@pytest.fixture
def joint(browser, training, page_file):
    opened = _open(browser, training, page_file, "aot_joint_graph")
    yield opened
    assert opened.errors == []
    opened.page.close()


def _group_labels(page) -> list[str]:
    return page.eval_on_selector_all(
        ".tce-pane .gc-group .gc-t1", "els => els.map(e => e.textContent.slice(2))"
    )


def _expand(page, key: str) -> None:
    # the block may lie outside the canvas's view: a click event on it, as after panning
    page.locator(f".tce-pane .gc-group[data-group='{key}']").dispatch_event("click")
    page.locator(f".tce-pane .gc-head[data-group='{key}']").wait_for()


def _first(nodes: tuple[PaneNode, ...], module: str, target: str) -> PaneNode:
    for n in nodes:
        if n.stack and n.stack[-1].startswith(module) and n.target == target:
            return n
    raise LookupError(f"no {target} node in {module}")


def _select_by_search(page, node: PaneNode) -> None:
    page.fill(".tce-pane .gc-search", node.name)
    assert page.locator(".gc-hit .gc-hit-name").first.text_content() == node.name
    page.keyboard.press("Enter")


# The drawn edges, each with the unit boxes at its ends (null where an end is an open
# group's frame): its direction in the units' order, and the boxes' tops.
_EDGES = """(frame) => {
  const pane = document.querySelector('.tce-pane');
  const unit = (key) => key[0] === 'n'
    ? pane.querySelector(`.gc-unit[data-node="${key.slice(1)}"]`)
    : pane.querySelector(`.gc-unit[data-group="${CSS.escape(key.slice(1))}"]`);
  const box = frame && pane.querySelector(`.gc-head[data-group="${frame}"]`)
    .parentElement.getBoundingClientRect();
  const inside = (r) => !box || (r.x >= box.x && r.y >= box.y
    && r.x + r.width <= box.x + box.width && r.y + r.height <= box.y + box.height);
  return [...pane.querySelectorAll('path.gc-edge')].flatMap((p) => {
    const a = unit(p.dataset.from), b = unit(p.dataset.to);
    if (!a || !b) return [];
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    if (!inside(ra) || !inside(rb)) return [];
    const forward = Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
    return [{from: p.dataset.from, to: p.dataset.to, forward, down: ra.y < rb.y}];
  });
}"""


def test_a_joint_graph_opens_as_its_blocks_not_a_thousand_boxes(joint):
    page = joint.page
    labels = _group_labels(page)
    assert [label for label in labels if label.startswith("h.")] == [
        f"h.{k}" for k in range(LAYERS)
    ]
    boxes = page.locator(".tce-pane .gc-unit").count()
    assert len(joint.nodes) > 1000
    assert boxes < 100
    page.screenshot(path=str(ARTIFACTS / "graph_canvas_open.png"))


def test_clicking_a_block_expands_it_and_lays_out_its_nodes(joint):
    page = joint.page
    before = page.locator(".tce-pane .gc-unit").count()
    _expand(page, "transformer.h.3")
    assert "h.3" not in _group_labels(page)
    inside = {k for n in joint.nodes for k in n.stack if k.startswith("transformer.h.3.")}
    shown = set(
        page.eval_on_selector_all(".tce-pane .gc-unit", "els => els.map(e => e.dataset.group)")
    )
    children = {k for k in inside if k.count(".") == 3}
    assert children and children <= shown
    assert page.locator(".tce-pane .gc-unit").count() > before
    # A layout, not a pile: no two visible boxes overlap.
    boxes = page.eval_on_selector_all(
        ".tce-pane .gc-unit > rect",
        "els => els.map(e => e.getBoundingClientRect()).map(r => [r.x, r.y, r.width, r.height])",
    )
    for k, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[k + 1 :]:
            assert (
                x + w <= x2 + 0.5 or x2 + w2 <= x + 0.5 or y + h <= y2 + 0.5 or y2 + h2 <= y + 0.5
            )
    # Layered: an edge from a box to a later one in graph order runs downwards (the
    # backward's edges back to the forward's blocks run up).
    edges = page.evaluate(_EDGES, None)
    inner = [e for e in edges if e["from"].startswith("gtransformer.h.3.")]
    assert inner
    assert [e for e in edges if e["forward"] and not e["down"]] == []
    page.locator(".tce-pane .gc-head[data-group='transformer.h.3']").dispatch_event("click")
    assert "h.3" in _group_labels(page)


def test_search_finds_a_node_and_selects_it(joint):
    page = joint.page
    node = _first(joint.nodes, "transformer.h.4.mlp", "torch.ops.aten.addmm.default")
    _select_by_search(page, node)
    box = page.locator(f".tce-pane .gc-node[data-node='{node.index}']")
    assert "gc-sel" in box.get_attribute("class")
    assert page.locator(".gc-side-name").text_content() == node.name
    # the selection is the page's: the node's source line lights up beside the graph
    assert node.src
    row = page.locator(f'.tce-source .tce-row[data-src="{node.src}"]')
    assert "hl" in row.get_attribute("class").split()
    page.screenshot(path=str(ARTIFACTS / "graph_canvas_search.png"))


def test_following_an_edge_selects_a_neighbour(joint):
    page = joint.page
    node = _first(joint.nodes, "transformer.h.2.attn", "torch.ops.aten.bmm.default")
    _select_by_search(page, node)
    assert node.users
    user = joint.nodes[node.users[0]]
    assert page.locator(".gc-side-list.gc-nb-out .gc-follow").count() == len(node.users)
    page.click(f".gc-side-list.gc-nb-out .gc-follow[data-node='{user.name}']")
    assert page.locator(".gc-side-name").text_content() == user.name
    assert "gc-sel" in page.locator(f".gc-node[data-node='{user.index}']").get_attribute("class")
    # The node we came from is now an input of the selection, highlighted as such.
    assert "gc-nb-in" in page.locator(f".gc-node[data-node='{node.index}']").get_attribute("class")
    # And back up the same edge through the drawn neighbourhood of the new selection.
    page.click(f".gc-hood-unit.gc-nb-in[data-node='{node.name}']")
    assert page.locator(".gc-side-name").text_content() == node.name
    assert "gc-sel" in page.locator(f".gc-node[data-node='{node.index}']").get_attribute("class")


def test_a_source_line_selection_colours_its_nodes_and_the_blocks_holding_them(joint):
    page = joint.page
    node = next(n for n in joint.nodes if n.src and "transformer.h.5" in n.stack)
    page.locator(f'.tce-source .tce-row[data-src="{node.src}"]').click()
    marked = page.eval_on_selector_all(
        ".tce-pane .gc-src", "els => els.map(e => e.dataset.group || e.dataset.node)"
    )
    assert "transformer.h.5" in marked
    classes = page.eval_on_selector_all(
        ".tce-pane .gc-src", "els => els.map(e => e.className.baseVal)"
    )
    assert classes and all(any(c.startswith("hl-") for c in cls.split()) for cls in classes)


def test_a_selected_node_in_a_collapsed_block_marks_the_block_until_revealed(joint):
    page = joint.page
    node = _first(joint.nodes, "transformer.h.1.attn", "torch.ops.aten.bmm.default")
    # selected from elsewhere: the node's line in the graph's text view
    page.locator('.tce-toolbar [data-mode="text"]').click()
    code = page.locator(".tce-pane .tce-code")
    code.evaluate(  # to the node's line, as a user scrolling down would
        "(e, i) => { e.scrollTop = i * e.querySelector('.tce-row').offsetHeight - 100; }",
        node.line - 1,
    )
    page.locator(f'.tce-pane .tce-row[data-i="{node.line - 1}"]').click()
    page.locator('.tce-toolbar [data-mode="graph"]').click()
    assert page.locator(".tce-pane .gc-group.gc-sel-in").get_attribute("data-group") == (
        "transformer.h.1"
    )
    assert page.locator(f".tce-pane .gc-node[data-node='{node.index}']").count() == 0
    # a user follows the mark down: each click opens the marked box holding the node
    box = page.locator(f".tce-pane .gc-node[data-node='{node.index}']")
    for _ in node.stack:
        if box.count():
            break
        page.locator(".tce-pane .gc-group.gc-sel-in").dispatch_event("click")
    assert "gc-sel" in box.get_attribute("class")
    assert page.locator(".tce-pane .gc-head[data-group='transformer.h.1']").count() == 1


def test_the_dynamo_graph_opens_as_the_module_tree_and_a_block_reads_top_to_bottom(
    browser, training, page_file
):
    opened = _open(browser, training, page_file, "dynamo_output_graph")
    page = opened.page
    labels = _group_labels(page)
    assert [label for label in labels if label.startswith("h.")] == [
        f"h.{k}" for k in range(LAYERS)
    ]
    last = f"transformer.h.{LAYERS - 1}"
    _expand(page, last)
    assert page.locator(f".tce-pane .gc-group[data-group='{last}.attn']").count() == 1
    # The block reads top to bottom: ln_1, attn, the residual add, ln_2, mlp, the add.
    # (Dynamo lists every parameter first; the block's order must not follow them.)
    edges = page.evaluate(_EDGES, last)
    assert edges
    assert [e for e in edges if not e["down"]] == []
    assert opened.errors == []
    page.close()


@pytest.fixture(scope="module")
def inductor_training(
    tmp_path_factory, gpt2_training_inductor
) -> tuple[compiler.Exploration, Path]:
    exp = gpt2_training_inductor
    path = tmp_path_factory.mktemp("canvas") / "gpt2_inductor.html"
    to_html(exp, path)
    return exp, path


@pytest.mark.slow
def test_an_inductor_joint_graph_opens_as_its_blocks(browser, inductor_training):
    opened = _open(browser, *inductor_training, "aot_joint_graph")
    page = opened.page
    assert page.locator(".tce-pane .gc-unit").count() < len(opened.nodes) / 4
    # Two blocks fit in the view, open or not: each is one box or one frame.
    for block in ("transformer.h.0", "transformer.h.1"):
        assert (
            page.locator(
                f".tce-pane .gc-unit[data-group='{block}'], "
                f".tce-pane .gc-head[data-group='{block}']"
            ).count()
            == 1
        )
    assert opened.errors == []
    page.close()


@pytest.mark.slow
def test_a_kernel_link_of_a_node_selects_that_kernel(browser, inductor_training):
    opened = _open(browser, *inductor_training, "aot_forward_graph")
    page = opened.page
    node = next(n for n in opened.nodes if n.kernels and n.stack)
    _select_by_search(page, node)
    assert "gc-sel" in page.locator(f".gc-node[data-node='{node.index}']").get_attribute("class")
    assert page.locator(".gc-kernel").all_text_contents() == list(node.kernels)
    page.locator(".gc-kernel").first.click()
    # The page selects the kernel: every node that went into it is marked.
    fused = {str(n.index) for n in opened.nodes if node.kernels[0] in n.kernels}
    marked = page.eval_on_selector_all(
        ".tce-pane .gc-node.gc-kin", "els => els.map(e => e.dataset.node)"
    )
    assert str(node.index) in marked
    assert set(marked) <= fused
    assert opened.errors == []
    page.close()


def test_a_higher_order_op_links_to_its_branches_and_each_branch_back(browser, tmp_path):
    import torch

    def f(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    exp = compiler.explore(f, torch.randn(4), backend="eager")
    page_file = tmp_path / "cond.html"
    to_html(exp, page_file)
    opened = _open(browser, exp, page_file, "dynamo_output_graph")
    page = opened.page
    key = exp.compiles[0].key
    pane = build_pane(exp, key, "dynamo_output_graph")
    (cond,) = [n for n in opened.nodes if n.target == "torch.ops.higher_order.cond"]
    page.fill(".tce-pane .gc-search", cond.name)
    page.locator(".gc-hit").first.wait_for()
    page.evaluate(
        """(name) => [...document.querySelectorAll('.gc-hit')]
            .find((row) => row.querySelector('.gc-hit-name').textContent === name)
            .dispatchEvent(new MouseEvent('mousedown', {bubbles: true}))""",
        cond.name,
    )
    assert page.locator(".gc-side-name").text_content() == cond.name
    runs = page.locator(".gc-side-list.gc-subgraphs .gc-follow")
    assert runs.count() == len(pane.subgraphs) == 2
    assert [runs.nth(i).get_attribute("data-subgraph") for i in range(2)] == [
        s.id for s in pane.subgraphs
    ]
    # into the true branch: its first node; and back to the op that runs it
    runs.nth(0).click()
    first = opened.nodes[pane.subgraphs[0].first]
    assert page.locator(".gc-side-name").text_content() == first.name
    back = page.locator(".gc-side-list.gc-subgraphs .gc-follow")
    assert back.count() == 1 and "true branch" in back.first.text_content()
    back.first.click()
    assert page.locator(".gc-side-name").text_content() == cond.name
    assert opened.errors == []
    page.close()
