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
