"""What tlparse's users asked for (issue 45), on committed traces: the compile-time config
of each compile, diffable between two (tlparse #73); where each guard came from (#68)."""

from __future__ import annotations

from pathlib import Path

import torch

import compiler
from explorer.panes.costs.metrics import build_metrics

TRACES = Path(__file__).parent / "data" / "traces"


def test_each_compile_keeps_its_whole_config_and_two_compiles_diff():
    """cache_config/a and /b are one program, b with ``inductor.max_fusion_size = 32``."""
    a = compiler.load_trace(TRACES / "cache_config" / "a").compiles[0]
    b = compiler.load_trace(TRACES / "cache_config" / "b").compiles[0]
    config = compiler.config_of(a)
    assert set(config) == {"dynamo", "inductor", "compiler"}
    assert config["inductor"]["max_fusion_size"] == 64 and len(config["inductor"]) > 300
    changes = compiler.config_diff(a, b)
    assert [(ch.section, ch.name, ch.a, ch.b) for ch in changes] == [
        ("inductor", "max_fusion_size", "64", "32")
    ]
    assert compiler.config_diff(a, a) == ()


def test_the_metrics_pane_says_what_config_changed_since_the_compile_before():
    exp = compiler.load_trace(TRACES / "recompiles")
    rows = dict(build_metrics(exp, exp.compiles[1].key, "compilation_metrics").summary)
    assert rows["config"].startswith("dynamo ")
    assert rows[f"config vs {exp.compiles[0].key}"] == "the same"


def test_the_config_survives_the_file_form():
    exp = compiler.load_trace(TRACES / "cache_config" / "b")
    back = compiler.Exploration.from_json(exp.to_json())
    assert compiler.config_of(back.compiles[0]) == compiler.config_of(exp.compiles[0])


def test_each_tree_guard_names_the_user_line_that_installed_it():
    """Already covered before issue 45: Dynamo's guard tree ends each guard with the
    source line that needed it, which ``Guard.origin`` keeps (the guards pane shows it)."""
    exp = compiler.load_trace(TRACES / "graph_break_eager")
    origins = [g.origin for g in exp.compiles[0].guards.guards if g.kind == "TENSOR_MATCH"]
    assert origins and all("programs.py:" in o for o in origins)


def test_a_trace_says_it_holds_no_torch_compile_call_or_options():
    """tlparse #71 is live only: the report of a trace says so, and where to get them."""
    from explorer.report import summarize

    text = summarize(compiler.load_trace(TRACES / "recompiles"))
    (line,) = [ln for ln in text.splitlines() if ln.startswith("- **Options:**")]
    assert "not in a TORCH_TRACE log" in line and "live capture" in line


def test_colliding_compile_ids_of_isolated_regions_stay_two_compiles(open_page, tmp_path):
    """pytorch #196495: newer torch numbers each ``isolate_recompiles=True`` region's
    compiles apart, so two regions' compiles can both be ``0/0``. The fixture is a real
    torch 2.13 trace of two isolated regions of one function (``0/0``; ``0/1`` and ``0/2``)
    with region b's ids edited down to collide, as newer torch writes them
    (``tests/data/traces/isolated/make.py`` says how)."""
    from playwright.sync_api import expect

    from explorer.report import summarize

    exp = compiler.load_trace(TRACES / "isolated" / "colliding_ids.log")
    got = [(str(c.compile_id), c.key, c.parent) for c in exp.compiles]
    assert got == [("0/0", "0/0", None), ("0/0", "0/0#2", None), ("0/1", "0/1", "0/0#2")]
    # each compile keeps its own graph and metrics, none folded into another
    assert all("dynamo_output_graph" in c.graphs for c in exp.compiles)
    assert len({c.metrics.entire_frame_seconds for c in exp.compiles}) == 3
    text = summarize(exp)
    assert "## Compile `0/0`: `step`" in text and "## Compile `0/0#2`: `step`" in text
    assert "torch gave `0/0` to an earlier compile of this run too" in text
    assert compiler.Exploration.from_json(exp.to_json()).compiles == exp.compiles
    path = tmp_path / "colliding.html"
    to_page(exp, path)
    page, problems = open_page(path)
    expect(page.locator(".tce-compile .tce-cid")).to_have_text(["0/0", "0/0#2", "0/1"])
    assert problems == []


def to_page(exp: compiler.Exploration, path: Path) -> None:
    from explorer.export import to_html

    to_html(exp, path)


