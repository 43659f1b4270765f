"""The Kernel time pane: measured kernels, slowest first, against the measured copy peak."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import compiler
from explorer.view_model import STAGE_LABELS, build_view

RECORDINGS = Path(__file__).parent / "data" / "recordings"
TIMED = RECORDINGS / "cuda_mlp_block_timed.json"
UNTIMED = RECORDINGS / "cuda_pointwise.json"


@pytest.fixture(scope="module")
def exp() -> compiler.Exploration:
    return compiler.Exploration.from_json(TIMED.read_text())


def _panes(view: dict) -> dict[str, dict]:
    return {p["id"]: p for p in view["compiles"][0]["panes"]}


def _with_kernels(exp: compiler.Exploration, change) -> compiler.Exploration:
    """The recording with ``change(kernel)`` applied to every kernel of its output code."""
    (c,) = exp.compiles
    (oc,) = c.output_code
    oc = dataclasses.replace(oc, kernels=tuple(change(k) for k in oc.kernels))
    return dataclasses.replace(exp, compiles=(dataclasses.replace(c, output_code=(oc,)),))


def test_measured_kernels_are_listed_slowest_first_with_the_models_numbers(exp):
    view = build_view(exp, graph_renderer="builtin")
    panes = _panes(view)
    ids = list(panes)
    assert ids[-2:] == ["kernel_timing", "compilation_metrics"]
    pane = panes["kernel_timing"]
    assert pane["label"] == STAGE_LABELS["kernel_timing"] == "Kernel time"
    assert pane["group_label"] == "Runtime"
    (c,) = exp.compiles
    timed = [k for k in c.kernels() if k.timing is not None]
    assert len(timed) == 2
    slowest_first = sorted(timed, key=lambda k: -k.timing.median_us)
    assert [r["name"] for r in pane["rows"]] == [k.name for k in slowest_first]
    assert pane["rows"][0]["name"] == "triton_poi_fused_addmm_gelu_0"
    total = sum(k.timing.median_us * k.timing.calls for k in timed)
    assert pane["total_us"] == pytest.approx(total)
    for row, k in zip(pane["rows"], slowest_first, strict=True):
        t = k.timing
        assert row["kernel"] == f"inference/{k.name}"
        assert row["language"] == k.language == "triton"
        assert (row["calls"], row["median_us"], row["min_us"]) == (t.calls, t.median_us, t.min_us)
        assert row["bytes"] == t.bytes and row["mb"] == t.bytes / 1e6
        assert row["achieved_gbps"] == t.achieved_gbps
        assert row["peak_gbps"] == t.peak_gbps == exp.environment.peak_copy_gbps
        assert row["peak_pct"] == pytest.approx(100 * t.achieved_gbps / t.peak_gbps)
        assert 100 < row["peak_pct"] < 110  # both stream above the copy_ peak
        assert row["share"] == pytest.approx(t.median_us * t.calls / total)
        assert row["note"] == ""
    assert sum(r["share"] for r in pane["rows"]) == pytest.approx(1)
    # the library calls are not measured, and the pane says so
    assert pane["untimed"] == ["extern_kernels.mm", "extern_kernels.addmm"]
    assert pane["peak_gbps"] == exp.environment.peak_copy_gbps
    assert pane["peak_line"].startswith("measured copy bandwidth 2,946 GB/s; kernels reading")
    assert "can exceed it" in pane["peak_line"]
    # the kernel chips of the output code carry the same timing, for the details panel
    kernels = {k["id"]: k for k in panes["inference/inductor_output_code"]["kernels"]}
    assert kernels["inference/triton_poi_fused_addmm_gelu_0"]["timing"] == dataclasses.asdict(
        slowest_first[0].timing
    )
    assert kernels["inference/extern_kernels.mm"]["timing"] is None
    assert json.loads(json.dumps(view)) == view


def test_a_kernel_without_static_shapes_says_so_instead_of_bandwidth(exp):
    def no_bytes(k: compiler.Kernel) -> compiler.Kernel:
        if k.timing is None or "layer_norm" not in k.name:
            return k
        timing = dataclasses.replace(k.timing, bytes=None, achieved_gbps=None)
        return dataclasses.replace(k, timing=timing)

    pane = _panes(build_view(_with_kernels(exp, no_bytes), graph_renderer="builtin"))[
        "kernel_timing"
    ]
    row = next(r for r in pane["rows"] if "layer_norm" in r["name"])
    assert row["note"] == "shape not static"
    assert row["bytes"] is row["mb"] is row["achieved_gbps"] is row["peak_pct"] is None
    assert row["median_us"] > 0 and 0 < row["share"] < 1


def test_no_kernel_time_pane_without_timings(exp):
    untimed = compiler.Exploration.from_json(UNTIMED.read_text())
    assert "kernel_timing" not in _panes(build_view(untimed, graph_renderer="builtin"))
    stripped = _with_kernels(exp, lambda k: dataclasses.replace(k, timing=None))
    assert "kernel_timing" not in _panes(build_view(stripped, graph_renderer="builtin"))


def test_counters_and_the_cudagraph_skip_reason_are_in_the_compile_time_pane(exp):
    (c,) = exp.compiles
    metrics = dataclasses.replace(c.metrics, cudagraph_skip_reason="skipping cudagraphs: cpu")
    changed = dataclasses.replace(
        exp,
        compiles=(dataclasses.replace(c, metrics=metrics),),
        counters={"stats.unique_graphs": 1, "inductor.cudagraph_skips": 1, "aot.zero": 0},
    )
    pane = _panes(build_view(changed, graph_renderer="builtin"))["compilation_metrics"]
    assert ["CUDA graphs skipped", "skipping cudagraphs: cpu"] in pane["summary"]
    assert pane["counters"] == [["inductor.cudagraph_skips", 1], ["stats.unique_graphs", 1]]
    plain = _panes(build_view(exp, graph_renderer="builtin"))["compilation_metrics"]
    assert plain["counters"] == []
    assert not any(label == "CUDA graphs skipped" for label, _ in plain["summary"])
