"""GPU recordings open on a CPU-only machine exactly like a live capture."""

from __future__ import annotations

from pathlib import Path

import compiler

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def test_timed_recording_carries_per_kernel_time_bytes_and_bandwidth():
    exp = compiler.Exploration.from_json((RECORDINGS / "cuda_mlp_block_timed.json").read_text())
    peak = exp.environment.peak_copy_gbps
    assert peak and peak > 1000
    timed = [k for k in exp.compiles[0].kernels() if k.timing is not None]
    assert {k.language for k in timed} == {"triton"} and len(timed) >= 2
    for k in timed:
        assert k.timing.bytes and k.timing.achieved_gbps and k.timing.median_us > 0
        assert k.timing.peak_gbps == peak


def test_matmul_flops_are_counted_over_every_call_site():
    from compiler.gpu.kernel_work import kernel_flops

    exp = compiler.Exploration.from_json(
        (NOTEBOOK_RECORDINGS / "transformer_block.json").read_text()
    )
    (out,) = exp.compiles[0].output_code
    (mm,) = [k for k in out.kernels if k.name == "extern_kernels.mm"]
    # q/k/v in-projection, attention out-projection and the MLP's two layers
    expected = 2 * 1024 * 256 * (768 + 256 + 1024) + 2 * 1024 * 1024 * 256
    assert len(mm.call_lines) == 4 and kernel_flops(out, mm) == expected
    # pointwise kernels have no matmul FLOPs to count
    assert all(kernel_flops(out, k) is None for k in out.kernels if "_poi_" in k.name)