def sin_twice(x):
    return torch.sin(x) * 2


def test_each_compile_counts_the_calls_the_run_made_from_a_live_capture(open_page, tmp_path):
    """tlparse #46: runtime hits and time per compiled frame. A trace cannot say (its
    ``compilation_metrics_runtime`` are compile costs); the own run of a live capture's
    ``measure=True`` counts the ``Torch-Compiled Region`` events of each cache entry."""
    from playwright.sync_api import expect

    from explorer.report import summarize

    f = torch.compile(sin_twice, backend="eager", dynamic=False)
    shapes = (4, 4, 8, 4, 8, 8, 8)  # 0/0 serves shape 4, the recompile 0/1 shape 8

    def run():
        for n in shapes:
            f(torch.randn(n))

    exp = compiler.explore(run, wrap=False, measure=True)
    assert [c.key for c in exp.compiles] == ["0/0", "0/1"]
    assert exp.profile is not None
    got = {r.compile: (r.frame, r.calls) for r in exp.profile.regions}
    assert got == {"0/0": ("0/0", shapes.count(4)), "0/1": ("0/0", shapes.count(8))}
    for r in exp.profile.regions:
        assert r.total_us >= r.first_us > 0 and r.backward_calls == 0
    rows = dict(build_metrics(exp, "0/1", "compilation_metrics").summary)
    assert rows["calls in your run"].startswith("4 calls, ")
    assert rows["its frame's calls"].startswith("7 calls over 2 compiles (0/0 3, 0/1 4), ")
    text = summarize(exp)
    assert "| `0/1` | `sin_twice` |" in text and "- **Calls in your run:** 3 calls, " in text
    back = compiler.Exploration.from_json(exp.to_json())
    assert back.profile is not None and back.profile.regions == exp.profile.regions
    # in the page: the recompile's Compile time pane
    path = tmp_path / "calls.html"
    to_page(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-compile[data-compile="0/1"]').click()
    page.locator('.tce-tab[data-stage="compilation_metrics"]').click()
    expect(page.locator(".tce-pane")).to_contain_text("calls in your run")
    expect(page.locator(".tce-pane")).to_contain_text("7 calls over 2 compiles (0/0 3, 0/1 4)")
    assert problems == []


def test_a_trace_says_its_calls_need_a_live_capture():
    from explorer.report import summarize

    exp = compiler.load_trace(TRACES / "recompiles")
    (row,) = [v for k, v in build_metrics(exp, "0/1", "compilation_metrics").summary
              if k == "calls in your run"]  # fmt: skip
    assert row.startswith("Not in a TORCH_TRACE log") and "measure=True" in row
    assert "Calls in your run per compile: Not in a TORCH_TRACE log" in summarize(exp)


def test_a_profile_attached_to_a_trace_counts_each_compiles_calls():
    """``compiler.attach_profile`` reads the same regions from a user's own profiler trace:
    the committed CPU MLP step ran its compile twice, forward and backward."""
    from explorer.panes.runtime import build_profile

    data = TRACES.parent / "profiles"
    exp = compiler.Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
    exp = compiler.attach_profile(exp, data / "cpu_mlp.trace.json.gz")
    assert exp.profile is not None
    assert [(r.compile, r.calls, r.backward_calls) for r in exp.profile.regions] == [
        ("0/0", 2, 2)
    ]
    assert "; 2 calls of compiled code in 1 compile " in build_profile(exp, None, "profile").summary
    rows = dict(build_metrics(exp, "0/0", "compilation_metrics").summary)
    assert rows["calls in your run"].startswith("2 calls, ") and "backward 2 calls" in rows[
        "calls in your run"]


def broken_sin(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


def test_a_graph_breaks_resume_function_counts_as_a_frame_of_its_own_inside_its_caller():
    f = torch.compile(broken_sin, backend="eager")

    def run():
        for _ in range(4):
            f(torch.randn(4))

    exp = compiler.explore(run, wrap=False, measure=True)
    assert exp.profile is not None
    outer, resume = exp.profile.regions
    assert (outer.compile, outer.calls, resume.compile, resume.calls) == ("0/0", 4, "1/0", 4)
    assert resume.frame == "1/0" and resume.compile == exp.compiles[1].key
    # the resume function runs inside the call of the frame that broke: its time is in
    # the outer frame's, and said so
    assert outer.inner_us == resume.total_us > 0
    assert "of which " in dict(build_metrics(exp, "0/0", "compilation_metrics").summary)[
        "calls in your run"]
