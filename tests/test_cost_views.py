"""Issue 35, the views: the run's compile-time pane, the memory pane and the
saved-for-backward marks of the graph panes, in the widget's data and on the offline page.

Expectations come from torch: its own ``CompilationMetrics`` records
(``torch._dynamo.utils.get_compilation_metrics``) for compile seconds, the backward
graph's placeholders as Inductor hands them to a post-grad pass for the saved tensors,
and ``torch.cuda.max_memory_allocated`` as the H100 recording stored it for the peaks.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
import torch
from test_memory_cudagraphs import SavedInputs

import compiler
from compiler.measure.memory_peak import from_counters
from explorer.panes import build_index, build_pane, pane_json
from explorer.panes.costs.compile_time import LAZY

RECORDINGS = Path(__file__).parent / "data" / "recordings"


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.gelu(self.up(x))).softmax(-1)


@pytest.fixture(scope="module")
def run() -> tuple[compiler.Exploration, SavedInputs, dict[str, float]]:
    """A training step compiled by Inductor, then called with a new batch size (a
    recompile); torch's own compile metrics and saved placeholders beside it."""
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    rec = SavedInputs()
    compiled = torch.compile(Mlp(), options={"post_grad_custom_pre_pass": rec})

    def step(x: torch.Tensor, y: torch.Tensor) -> None:
        compiled(x).pow(2).mean().backward()
        compiled(y).pow(2).mean().backward()

    clear_compilation_metrics()
    exp = compiler.explore(step, torch.randn(4, 16), torch.randn(6, 16))
    torchs = {
        str(m.compile_id): m.entire_frame_compile_time_s
        for m in get_compilation_metrics()
        if m.entire_frame_compile_time_s
    }
    return exp, rec, torchs


def test_compile_time_pane_is_torchs_seconds_biggest_first(run):
    exp, _, torchs = run
    pane = build_pane(exp, None, "compile_time")
    assert pane.kind == "compile_time" and "compile_time" in [
        p.id for p in build_index(exp).compiles[0].panes
    ]
    assert {b.compile_id: b.seconds for b in pane.bars} == pytest.approx(torchs, abs=1e-3)
    assert [b.seconds for b in pane.bars] == sorted((b.seconds for b in pane.bars), reverse=True)
    # the phases are compiler.compile_time's, in pipeline order (nothing computed twice),
    # and the frame's add up to torch's seconds; a backward compiled lazily comes apart
    times = {t.compile: t for t in compiler.compile_time(exp).compiles}
    for b in pane.bars:
        frame = {p.name: p.seconds for p in b.phases if p.name != LAZY}
        assert frame == pytest.approx(dict(times[b.compile].phases), abs=1e-4)
        assert sum(frame.values()) == pytest.approx(b.seconds, abs=2e-3)
        lazy = [p.seconds for p in b.phases if p.name == LAZY]
        assert lazy == ([pytest.approx(times[b.compile].backward_seconds, abs=1e-4)]
                        if times[b.compile].backward_seconds else [])  # fmt: skip
        assert [p.slot for p in b.phases] == sorted(p.slot for p in b.phases)
        assert exp.compile(b.compile_id).key == b.compile  # a bar names a compile there is
    # AOTAutograd compiles the first backward lazily, at the first backward call: torch's
    # backward Inductor seconds (its bwd_compilation_metrics) lie inside that span
    first = exp.compiles[0]
    assert times[first.key].backward_seconds >= (first.metrics.backward_seconds or 0) > 0
    # the new batch size recompiled: marked with what it cost
    (again,) = [b for b in pane.bars if b.recompile]
    assert exp.compile(again.compile_id).is_recompile
    assert f"cost {torchs[again.compile_id]:.2f} s" in again.recompile
    assert pane.recompiles == f"1 recompile cost {torchs[again.compile_id]:.2f} s"
    assert "a warm process would still pay" in pane.warm


