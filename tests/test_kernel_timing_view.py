"""The Kernel time pane: measured kernels, slowest first, against the measured copy peak."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import built_view

import compiler
from explorer.panes import build_pane
from explorer.panes.labels import STAGE_LABELS

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
    view = built_view(exp)
    panes = _panes(view)
    ids = list(panes)
    assert ids[-2:] == ["kernel_timing", "compilation_metrics"]
    pane = panes["kernel_timing"]
    assert pane["label"] == STAGE_LABELS["kernel_timing"] == "Kernel time"
    assert STAGE_LABELS[pane["group"]] == "Runtime"
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

    pane = _panes(built_view(_with_kernels(exp, no_bytes)))["kernel_timing"]
    row = next(r for r in pane["rows"] if "layer_norm" in r["name"])
    assert row["note"] == "shape not static"
    assert row["bytes"] is row["mb"] is row["achieved_gbps"] is row["peak_pct"] is None
    assert row["median_us"] > 0 and 0 < row["share"] < 1


def test_no_kernel_time_pane_without_timings(exp):
    untimed = compiler.Exploration.from_json(UNTIMED.read_text())
    assert "kernel_timing" not in _panes(built_view(untimed))
    stripped = _with_kernels(exp, lambda k: dataclasses.replace(k, timing=None))
    assert "kernel_timing" not in _panes(built_view(stripped))


def test_counters_and_the_cudagraph_skip_reason_are_in_the_compile_time_pane(exp):
    (c,) = exp.compiles
    metrics = dataclasses.replace(c.metrics, cudagraph_skip_reason="skipping cudagraphs: cpu")
    changed = dataclasses.replace(
        exp,
        compiles=(dataclasses.replace(c, metrics=metrics),),
        counters={"stats.unique_graphs": 1, "inductor.cudagraph_skips": 1, "aot.zero": 0},
    )
    pane = _panes(built_view(changed))["compilation_metrics"]
    assert ["CUDA graphs skipped", "skipping cudagraphs: cpu"] in pane["summary"]
    assert pane["counters"] == [["inductor.cudagraph_skips", 1], ["stats.unique_graphs", 1]]
    plain = _panes(built_view(exp))["compilation_metrics"]
    assert plain["counters"] == []
    assert not any(label == "CUDA graphs skipped" for label, _ in plain["summary"])


SLOW = "triton_poi_fused_addmm_gelu_0"


def with_flops(exp: compiler.Exploration) -> compiler.Exploration:
    """The recording (which predates schema 1.4) with matmul FLOPs on its slower kernel,
    a measured matmul peak, and CUDA graph warm-ups, recordings and replays."""

    def flops(k: compiler.Kernel) -> compiler.Kernel:
        if k.name != SLOW:
            return k
        timing = dataclasses.replace(k.timing, flops=2 * 64 * 512 * 2048, achieved_tflops=12.5)
        return dataclasses.replace(k, timing=timing)

    changed = _with_kernels(exp, flops)
    (c,) = changed.compiles
    metrics = dataclasses.replace(c.metrics, cudagraph_warmups=1, cudagraph_recordings=2)
    env = dataclasses.replace(
        changed.environment, peak_matmul_tflops=50.0, cudagraph_replays_per_run=1.0
    )
    return dataclasses.replace(
        changed, compiles=(dataclasses.replace(c, metrics=metrics),), environment=env
    )


def test_matmul_flops_and_the_measured_matmul_peak_are_shown(exp):
    plain = _panes(built_view(exp))["kernel_timing"]
    assert plain["has_flops"] is False and plain["peak_matmul_tflops"] is None
    assert "matmul" not in plain["peak_line"] and plain["cudagraph_line"] == ""
    assert all(r["flops"] is r["gflop"] is r["achieved_tflops"] is None for r in plain["rows"])
    assert all(r["matmul_peak_pct"] is None for r in plain["rows"])

    view = built_view(with_flops(exp))
    pane = _panes(view)["kernel_timing"]
    assert pane["has_flops"] is True and pane["peak_matmul_tflops"] == 50.0
    assert pane["peak_line"].startswith("measured copy bandwidth 2,946 GB/s; kernels reading")
    assert pane["peak_line"].endswith("can exceed it; measured fp32 matmul 50.0 TFLOP/s")
    slow, fast = pane["rows"]
    assert slow["name"] == SLOW
    assert slow["flops"] == 2 * 64 * 512 * 2048
    assert slow["gflop"] == pytest.approx(2 * 64 * 512 * 2048 / 1e9)
    assert slow["achieved_tflops"] == 12.5
    assert slow["matmul_peak_pct"] == pytest.approx(25.0)
    assert fast["flops"] is fast["gflop"] is fast["achieved_tflops"] is None
    assert fast["matmul_peak_pct"] is None
    # the bandwidth figures are unchanged
    assert slow["peak_pct"] == plain["rows"][0]["peak_pct"]
    assert pane["cudagraph_line"] == (
        "CUDA graph warm-ups: 1; CUDA graph recordings: 2; CUDA graph replays per run: 1"
    )
    # the details panel's timing carries them too
    kernels = {k["id"]: k for k in _panes(view)["inference/inductor_output_code"]["kernels"]}
    timing = kernels[f"inference/{SLOW}"]["timing"]
    assert (timing["flops"], timing["achieved_tflops"]) == (2 * 64 * 512 * 2048, 12.5)
    assert json.loads(json.dumps(view)) == view


def test_cuda_graph_warmups_recordings_and_replays_are_in_the_compile_time_pane(exp):
    summary = _panes(built_view(with_flops(exp)))["compilation_metrics"]["summary"]
    assert ["CUDA graph warm-ups", "1"] in summary
    assert ["CUDA graph recordings", "2"] in summary
    assert ["CUDA graph replays per run", "1"] in summary
    plain = _panes(built_view(exp))["compilation_metrics"]["summary"]
    assert not any(label.startswith("CUDA graph") for label, _ in plain)
    # a fractional replay count (graphs re-recorded mid-run) keeps its digits; zero
    # warm-ups and recordings are left out
    env = dataclasses.replace(exp.environment, cudagraph_replays_per_run=2.5)
    summary = _panes(built_view(dataclasses.replace(exp, environment=env)))["compilation_metrics"][
        "summary"
    ]
    cuda = [row for row in summary if row[0].startswith("CUDA graph")]
    assert cuda == [["CUDA graph replays per run", "2.5"]]


def test_kernel_time_opens_with_the_whole_call_when_compiled_is_slower_than_eager():
    exp = compiler.Exploration.from_json(
        (Path(__file__).parents[1] / "notebooks" / "recordings" / "slow_reduce_overhead.json")
        .read_text()
    )
    c = exp.compiles[0]
    pane = build_pane(exp, c.key, "kernel_timing")
    t = exp.call_timing
    assert pane.call is not None and pane.call.slower
    assert pane.call.headline.startswith("Compiled is slower than eager: ")
    assert f"{t.compiled_ms:.3f} ms against {t.eager_ms:.3f} ms" in pane.call.headline
    rows = dict(pane.call.rows)
    assert rows["CUDA graph replays per call"] == "1"
    assert rows["bytes copied into CUDA graph inputs per call"] == f"{64 * 64 * 4:,}"
    assert pane.call.notes == t.notes