def test_launch_grid_follows_the_chosen_block_size():
    from compiler.gpu.kernel_work import launch_grid

    exp = compiler.Exploration.from_json((RECORDINGS / "cuda_pointwise.json").read_text())
    (out,) = exp.compiles[0].output_code
    (kernel,) = [k for k in out.kernels if k.language == "triton"]
    for variant in kernel.variants:
        block = variant.config.get("XBLOCK")
        expected = (65536 // int(block),) if block else ()
        assert launch_grid(out, kernel, variant.config) == expected


def test_cuda_recording_loads_on_cpu_with_its_triton_kernel_linked():
    exp = compiler.Exploration.from_json((RECORDINGS / "cuda_pointwise.json").read_text())
    assert exp.unknown_keys == ()
    assert exp.environment.device.startswith("cuda") and exp.environment.triton
    (out,) = exp.compiles[0].output_code
    (kernel,) = [k for k in out.kernels if k.language == "triton"]
    assert "@triton.jit" in kernel.source and kernel.source in out.text
    assert set(kernel.post_grad_nodes) == {"sin", "add", "mul", "relu"}
    assert out.schedule is not None and out.schedule.fused[0].members == ("op0",)
    # Triton's lower stages came along: every autotuned variant, the winner marked
    (chosen,) = [v for v in kernel.variants if v.chosen]
    stages = {s.stage: s.text for s in chosen.stages}
    assert "tt.func" in stages["ttir"] and ".entry" in stages["ptx"]
    assert kernel.name in stages["sass"]
    assert chosen.config["XBLOCK"] and chosen.target == "cuda sm90 warp32"
    assert compiler.Exploration.from_json(exp.to_json()) == exp


NOTEBOOK_RECORDINGS = Path(__file__).parent.parent / "notebooks" / "recordings"


def test_notebook_recordings_load_and_render_on_cpu_within_the_size_budget():
    from conftest import built_view

    files = sorted(NOTEBOOK_RECORDINGS.glob("*.json"))
    files = [f for f in files if f.name != "environment.json"]
    capstone = {f.stem for f in files if f.stem.startswith("capstone_")}
    assert {f.stem for f in files} - capstone == {
        "graph_break", "pointwise", "transformer_block", "conv_net", "matmul_max_autotune",
        "training_step", "slow_tiny_inputs", "slow_reduce_overhead",
    }  # fmt: skip
    total = sum(f.stat().st_size for f in files)
    assert total < 10 * 1024 * 1024
    # the capstone's real models: their own test below
    for f in (f for f in files if f.stem not in capstone):
        exp = compiler.Exploration.from_json(f.read_text())
        assert exp.unknown_keys == () and exp.environment.device.startswith("cuda")
        kernels = [k for c in exp.compiles for k in c.kernels() if k.language == "triton"]
        assert kernels, f.name
        assert all(any(v.chosen for v in k.variants) for k in kernels), f.name
        assert all(k.timing is not None for k in kernels), f.name
        # every stage of the chosen variant, SASS included (disassembled when recorded)
        for k in kernels:
            (chosen,) = [v for v in k.variants if v.chosen]
            assert all(s.text for s in chosen.stages), (f.name, k.name)
            # a 1-D grid is known wherever the chosen config names its block size
            if "'grid_type': 'Grid1D'" in k.source and "XBLOCK" in chosen.config:
                assert k.grid, (f.name, k.name)
        view = built_view(exp)
        assert view["compiles"], f.name
        assert all(c["panes"] for c in view["compiles"]), f.name


def test_recordings_of_slower_compiled_calls_say_where_the_time_goes():
    tiny, graphs = (
        compiler.Exploration.from_json((NOTEBOOK_RECORDINGS / f"{name}.json").read_text())
        for name in ("slow_tiny_inputs", "slow_reduce_overhead")
    )
    for exp in (tiny, graphs):
        t = exp.call_timing
        assert t is not None and t.runs >= 10 and t.compiled_ms > t.eager_ms
        assert t.device_ms is not None and t.cpu_ms is not None
        assert any("slower than eager" in n for n in t.notes), t.notes
    t = graphs.call_timing
    # one replay per call, each after copying the new 64x64 fp32 input into the graph
    assert t.cudagraph_replays == 1.0 and t.input_copy_bytes == 64 * 64 * 4
    assert t.cpu_ms > 2 * t.device_ms


def test_capstone_recordings_are_timed_training_steps_of_library_models():
    """scripts/record_capstone_gpu.py: a real model's training step, forward and backward
    compiled by Inductor, with torch's compile seconds and the step measured."""
    files = sorted(NOTEBOOK_RECORDINGS.glob("capstone_*.json"))
    assert any(f.stem == "capstone_gpt2_default" for f in files), files
    for f in files:
        exp = compiler.Exploration.from_json(f.read_text())
        assert exp.unknown_keys == () and exp.environment.device.startswith("cuda"), f.name
        graphs = {out.graph for c in exp.compiles for out in c.output_code}
        assert {"forward", "backward"} <= graphs, (f.name, graphs)
        assert any(c.metrics.entire_frame_seconds for c in exp.compiles), f.name
        kernels = [k for c in exp.compiles for k in c.kernels()]
        assert any(k.language == "triton" for k in kernels), f.name
        assert any(k.timing is not None for k in kernels), f.name
        t = exp.call_timing
        assert t is not None and t.runs >= 10 and t.eager_ms > 0 and t.compiled_ms > 0, f.name
        # max-autotune modes record the candidates they timed; the default mode has none
        assert bool([a for c in exp.compiles for a in c.autotuning]) == ("autotune" in f.stem)
        # Triton's lowered stages, like every GPU recording (issue 37): each chosen variant
        # holds every stage's text, and nearly every Triton kernel has its chosen variant
        triton = [k for k in kernels if k.language == "triton"]
        chosen = [v for k in triton for v in k.variants if v.chosen]
        assert len(chosen) >= 0.9 * len(triton), (f.name, len(chosen), len(triton))
        assert all(v.stages and all(s.text for s in v.stages) for v in chosen), f.name
        assert {"ttir", "ptx", "sass"} <= {s.stage for s in chosen[0].stages}, f.name