def test_saved_nodes_are_the_backwards_saved_placeholders(run):
    exp, rec, _ = run
    first = exp.compiles[0]
    assert not first.is_recompile and rec.names
    marked = {}
    for stage in ("aot_forward_graph", "aot_backward_graph"):
        g = build_pane(exp, first.key, stage)
        marked[stage] = {g.nodes.name[i] for i, _ in g.saved}
        assert all(text.startswith("saved for backward: ") for _, text in g.saved)
    # torch's backward graph receives exactly these tensors (SymInts aside)
    assert marked["aot_backward_graph"] == marked["aot_forward_graph"] == rec.names[0]
    back = build_pane(exp, first.key, "aot_backward_graph")
    size = {back.nodes.name[i]: text for i, text in back.saved}
    mem = build_pane(exp, None, "memory")
    (saved,) = [c for c in mem.compiles if c.compile == first.key]
    for row in saved.rows:
        assert size[row.node] == f"saved for backward: {row.size}"
        assert row.stage == "aot_forward_graph"
    assert sum(r.bytes or 0 for r in saved.rows) == rec.totals[0]
    # a graph no partitioner named carries no marks
    assert build_pane(exp, first.key, "dynamo_output_graph").saved == ()


def test_memory_pane_of_the_h100_gpt2_step_has_its_peaks():
    text = gzip.decompress((RECORDINGS / "pain_gpt2_step.json.gz").read_bytes()).decode()
    exp = compiler.Exploration.from_json(text)
    pane = build_pane(exp, None, "memory")
    measured = {p.label: p for p in from_counters(exp.counters)}
    assert {r.label for r in pane.peaks} == set(measured) == {"eager", "compiled"}
    for row in pane.peaks:
        p = measured[row.label]
        assert row.cells[0] == f"{p.forward_bytes / 2**20:.1f} MiB"
        assert row.cells[1] == f"{p.backward_bytes / 2**20:.1f} MiB"
        assert row.cells[3] == f"{p.pool_bytes / 2**20:.1f} MiB"
    assert "compiled against" in pane.summary
    assert pane.compiles and all(r.bytes is not None for c in pane.compiles for r in c.rows)
    pane_json(pane)  # plain JSON all the way down


@pytest.mark.slow
def test_the_offline_page_shows_both_panes_and_the_saved_marks(run, open_page, tmp_path):
    from playwright.sync_api import expect

    from explorer.export import to_html

    exp, rec, torchs = run
    path = tmp_path / "costs.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="compile_time"]').first.click()
    bars = page.locator("table.tce-ct tr.tce-ct-row")
    expect(bars).to_have_count(len(torchs))
    expect(page.locator(".tce-ct-warm")).to_contain_text("a warm process would still pay")
    expect(page.locator("tr.tce-ct-recompile")).to_have_count(1)
    # a click on the recompile's bar opens that compile
    again = next(c for c in exp.compiles if c.is_recompile)
    page.locator(f'tr[data-compile="{again.key}"] .tce-ct-bar').click()
    expect(page.locator(f'.tce-compile[data-compile="{again.key}"]')).to_have_class(
        re.compile(r"\btce-current\b")
    )
    expect(page.locator('[role="tab"][aria-selected="true"]')).to_have_attribute(
        "data-stage", "compilation_metrics"
    )
    page.locator('.tce-tab[data-stage="memory"]').first.click()
    table = page.locator(f'.tce-mem-compile[data-compile="{exp.compiles[0].key}"] table')
    expect(table.locator("tbody tr")).to_have_count(len(rec.names[0]))
    # a saved node opens the forward graph, outlined there, its panel saying so
    node = sorted(rec.names[0])[0]
    table.locator(f'tr[data-node="{node}"] .tce-mem-node').click()
    expect(page.locator('[role="tab"][aria-selected="true"]')).to_have_attribute(
        "data-stage", "aot_forward_graph"
    )
    expect(page.locator(".tce-pane .gc-legend-saved")).to_contain_text(
        f"saved for backward ({len(rec.names[0])})"
    )
    expect(page.locator(".gc-side-saved")).to_contain_text("saved for backward: ")
    expect(page.locator(".tce-pane .gc-node.gc-saved .gc-saved-dot").first).to_be_visible()
    assert problems == []
