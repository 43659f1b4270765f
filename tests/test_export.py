"""The offline HTML export, opened from a file:// URL in headless Chromium with no server."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import programs
import pytest
import torch
from conftest import recorded_key

import compiler
import explorer
from explorer.export import to_html

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
RECORDING = ROOT / "tests" / "data" / "recordings" / "cuda_pointwise.json"
TIMED_RECORDING = ROOT / "tests" / "data" / "recordings" / "cuda_mlp_block_timed.json"
EVIL = programs.MARKUP


def _line_key(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{first + offset}"


def test_exported_gpu_recording_shows_compiles_graph_and_kernel_and_links_them(open_page, tmp_path):
    from playwright.sync_api import expect

    exp = compiler.Exploration.from_json(RECORDING.read_text())
    path = tmp_path / "cuda_pointwise.html"
    page_text = to_html(exp, path)
    assert path.read_text(encoding="utf-8") == page_text
    page, problems = open_page(path)
    expect(page.locator(".tce-compiles .tce-compile")).to_have_count(1)
    expect(page.locator(".tce-compile .tce-cid")).to_have_text("0/0")
    expect(page.locator(".tce-pane .gc-node").first).to_be_visible()
    # click the source line of torch.sin: its Dynamo nodes light up in its colour
    sin_line = recorded_key(exp, "torch.sin(x)")
    page.locator(f'.tce-source .tce-row[data-src="{sin_line}"]').click()
    lit = page.locator(".tce-pane .gc-node.gc-src")
    expect(lit).to_have_count(2)  # sin and y = sin + 1
    assert re.search(r"\bhl-\d\b", lit.first.get_attribute("class"))
    # ... and in the output code, the Triton kernel it fused into
    page.locator('.tce-tab[data-stage="inference/inductor_output_code"]').click()
    chip = page.locator(".tce-kernels .tce-kernel")
    expect(chip).to_have_text("triton_poi_fused_add_mul_relu_sin_0")
    expect(chip).to_have_class(re.compile(r"\bhl\b"))
    kernel_rows = page.locator(".tce-pane .tce-row.tce-in-kernel.hl")
    assert kernel_rows.count() > 10
    expect(page.locator(".tce-pane .tce-code").get_by_text("@triton.jit")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "export_cuda_pointwise.png"))
    # click a graph node: its details, its source line and its kernel
    page.locator('.tce-tab[data-stage="dynamo_output_graph"]').click()
    sin = page.locator(".tce-pane .gc-node", has_text="sin").first
    sin.click()
    expect(page.locator(".gc-side-name")).to_have_text("sin")
    expect(page.locator(".gc-side-target")).to_contain_text("torch.sin")
    expect(page.locator(".gc-side-meta").first).to_contain_text("f32")
    expect(
        page.locator(".gc-kernel", has_text="triton_poi_fused_add_mul_relu_sin_0")
    ).to_be_visible()
    expect(page.locator(f'.tce-source .tce-row[data-src="{sin_line}"]')).to_have_class(
        re.compile(r"\bhl\b")
    )
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(ARTIFACTS / "export_cuda_pointwise_dark.png"))
    assert problems == []


def test_lowering_pane_links_kernel_source_lines_to_ttir_and_ptx_lines(open_page, tmp_path):
    from playwright.sync_api import expect

    exp = compiler.Exploration.from_json(RECORDING.read_text())
    path = tmp_path / "cuda_pointwise.html"
    to_html(exp, path)
    page, problems = open_page(path)
    kernel = "triton_poi_fused_add_mul_relu_sin_0"
    page.locator(f'.tce-tab[data-stage="inference/{kernel}/lowered"]').click()
    expect(page.locator(".tce-pane-title")).to_contain_text(f"Triton lowering · {kernel}")
    # the chosen variant is shown first, with the TTIR tab open
    expect(page.locator(".tce-variant.tce-current")).to_contain_text("XBLOCK=256")
    expect(page.locator(".tce-variant.tce-current .tce-chosen")).to_have_text("chosen")
    expect(page.locator('.tce-lstage[data-lstage="ttir"]')).to_have_class(re.compile("tce-current"))
    # click the kernel-source line of tl.load: its TTIR lines light up in its colour
    load_row = page.locator(".tce-lowering-source .tce-row", has_text="tl.load(")
    load_row.click()
    expect(load_row).to_have_class(re.compile(r"\bhl\b"))
    colour = re.search(r"\bhl-\d\b", load_row.get_attribute("class")).group()
    ttir_lit = page.locator(".tce-lowering-stage .tce-row.hl")
    expect(ttir_lit.filter(has_text="tt.load")).to_have_count(1)
    expect(ttir_lit.filter(has_text="tt.load")).to_be_in_viewport()
    assert colour in ttir_lit.first.get_attribute("class")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lowered_view.png"))
    # the same line in PTX: the load instruction after its .loc
    page.locator('.tce-lstage[data-lstage="ptx"]').click()
    ptx_lit = page.locator(".tce-lowering-stage .tce-row.hl")
    expect(ptx_lit.filter(has_text="ld.global.v2.b32")).to_have_count(1)
    expect(page.locator(".tce-lowering-tabs .tce-count")).to_contain_text("PTX line")
    page.screenshot(path=str(ARTIFACTS / "lowered_view_ptx.png"))
    # clicking a lowered line selects its source line: tl.store
    page.locator(".tce-lowering-stage .tce-row", has_text="st.global.v2.b32").click()
    expect(page.locator(".tce-lowering-source .tce-row.hl")).to_contain_text("tl.store(")
    # SASS says it has no line information
    page.locator('.tce-lstage[data-lstage="sass"]').click()
    expect(page.locator(".tce-lowering-stage .tce-note")).to_contain_text("no line information")
    expect(page.locator(".tce-lowering-stage .tce-row.hl")).to_have_count(0)
    # the other variant keeps the stage and the source line
    page.locator('.tce-variant[data-variant="0"]').click()
    expect(page.locator('.tce-lstage[data-lstage="sass"]')).to_have_class(re.compile("tce-current"))
    # back to the output code that holds the kernel, the pane the index names for it
    page.locator(".tce-lowering-head button", has_text="in output code").click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute(
        "data-stage", "inference/inductor_output_code"
    )
    assert problems == []


def test_kernel_time_pane_shows_bars_and_selects_the_slower_kernel(open_page, tmp_path):
    from playwright.sync_api import expect

    exp = compiler.Exploration.from_json(TIMED_RECORDING.read_text())
    path = tmp_path / "cuda_mlp_block_timed.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="kernel_timing"]').click()
    expect(page.locator(".tce-pane-title")).to_contain_text("Kernel time")
    rows = page.locator(".tce-kt .tce-kt-row")
    expect(rows).to_have_count(2)
    slow, fast = "triton_poi_fused_addmm_gelu_0", "triton_per_fused_native_layer_norm_1"
    expect(rows.nth(0)).to_contain_text(slow)
    expect(rows.nth(1)).to_contain_text(fast)
    for i in range(2):
        expect(rows.nth(i)).to_be_visible()
        for kind in ("time", "peak"):
            box = rows.nth(i).locator(f".tce-kt-{kind} .tce-kt-fill").bounding_box()
            assert box is not None and box["width"] > 1, (i, kind, box)
    # the slowest kernel's time bar fills its track; both are above the copy peak,
    # drawn full with the exact number beside it
    track = rows.nth(0).locator(".tce-kt-time .tce-kt-track").bounding_box()
    fill = rows.nth(0).locator(".tce-kt-time .tce-kt-fill").bounding_box()
    assert fill["width"] == pytest.approx(track["width"], abs=1)
    expect(rows.nth(0).locator(".tce-kt-peak .tce-kt-value")).to_have_text("103.6%")
    expect(rows.nth(1).locator(".tce-kt-peak .tce-kt-value")).to_have_text("105.5%")
    expect(page.locator(".tce-kt-peakline")).to_contain_text("measured copy bandwidth 2,946 GB/s")
    # clicking the slower kernel's row selects it, as its kernel chip does (this
    # recording's kernels link to no user source line)
    rows.nth(0).click()
    expect(rows.nth(0)).to_have_class(re.compile(r"\btce-selected\b"))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "kernel_timing.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(ARTIFACTS / "kernel_timing_dark.png"))
    page.emulate_media(color_scheme="light")
    # ... and the output code highlights it
    page.locator('.tce-tab[data-stage="inference/inductor_output_code"]').click()
    expect(page.locator(f'.tce-kernels .tce-kernel[data-kernel="inference/{slow}"]')).to_have_class(
        re.compile(r"\btce-selected\b")
    )
    expect(page.locator(".tce-details")).to_contain_text(f"kernel {slow}")
    expect(page.locator(".tce-details")).to_contain_text("103.6% of copy peak")
    lit = page.locator(".tce-pane .tce-row.hl-kernel")
    assert lit.count() > 10
    expect(lit.filter(has_text=f"def {slow}(")).to_have_count(1)
    # the kernel's name opens its code directly
    page.locator('.tce-tab[data-stage="kernel_timing"]').click()
    page.locator(".tce-kt-row .tce-kt-name", has_text=fast).click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute(
        "data-stage", "inference/inductor_output_code"
    )
    expect(
        page.locator(".tce-pane .tce-row.hl-kernel", has_text=f"def {fast}(")
    ).to_be_in_viewport()
    assert problems == []


def test_kernel_time_pane_shows_matmul_tflops_and_cuda_graph_counts(open_page, tmp_path):
    from playwright.sync_api import expect
    from test_kernel_timing_view import SLOW, with_flops

    exp = with_flops(compiler.Exploration.from_json(TIMED_RECORDING.read_text()))
    path = tmp_path / "cuda_mlp_block_flops.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="kernel_timing"]').click()
    table = page.locator(".tce-kt")
    expect(table.locator("th")).to_contain_text(["GFLOP", "TFLOP/s"])
    rows = table.locator(".tce-kt-row")
    expect(rows.nth(0)).to_contain_text(SLOW)
    expect(rows.nth(0).locator(".tce-kt-gflop")).to_have_text("0.13")
    expect(rows.nth(0).locator(".tce-kt-tflops")).to_have_text("12.5 (25%)")
    expect(rows.nth(1).locator(".tce-kt-tflops")).to_have_text("—")
    expect(rows.nth(1).locator(".tce-kt-gflop")).to_have_text("—")
    expect(page.locator(".tce-kt-peakline")).to_contain_text("measured fp32 matmul 50.0 TFLOP/s")
    expect(page.locator(".tce-kt-cudagraphs")).to_have_text(
        "CUDA graph warm-ups: 1; CUDA graph recordings: 2; CUDA graph replays per run: 1"
    )
    # the table fits the pane: no horizontal scrolling
    pane = page.locator(".tce-pane").first
    assert pane.evaluate("e => e.scrollWidth <= e.clientWidth"), pane.evaluate(
        "e => [e.scrollWidth, e.clientWidth]"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "kernel_timing_flops.png"))
    rows.nth(0).locator(".tce-kt-name").click()
    expect(page.locator(".tce-details")).to_contain_text("0.13 GFLOP at 12.50 TFLOP/s")
    page.locator('.tce-tab[data-stage="compilation_metrics"]').click()
    expect(page.locator(".tce-pane")).to_contain_text("CUDA graph recordings")
    expect(page.locator(".tce-pane")).to_contain_text("CUDA graph replays per run")
    assert problems == []


def test_graph_canvas_text_view_and_graph_break_tree_in_the_exported_page(open_page, tmp_path):
    from playwright.sync_api import expect

    exp = compiler.explore(programs.data_dependent, torch.ones(4), backend="aot_eager")
    path = tmp_path / "graph_break.html"
    to_html(exp, path)
    page, problems = open_page(path)
    # the resume function sits under the compile whose graph break made it
    expect(page.locator(".tce-tree .tce-tree .tce-compile")).to_have_count(1)
    if_at = _line_key(programs.data_dependent, "if x.sum() > 0").rpartition(":")[2]
    expect(page.locator(".tce-tree .tce-tree .tce-cname")).to_have_text(
        f"resume data_dependent at line {if_at}"
    )
    expect(page.locator(".tce-badge-graph_break")).to_have_count(1)
    # a graph break is a problem the advisor names, so the page opens on its findings
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute("data-stage", "findings")
    expect(page.locator(".tce-pane")).to_contain_text("breaks the graph")
    page.locator('.tce-tab[data-stage="dynamo_output_graph"]').click()
    expect(page.locator(".tce-pane .gc-node").first).to_be_visible()
    if_line = _line_key(programs.data_dependent, "if x.sum() > 0")
    page.locator(f'.tce-source .tce-row[data-src="{if_line}"]').click()
    expect(page.locator(".tce-pane .gc-node.gc-src")).to_have_count(2)  # sum, gt
    # the same graph as text: the comment naming the line and its two nodes, in its colour
    page.locator('.tce-toolbar [data-mode="text"]').click()
    expect(page.locator(".tce-pane .tce-row.hl")).to_have_count(3)
    expect(page.locator(".tce-pane .tce-row.hl", has_text="# File:")).to_have_count(1)
    expect(page.locator(".tce-pane .tce-row .t-k").first).to_be_visible()
    page.locator('.tce-tab[data-stage="dynamo_graph_break_reason"]').click()
    expect(page.locator(".tce-card.hl")).to_contain_text("Data-dependent branching")
    page.locator('.tce-tab[data-stage="bytecode"]').click()
    lit = page.locator(".tce-pane .tce-row.hl")
    expect(lit.first).to_be_visible()  # the pane opens when decompressed
    assert lit.count() > 3
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "export_graph_break_builtin.png"))
    assert problems == []


def test_markup_in_user_code_is_shown_as_text_and_never_runs(open_page, tmp_path):
    from playwright.sync_api import expect

    module = programs.markup_program(tmp_path)
    exp = compiler.explore(module.evil, torch.randn(4), backend="aot_eager")
    path = tmp_path / "evil.html"
    to_html(exp, path)
    page, problems = open_page(path)
    expect(page.locator(".tce-source")).to_contain_text(f"# </script>{EVIL}")
    assert page.locator("img").count() == 0
    assert problems == []


def test_export_button_in_the_standalone_page_downloads_the_page(open_page, tmp_path):
    exp = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="eager")
    path = tmp_path / "pointwise.html"
    to_html(exp, path)
    page, problems = open_page(path, accept_downloads=True)
    with page.expect_download() as info:
        page.locator(".tce-export").click()
    download = info.value
    assert download.suggested_filename == "torch-compile-explorer-pointwise.html"
    saved = Path(download.path()).read_text(encoding="utf-8")
    assert saved.startswith("<!DOCTYPE html>") and 'id="tce-index"' in saved
    assert problems == []


def test_to_html_writes_nothing_without_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
    page = to_html(exp, title="a <b>title</b>")
    assert list(tmp_path.iterdir()) == []
    assert "<title>a &lt;b&gt;title&lt;/b&gt;</title>" in page
    assert "http://" not in page.split("<script", 1)[0] and "https://cdn" not in page


def test_explorer_to_html_writes_the_same_page_as_export(tmp_path):
    import programs
    import torch

    import compiler
    from explorer.export import to_html

    exp = compiler.explore(programs.pointwise, torch.randn(3), backend="eager")
    page = tmp_path / "page.html"
    html = explorer.to_html(exp, page)
    assert page.read_text() == html == to_html(exp)


def test_the_page_embeds_every_pane_compressed_and_is_smaller_than_the_json(tmp_path):
    import base64
    import gzip
    import json as jsonlib

    from explorer.export import INDEX_ELEMENT_ID, PANES_ELEMENT_ID
    from explorer.panes import build_index, build_pane, pane_json

    exp = compiler.Exploration.from_json(TIMED_RECORDING.read_text())
    page = to_html(exp)
    # against the plain form: the compact one is compressed too (benchmarks/json_size.py)
    assert len(page) < len(exp.to_json(compact=False))
    blobs_text = page.split(f'id="{PANES_ELEMENT_ID}">', 1)[1].split("</script>", 1)[0]
    blobs = jsonlib.loads(blobs_text)
    index = build_index(exp)
    # Since schema 4.0 the plain JSON holds no parsed nodes, so it no longer measures what
    # the page carries: the panes do. Compressed, they take under a quarter of their JSON.
    panes = [
        pane_json(build_pane(exp, c.key, p.id))
        for c in index.compiles
        for p in c.panes
        if p.id != "findings"
    ]
    raw = sum(len(jsonlib.dumps(p, separators=(",", ":"))) for p in panes)
    assert len(blobs_text) <= 0.25 * raw
    assert f'id="{INDEX_ELEMENT_ID}"' in page
    wanted = {f"{c.key}\n{p.id}" for c in index.compiles for p in c.panes if p.id != "findings"}
    assert wanted <= set(blobs)
    c = index.compiles[0]
    data = jsonlib.loads(gzip.decompress(base64.b64decode(blobs[f"{c.key}\ndynamo_output_graph"])))
    assert data == pane_json(build_pane(exp, c.key, "dynamo_output_graph"))


def test_a_problem_finding_opens_first_and_its_evidence_selects_what_it_names(open_page, tmp_path):
    """A real graph break, on a line whose comment carries markup: the advisor's own
    finding opens the page, shows that line as text, and each piece of its evidence
    selects what it names (the break's line, the condition's node, the resume compile)."""
    from playwright.sync_api import expect

    module = programs.markup_branch_program(tmp_path)
    exp = compiler.explore(module.branchy, torch.ones(4), backend="aot_eager")
    finding = next(f for f in exp.findings() if f.severity == "problem")
    by_place = {(e.stage, bool(e.src), bool(e.node)): e for e in finding.evidence}
    at_line = by_place[("dynamo_graph_break_reason", True, False)]
    at_node = by_place[("dynamo_output_graph", False, True)]
    resume = next(e for e in finding.evidence if e.compile != at_line.compile)
    assert at_line.src == _line_key(module.branchy, "if x.sum() > 0")
    path = tmp_path / "findings.html"
    to_html(exp, path)
    page, problems = open_page(path)
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute("data-stage", "findings")
    card = page.locator(".tce-finding.tce-problem", has_text=finding.title)
    expect(card).to_have_count(1)
    expect(card).to_contain_text(f"# {programs.BOLD_MARKUP} the graph")  # as text
    assert page.locator(".tce-pane b").count() == 0
    links = card.locator(".tce-evidence-link")
    # the break's line: its reason card and the source line light up
    links.filter(has_text=at_line.text).click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute("data-stage", at_line.stage)
    expect(page.locator(".tce-card.hl")).to_contain_text("Data-dependent branching")
    expect(page.locator(f'.tce-source .tce-row[data-src="{at_line.src}"]')).to_have_class(
        re.compile(r"\bhl\b")
    )
    # the condition's node, selected on the graph canvas
    page.locator('.tce-tab[data-stage="findings"]').click()
    links.filter(has_text=at_node.text).click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute("data-stage", at_node.stage)
    expect(page.locator(".gc-side-name")).to_have_text(at_node.node)
    expect(page.locator(".tce-pane .gc-node.gc-sel")).to_have_count(1)
    # the resume function's compile
    page.locator('.tce-tab[data-stage="findings"]').click()
    links.filter(has_text=resume.text).click()
    expect(page.locator(".tce-compile.tce-current")).to_have_attribute(
        "data-compile", resume.compile
    )
    assert problems == []
    assert not hasattr(exp, "to_html")  # compiler never reaches up into explorer


@pytest.mark.slow  # the session's GPT-2 explore: the full tier
def test_a_real_models_graph_opens_grouped_by_module_and_a_block_expands(
    open_page, tmp_path, gpt2_training
):
    """A GPT-2 training step (transformers, built from a config; the session's, as in
    test_graph_canvas.py): its Dynamo graph opens on the canvas as the model's modules, and
    clicking a block lays out its own."""
    from playwright.sync_api import expect

    exp = gpt2_training
    stage = "dynamo_output_graph"
    c = max(
        (c for c in exp.compiles if stage in c.graphs), key=lambda c: len(c.graphs[stage].nodes)
    )
    path = tmp_path / "gpt2.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator(f'.tce-compile[data-compile="{c.key}"]').click()
    page.locator(f'.tce-tab[data-stage="{stage}"]').click()
    expect(page.locator(".tce-renderer")).to_contain_text(f"{len(c.graphs[stage].nodes):,} nodes")
    block = page.locator(".tce-pane .gc-group[data-group='transformer.h.2']")
    expect(block).to_be_attached()
    before = page.locator(".tce-pane .gc-unit").count()
    assert before < 100  # grouped, not hundreds of boxes
    # the block may lie outside the canvas's view: a click event on it, as after panning
    block.dispatch_event("click")
    head = page.locator(".tce-pane .gc-frame .gc-head[data-group='transformer.h.2']")
    expect(head).to_have_count(1)
    assert page.locator(".tce-pane .gc-unit").count() > before
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "export_gpt2_dynamo_graph.png"))
    assert problems == []


def test_a_findings_suggestion_shows_highlighted_code_blocks_and_no_markdown_fences(
    open_page, tmp_path
):
    """The committed TORCH_TRACE log (a print between two graphs): its finding's
    suggestion carries a fenced Python block in Markdown; the page draws it as a code
    block with highlighted names and shows no fence or backtick anywhere in the card."""
    from playwright.sync_api import expect

    exp = compiler.load_trace(ROOT / "tests" / "data" / "traces" / "graph_break_eager")
    finding = exp.findings()[0]
    assert "```python" in finding.suggestion  # the Markdown the report keeps
    path = tmp_path / "fences.html"
    to_html(exp, path)
    page, problems = open_page(path)
    card = page.locator(".tce-finding", has_text=finding.title).first
    block = card.locator("pre.tce-suggestion-code")
    expect(block).to_have_count(1)
    expect(block).to_contain_text("torch._dynamo.config.reorderable_logging_functions.add(print)")
    expect(block.locator("span.t-k, span.t-nb, span.t-n, span.t-o").first).to_be_attached()
    expect(card.locator("code.tce-inline-code").first).to_be_attached()
    assert "`" not in card.locator(".tce-suggestion").inner_text()
    expect(card.locator(".tce-tried")).to_contain_text("loaded from a trace")
    page.screenshot(path=str(ARTIFACTS / "findings_code_blocks.png"))
    assert problems == []
