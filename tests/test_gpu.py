"""Capture on CUDA: Inductor writes Triton kernels; the same data model holds them."""

from __future__ import annotations

import os
from pathlib import Path

import programs
import pytest
import torch

import compiler

pytestmark = pytest.mark.gpu


def test_cuda_pointwise_records_triton_kernels_verbatim_with_provenance():
    x = torch.randn(256, 256, device="cuda")
    triton_cache_before = os.environ.get("TRITON_CACHE_DIR")
    exp = compiler.explore(programs.pointwise, x)
    assert exp.environment.device.startswith("cuda")
    (out,) = exp.compiles[0].output_code
    triton = [k for k in out.kernels if k.language == "triton"]
    assert triton, [k.language for k in out.kernels]
    k = triton[0]
    assert "@triton.jit" in k.source and k.source in out.text
    assert k.call_lines and k.post_grad_nodes
    assert k.user_stack and k.user_stack[0].filename.endswith("programs.py")
    assert out.schedule is not None and out.schedule.fused
    # every stage Triton lowered it to, for each autotuned variant, and which one won
    if k.info["autotune_cache_state"] == "hit":
        # Inductor's autotune cache already knew the winner: only it was compiled now
        assert "XBLOCK" in k.info["best_config"]
    else:
        assert len(k.variants) >= int(k.info["num_configs"]) > 1
    (chosen,) = [v for v in k.variants if v.chosen]
    stages = {s.stage: s for s in chosen.stages}
    assert set(stages) == {"ttir", "ttgir", "llir", "ptx", "sass"}
    assert "tt.func" in stages["ttir"].text and ".entry" in stages["ptx"].text
    # SASS costs a cuobjdump run per kernel: deferred, derived from the cubin when asked
    assert stages["sass"].error == compiler.gpu.triton_stages.SASS_DEFERRED
    (k,) = [k for k in compiler.with_sass(exp).compiles[0].kernels() if k.language == "triton"]
    (chosen,) = [v for v in k.variants if v.chosen]
    stages = {s.stage: s for s in chosen.stages}
    assert k.name in stages["sass"].text, stages["sass"].error
    assert chosen.target.startswith("cuda sm") and chosen.config["num_warps"]
    assert "XBLOCK" in chosen.config, chosen.config
    # capture moves no cache folder; Inductor itself sets TRITON_CACHE_DIR to its default
    # on the first Triton kernel of the process when the user has not
    after = os.environ.get("TRITON_CACHE_DIR")
    assert after == triton_cache_before or (
        triton_cache_before is None and after == inductor_default()
    )
    saved = os.environ.get("EXPLORER_SAVE_DIR")
    if saved:
        with open(os.path.join(saved, "cuda_pointwise.json"), "w") as fh:
            fh.write(exp.to_json())


def test_cuda_training_step_records_forward_and_backward_triton():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128)
    ).cuda()
    compiled = torch.compile(model)
    x = torch.randn(32, 64, device="cuda")

    def step():
        compiled(x).sum().backward()

    exp = compiler.explore(step, wrap=False)
    outs = exp.compiles[0].output_code
    assert [o.graph for o in outs] == ["forward", "backward"]
    for o in outs:
        assert any(k.language == "triton" for k in o.kernels)


def test_cuda_kernel_timing_is_warm_synchronized_and_below_the_measured_peak():
    torch.manual_seed(0)
    block = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024),
        torch.nn.LayerNorm(1024),
    ).cuda()  # fmt: skip
    # 16384 x 1024 fp32 is 64 MiB per activation: more than the H100's 50 MiB L2, so
    # each kernel streams from HBM rather than from what the previous kernel left in L2
    x = torch.randn(16384, 1024, device="cuda")
    with torch.no_grad():
        exp = compiler.explore(block, x, measure=True)
    peak = exp.environment.peak_copy_gbps
    assert peak is not None and 100 < peak < 10_000  # GB/s: any real GPU, H100 ~ 2-3k
    timed = [k for k in exp.compiles[0].kernels() if k.timing is not None]
    assert {k.language for k in timed} == {"triton", "extern"}, [k.name for k in timed]
    # library calls (cuBLAS under extern_kernels.addmm) are timed, without a byte estimate
    extern = [k for k in timed if k.language == "extern"]
    assert all(k.timing.median_us > 0 and k.timing.bytes is None for k in extern)
    timed = [k for k in timed if k.language == "triton"]
    print(f"\npeak copy bandwidth {peak:.0f} GB/s")
    print(f"{'kernel':<48}{'median_us':>10}{'MB':>9}{'GB/s':>9}{'of peak':>9}")
    for k in timed:
        t = k.timing
        assert t.calls >= 20 and 0 < t.min_us <= t.median_us
        out = next(o for o in exp.compiles[0].output_code if k in o.kernels)
        call = out.text.split("\n")[k.call_lines[0] - 1]
        assert t.bytes and t.bytes > 0, (k.name, call)
        # the peak is a measured copy_, which a fused streaming kernel can slightly beat
        assert 0 < t.achieved_gbps < peak * 1.25, (k.name, t)
        print(f"{k.name:<48}{t.median_us:>10.1f}{t.bytes / 1e6:>9.1f}"
              f"{t.achieved_gbps:>9.0f}{t.achieved_gbps / peak:>9.0%}")  # fmt: skip
    saved = os.environ.get("EXPLORER_SAVE_DIR")
    if saved:
        with open(os.path.join(saved, "cuda_mlp_block_timed.json"), "w") as fh:
            fh.write(exp.to_json())


def test_max_autotune_records_every_candidate_with_its_time_and_the_choice():
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    exp = compiler.explore(lambda x, y: (x @ y).relu(), a, b, mode="max-autotune-no-cudagraphs")
    (tuning, *_) = exp.compiles[0].autotuning
    assert tuning.op.startswith("mm") and tuning.input_sizes == ("512x512", "512x512")
    timed = [c for c in tuning.choices if c.ms is not None]
    assert len(timed) >= 2, tuning.choices
    assert tuning.chosen == min(timed, key=lambda c: c.ms).name
    # measured: the matmul's FLOPs and achieved TFLOP/s (2*512^3 multiply-adds)
    exp = compiler.explore(
        lambda x, y: (x @ y).relu(), a, b, mode="max-autotune-no-cudagraphs", measure=True
    )
    (mm,) = [k for k in exp.compiles[0].kernels() if k.timing and k.timing.flops]
    assert mm.timing.flops == 2 * 512**3
    assert 0 < mm.timing.achieved_tflops < 1000
    # the winner is what the output code runs: a Triton template or the aten library call
    (out,) = exp.compiles[0].output_code
    assert out.kernels


def test_triton_kernels_record_their_launch_grid():
    x = torch.randn(1000, 1000, device="cuda")
    exp = compiler.explore(programs.pointwise, x)
    (k,) = [k for k in exp.compiles[0].kernels() if k.language == "triton"]
    (chosen,) = [v for v in k.variants if v.chosen]
    assert k.grid == (-(-1_000_000 // int(chosen.config["XBLOCK"])),)


def test_reduce_overhead_records_cuda_graph_warmups_recordings_and_replays():
    x = torch.randn(256, 256, device="cuda")
    fn = torch.compile(programs.pointwise, mode="reduce-overhead")

    def three_calls():
        for _ in range(3):
            fn(x)

    exp = compiler.explore(three_calls, wrap=False, measure=True)
    m = exp.compiles[0].metrics
    assert m.cudagraph_skip_reason is None
    # CUDA graph trees warm the function up on the first call, record it on the next
    assert m.cudagraph_warmups >= 1 and m.cudagraph_recordings >= 1
    # and replay it from then on, the recording call included (CUDAGraphNode.__init__
    # ends with graph.replay(), torch/_inductor/cudagraph_trees.py): timed from the
    # loop's own calls 2 and 3, the warm-up left out
    assert exp.environment.cudagraph_replays_per_run == 2.0
    assert any("0/0 calls 2..3" in n for n in exp.notes), exp.notes
    assert all(k.timing for k in exp.compiles[0].kernels() if k.language == "triton")
    assert exp.environment.peak_matmul_tflops and exp.environment.peak_matmul_tflops > 1


def test_reduce_overhead_says_why_cuda_graphs_were_skipped():
    def mixed(x, y):
        return (x * 2).cpu() + y  # a device copy inside the graph

    exp = compiler.explore(
        mixed, torch.randn(8, device="cuda"), torch.randn(8), mode="reduce-overhead"
    )
    partitions = exp.counters.get("inductor.cudagraph_partitions", 0)
    reason = exp.compiles[0].metrics.cudagraph_skip_reason
    assert reason or partitions, (exp.counters, reason)


def inductor_default():
    from torch._inductor.runtime.cache_dir_utils import triton_cache_dir

    return triton_cache_dir(0)


def _gelu_affine(t):
    return torch.nn.functional.gelu(t * 2 + 1)


def _assert_every_triton_stage(exp):
    kernels = [k for c in exp.compiles for k in c.kernels() if k.language == "triton"]
    assert kernels, exp.errors
    for k in kernels:
        (chosen,) = [v for v in k.variants if v.chosen]
        texts = {s.stage: s.text for s in chosen.stages}
        assert all(texts[s] for s in ("ttir", "ttgir", "llir", "ptx")), (k.name, chosen.stages)
        assert not [e for e in exp.errors if e.stage == "triton"], exp.errors


@pytest.mark.parametrize("fx_graph_cache", [True, False])
@pytest.mark.parametrize("reset", [True, False])
def test_plain_compiles_and_captures_of_the_same_code_work_in_any_order(fx_graph_cache, reset):
    """Issue 17: capture once pointed TRITON_CACHE_DIR elsewhere, and Inductor's
    in-process kernel cache then looked cubins up in the wrong folder."""
    import torch._inductor.config as inductor_config

    x = torch.randn(512, 512, device="cuda")
    expected = _gelu_affine(x)
    triton_cache = os.environ.get("TRITON_CACHE_DIR")
    with inductor_config.patch(fx_graph_cache=fx_graph_cache):
        for _ in range(2):
            torch.testing.assert_close(torch.compile(_gelu_affine)(x), expected)
            if reset:
                torch._dynamo.reset()
            first = compiler.explore(_gelu_affine, x)
            second = compiler.explore(_gelu_affine, x, keep_caches=True)
            for exp in (first, second):
                _assert_every_triton_stage(exp)
            if reset:
                torch._dynamo.reset()
            torch.testing.assert_close(torch.compile(_gelu_affine)(x), expected)
    # the second capture reused the kernels compiled before it, and says so
    assert any("reused from a cache" in n for n in second.notes), second.notes
    assert os.environ.get("TRITON_CACHE_DIR") == triton_cache


def test_capture_first_then_plain_compile_in_a_fresh_process(subprocess_env, tmp_path):
    code = (
        "import torch, compiler\n"
        "def f(t):\n    return torch.nn.functional.gelu(t * 3 - 1)\n"
        "x = torch.randn(300, 300, device='cuda')\n"
        "compiler.explore(f, x)\n"
        "torch._dynamo.reset()\n"
        "torch.testing.assert_close(torch.compile(f)(x), f(x))\n"
        "exp = compiler.explore(f, x)\n"
        "assert all(v.stages[0].text for k in exp.compiles[0].kernels() "
        "for v in k.variants if v.chosen)\n"
        "print('ok')\n"
    )
    import subprocess
    import sys

    env = dict(subprocess_env, TORCHINDUCTOR_CACHE_DIR=str(tmp_path))
    env.pop("TRITON_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


def test_measure_accounts_for_every_call_eager_against_compiled():
    x = torch.randn(16, device="cuda")
    exp = compiler.explore(lambda t: t + 1, x, measure=True)
    t = exp.call_timing
    assert t is not None and t.runs == 20 and t.eager_ms > 0 and t.compiled_ms > 0
    assert t.eager_spread_ms[0] <= t.eager_ms <= t.eager_spread_ms[1]
    assert t.compiled_spread_ms[0] <= t.compiled_ms <= t.compiled_spread_ms[1]
    # one tiny kernel: the device is busy for a small part of the synchronised call
    assert t.device_ms is not None and 0 < t.device_ms < t.compiled_ms
    assert t.cpu_ms is not None and 0 < t.cpu_ms <= t.compiled_ms
    assert '"call_timing"' in exp.to_json()
    print("\n", t)


def test_reduce_overhead_call_timing_counts_replays_and_copies_into_graph_inputs():
    fn = torch.compile(programs.pointwise, mode="reduce-overhead")

    def fresh_input_each_call():
        return fn(torch.randn(256, 256, device="cuda"))

    exp = compiler.explore(fresh_input_each_call, wrap=False, measure=True)
    t = exp.call_timing
    assert t is not None and t.cudagraph_replays == 1.0, t
    # the new input is copied into the graph's static input buffer before each replay
    assert t.input_copy_bytes >= 256 * 256 * 4, t
    print("\n", t)


def test_library_calls_are_timed_and_convolutions_count_their_flops():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU())
    x = torch.randn(8, 3, 32, 32, device="cuda")
    with torch.no_grad():
        exp = compiler.explore(model.cuda().eval(), x, measure=True)
    (conv,) = [k for k in exp.compiles[0].kernels() if k.name == "extern_kernels.convolution"]
    assert conv.timing is not None and conv.timing.median_us > 0, exp.compiles[0].kernels()
    # 2 x output elements x (3 input channels x 3 x 3 window)
    assert conv.timing.flops == 2 * (8 * 16 * 32 * 32) * 27
    t = exp.call_timing
    # device time counts kernels, not the record_function ranges that span them
    assert t is not None and t.device_ms and t.device_ms <= 1.2 * t.compiled_ms, t


def test_kernel_lab_edit_runs_on_recorded_shapes_matches_the_original_and_is_timed(tmp_path):
    """The kernel lab's edit of a recorded kernel, run: the pointwise recording's kernel
    as recorded and edited (source and launch config), on inputs of the recorded shapes;
    the outputs agree and both are timed. Run on the GPU machine:
    ``python -m pytest -m gpu tests/test_gpu.py -k kernel_lab -s``."""
    import statistics
    from pathlib import Path

    import triton
    import triton.testing

    from compiler.gpu.kernel_work import launch_grid
    from compiler.lab.worker import load_module, runnable_source

    path = Path(__file__).resolve().parents[1] / "notebooks" / "recordings" / "pointwise.json"
    exp = compiler.Exploration.from_json(path.read_text())
    (out,) = exp.compiles[0].output_code
    (kernel,) = [k for k in out.kernels if k.language == "triton"]
    (chosen,) = [v for v in kernel.variants if v.chosen]
    # the unedited kernel lowered by the lab here reproduces what this machine's capture
    # recorded (the same Triton 3.6.0)
    assert compiler.relower(kernel).reproduced
    edited_source = kernel.source.replace(
        "tmp5 = tmp3 * tmp4", "tmp5 = tmp1 * tmp4 + tmp4  # (sin + 1) * 2, fused"
    )
    assert edited_source != kernel.source
    edited_config = {**chosen.config, "XBLOCK": str(2 * int(chosen.config["XBLOCK"])),
                     "num_warps": "4"}  # fmt: skip
    assert not compiler.relower(kernel, edited_source, edited_config).reproduced

    def launcher(source, config, tag):
        file = tmp_path / f"{tag}.py"
        file.write_text("\n" + runnable_source(source))
        module, heuristics = load_module(str(file), f"{kernel.name}_{tag}")
        fn = getattr(module, kernel.name)
        signature = heuristics.kwargs["triton_meta"]["signature"]
        numel = int(kernel.source.split("xnumel = ", 1)[1].split()[0])
        grid = launch_grid(out, kernel, config)
        assert grid == (-(-numel // int(config["XBLOCK"])),)
        blocks = {k: int(v) for k, v in config.items() if k in signature}
        options = {"num_warps": int(config["num_warps"]), "num_stages": int(config["num_stages"])}
        return lambda *args: fn[grid](*args, numel, **blocks, **options)

    numel = int(kernel.source.split("xnumel = ", 1)[1].split()[0])
    x = torch.randn(numel, device="cuda")
    expected, got = torch.empty_like(x), torch.empty_like(x)
    original = launcher(kernel.source, chosen.config, "recorded")
    edited = launcher(edited_source, edited_config, "edited")
    original(x, expected)
    edited(x, got)
    torch.cuda.synchronize()
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(expected, ((x.sin() + 1) * 2).relu(), rtol=1e-5, atol=1e-5)
    times = {"recorded": [], "edited": []}
    for _ in range(5):  # interleaved, medians
        times["recorded"].append(triton.testing.do_bench(lambda: original(x, expected)))
        times["edited"].append(triton.testing.do_bench(lambda: edited(x, got)))
    recorded_ms, edited_ms = (statistics.median(times[k]) for k in ("recorded", "edited"))
    print(f"kernel lab on {torch.cuda.get_device_name()}: {kernel.name} recorded "
          f"{recorded_ms * 1e3:.1f} us, edited {edited_ms * 1e3:.1f} us "
          f"({recorded_ms / edited_ms:.2f}x)")  # fmt: skip
    assert recorded_ms > 0 and edited_ms > 0


def test_user_triton_kernels_show_their_source_and_lower_stages():
    """A kernel the user wrote (``torch.library.triton_op`` + ``wrap_triton``) compiled
    into Inductor's output code: its source as the user wrote it, its Triton stages."""
    import inspect

    import triton
    import triton.language as tl
    from torch.library import triton_op, wrap_triton

    @triton.jit
    def user_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offsets = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(
            out_ptr + offsets,
            tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
            mask=mask,
        )

    @triton_op("explorer_test::user_add", mutates_args={})
    def user_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        wrap_triton(user_add_kernel)[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
        return out

    def f(x, y):
        return user_add(x.sin(), y) * 2

    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    exp = compiler.explore(f, x, y)
    kernels = [k for c in exp.compiles for out in c.output_code for k in out.kernels]
    user = [k for k in kernels if "user_add_kernel" in k.name or "user_add_kernel" in k.source]
    assert user, [k.name for k in kernels]
    (k,) = user[:1]
    written = inspect.getsource(user_add_kernel.fn).splitlines()
    body = [
        line.strip()
        for line in written[written.index(next(w for w in written if "def " in w)) + 1 :]
    ]
    assert all(line in k.source for line in body if line), "the source as the user wrote it"
    chosen = [v for v in k.variants if v.chosen] or list(k.variants)
    assert chosen, "Triton's stages of the user kernel"
    stages = {s.stage for s in chosen[0].stages}
    assert {"ttir", "ptx"} <= stages


def test_a_cuda_training_loop_is_timed_from_its_own_steps_and_ends_as_a_plain_run_ends():
    # issue 34: measure=True profiles the loop's own run and times each kernel from steps
    # 2..12 (step 1 compiles and autotunes); the model is called as often as in a plain
    # run. CUDA kernels may reduce in another order: the state within float tolerance.
    check_own_run_timing("cuda")


def check_own_run_timing(device: str) -> None:
    """The GPU test's logic; tests/test_observe.py runs it on the CPU (``cpp`` kernels)."""
    from test_observe import _state, _training, assert_same_state

    run, model, opt, sched = _training(device, backend="inductor")
    run()
    plain = _state(model, opt, sched)
    run, model, opt, sched = _training(device, backend="inductor")
    exp = compiler.explore(run, wrap=False, measure=True)
    assert run.forward_calls == 12, "measure=True called the model again"
    explored = _state(model, opt, sched)
    assert_same_state(explored, plain, exact=device == "cpu")
    assert explored[2] == 12
    assert torch.equal(explored[4], plain[4])  # the CPU generator is where it was
    if device == "cuda":
        assert torch.equal(explored[5], plain[5])  # and the CUDA one
    assert exp.call_timing is None  # eager against compiled would call the loop again
    language = "triton" if device == "cuda" else "cpp"
    kernels = [k for c in exp.compiles for k in c.kernels() if k.language == language]
    assert {k.id.split("/")[0] for k in kernels} == {"forward", "backward"}, kernels
    # each call line of the output code runs once a step: 11 timed steps
    assert all(k.timing and k.timing.calls == 11 * len(k.call_lines) for k in kernels), [
        (k.id, k.call_lines, k.timing) for k in kernels
    ]
    # library calls (cuBLAS on CUDA, the host's aten::addmm on a CPU) too, one per call
    extern = [k for c in exp.compiles for k in c.kernels() if k.language == "extern"]
    assert extern and all(
        k.timing and k.timing.calls == 11 * len(k.call_lines) for k in extern
    ), [(k.id, k.call_lines, k.timing) for k in extern]
    assert any("0/0 calls 2..12" in n and "Nothing called the target again" in n
               for n in exp.notes), exp.notes  # fmt: skip
    # the run itself is the profile: every kernel of the output code linked, 12 steps
    # (on CUDA, step 1 also launches each autotuned Triton kernel's configs to time them)
    p = exp.profile
    assert p is not None and not [n for n in p.unlinked if n.startswith(language)]
    runs = [k.events // len(next(x for x in kernels if x.id == k.kernel).call_lines)
            for k in p.kernels if k.name.startswith(language)]  # fmt: skip
    assert runs and (min(runs) >= 12 if device == "cuda" else set(runs) == {12}), runs
    # tlparse #46: the compiled model ran 12 times, and its backward (told by its kernels)
    assert [(r.compile, r.calls, r.backward_calls) for r in p.regions] == [("0/0", 12, 12)]


def test_a_compiled_optimizer_step_under_lambdalr_is_not_called_again_by_measure(tmp_path):
    # issue 42: the step recompiles on its float lr (torch 2.11: until the limit, 8), each
    # compile run once; capture once called this loop 67 times until Adam overflowed
    check_compiled_optimizer_step("cuda", tmp_path / "runs.txt")


def test_gpt2_generate_with_a_compiled_forward_is_timed_from_its_own_decode_steps(tmp_path):
    # issue 42: generate() recompiles its forward (prompt length, then the KV cache); the
    # profile once read a recompile's call lines in another compile's code (IndexError)
    check_generate("cuda", tmp_path / "runs.txt")


def _optimizer_loop(device: str, log, steps: int = 12):
    """A model, AdamW with a float lr under LambdaLR and ``@torch.compile def opt_step():
    opt.step()``; the forward is compiled too. ``log`` gets a line per run of the loop."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)
    ).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.9**step)
    forward = torch.compile(model)

    @torch.compile
    def opt_step():
        opt.step()

    data = torch.randn(steps, 16, 32, device=device)

    def run():
        with open(log, "a") as f:
            f.write("run\n")
        for i in range(steps):
            forward(data[i]).square().mean().backward()
            opt_step()
            opt.zero_grad()
            sched.step()

    return run, model, opt, sched


def check_compiled_optimizer_step(device: str, log) -> None:
    """The GPU test's logic, runnable on a CPU (``cpp`` kernels) as well."""
    from test_observe import _state, assert_same_state

    # Capture compiles the loop in a recompile region of its own, as a fresh process would;
    # the plain run must too. Earlier tests of this process compiled the same code objects
    # (Sequential.forward, Adam.step) at other shapes and up to the recompile limit, and
    # AdamW's first steps turn a last-bit difference of a gradient into a whole lr step
    # (m / sqrt(v) is about its sign), so a plain run that reused those entries ends
    # measurably elsewhere.
    torch.compiler.reset()
    run, model, opt, sched = _optimizer_loop(device, log.with_suffix(".plain"))
    run()
    plain = _state(model, opt, sched)
    # torch 2.11 has no recompile regions (isolate_recompiles): there the plain run's
    # Adam.step entries would count toward the capture's recompile limit, so the captured
    # loop starts from a reset Dynamo too
    torch.compiler.reset()
    run, model, opt, sched = _optimizer_loop(device, log)
    exp = compiler.explore(run, wrap=False, measure=True)
    assert log.read_text() == "run\n", "measure=True called the loop again"
    assert_same_state(_state(model, opt, sched), plain, exact=False)
    assert exp.call_timing is None and not [e for e in exp.errors if e.stage == "timing"]
    timed = [k for c in exp.compiles for k in c.kernels() if k.timing is not None]
    assert timed, exp.notes
    # the optimizer step's own compiles: timed from its steady calls, or, where each of
    # its compiles ran once, the notes name its warm-up calls and say nothing was timed
    step = [c for c in exp.compiles if c.code_name == "opt_step" or "step" in c.code_name]
    assert step, [c.label for c in exp.compiles]
    assert any(k.timing for c in step for k in c.kernels()) or any(
        "No steady call could be timed" in n or "warm-up calls" in n for n in exp.notes
    ), exp.notes


def check_generate(device: str, log) -> None:
    """The GPU test's logic, runnable on a CPU (``cpp`` kernels) as well."""
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256,
                                     n_positions=64, bos_token_id=0, eos_token_id=0)  # fmt: skip

    def make():
        torch.manual_seed(0)
        m = transformers.GPT2LMHeadModel(config).to(device).eval()
        m.forward = torch.compile(m.forward)
        return m

    prompt = torch.randint(1, 256, (1, 6), device=device)

    def generate(m, where):
        with open(where, "a") as f:
            f.write("run\n")
        with torch.no_grad():
            return m.generate(prompt, max_new_tokens=10, do_sample=False, pad_token_id=0,
                              min_new_tokens=10)  # fmt: skip

    plain_model = make()
    plain = generate(plain_model, log.with_suffix(".plain"))
    m = make()
    out = {}
    exp = compiler.explore(lambda: out.setdefault("ids", generate(m, log)), wrap=False,
                           measure=True)  # fmt: skip
    assert log.read_text() == "run\n", "measure=True called generate() again"
    assert torch.equal(out["ids"], plain)
    assert all(torch.equal(p, q) for p, q in zip(m.parameters(), plain_model.parameters(),
                                                 strict=True))  # fmt: skip
    assert not exp.errors, exp.errors
    timed = [k for c in exp.compiles for k in c.kernels() if k.timing is not None]
    assert timed, exp.notes
    assert exp.profile is not None and exp.profile.kernels
    # every profiled kernel's compile holds a kernel of that id (its own output code)
    keys = {str(c.compile_id): {k.id for k in c.kernels()} for c in exp.compiles}
    assert all(k.kernel in keys[k.compile] for k in exp.profile.kernels)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs (NCCL)")
def test_two_gpus_over_nccl_identical_ranks_agree_and_a_planted_size_is_found(tmp_path):
    # scripts/record_ranks_gpu.py: a GPT-2 step under torch.compile(DDP(model)), one rank a
    # GPU, TORCH_TRACE per run; ~90 s on 2 x H200 (tests/test_ranks_nccl.py replays a run)
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, str(root / "scripts" / "record_ranks_gpu.py"), str(tmp_path),
         "--nproc", "2", "--strategies", "ddp", "--runs", "same", "plant"],
        capture_output=True, text=True, timeout=540,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    same = compiler.load_trace(tmp_path / "ddp_same")
    assert set(same.ranks) == {0, 1}
    assert compiler.divergence(same).items == ()  # cuda:0 and cuda:1 are no difference
    plant = compiler.load_trace(tmp_path / "ddp_plant")
    ids = {r: {str(c.compile_id) for c in plant.compiles if c.rank == r} for r in (0, 1)}
    found = {(i.kind, i.compile_id) for i in compiler.divergence(plant).items}
    assert ids[1] - ids[0] and found == {("compiles", c) for c in ids[1] - ids[0]}


def test_attach_profile_links_every_triton_kernel_event_of_a_profiled_training_step(tmp_path):
    import test_profile

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256), torch.nn.Linear(256, 8)
    ).cuda()
    x = torch.randn(32, 64, device="cuda")
    compiled = torch.compile(model)
    trace = tmp_path / "trace.json"

    def run():
        compiled(x).sum().backward()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(3):
                compiled(x).sum().backward()
            torch.cuda.synchronize()
        prof.export_chrome_trace(str(trace))

    exp = compiler.explore(run, wrap=False, triton_stages=False)
    p = test_profile.check_triton(exp, trace)
    assert p.kernel_events >= p.linked_events >= len(test_profile.triton_events(exp, trace))
    # every explored Triton kernel ran three times in the profiled steps
    assert {k.events for k in p.kernels if k.name.startswith("triton_")} == {3}


class _ScaledByInput(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x, scale):
        return self.lin(x) * scale


def test_a_cpu_tensor_passed_to_a_cuda_graphed_model_is_one_finding_naming_the_input():
    # issue 43: a CPU scalar tensor on each call kept work out of CUDA graphs; torch's
    # record of it (a skip or a partition) becomes one finding naming `scale` and the
    # caller's line, not one per op torch lists
    model = _ScaledByInput().cuda()
    compiled = torch.compile(model, mode="reduce-overhead")

    def run():
        for i in range(4):
            compiled(torch.randn(32, 64, device="cuda"), torch.tensor(0.5 + i))  # CALLER

    exp = compiler.explore(run, wrap=False)
    said = [c.metrics.cudagraph_skip_reason for c in exp.compiles
            if c.metrics.cudagraph_skip_reason]  # fmt: skip
    partitions = exp.counters.get("inductor.cudagraph_partitions", 0)
    assert said or partitions or [s for s in compiler.cudagraphs(exp).sites if s.kept_out]
    found = [f for f in exp.findings() if f.kind.startswith(("cudagraph", "gpu.cudagraphs"))]
    assert len({f.cause for f in found}) == 1, [f.title for f in found]
    (f,) = found
    lines = Path(__file__).read_text().splitlines()
    caller = next(i for i, line in enumerate(lines, 1) if line.endswith("))  # CALLER"))
    assert "`scale`" in f.title and f"test_gpu.py:{caller}" in f.title, f.title


def _accumulate(buf, x):
    buf.add_(x)  # MUTATES
    return buf.sin()


def test_a_cuda_graph_skipped_for_a_mutated_input_names_the_users_parameter_and_caller():
    # issue 43: torch's "skipping cudagraphs due to mutated inputs" is about AOT's
    # placeholder (arg0_1); the finding names the user's parameter `buf`, the line that
    # mutates it and the line that passes it, once
    compiled = torch.compile(_accumulate, mode="reduce-overhead")
    buf = torch.zeros(64, device="cuda")

    def run():
        for _ in range(3):
            compiled(buf, torch.ones(64, device="cuda"))  # CALLER OF BUF

    exp = compiler.explore(run, wrap=False)
    sites = [s for s in compiler.cudagraphs(exp).sites if s.skip is not None]
    assert sites and sites[0].skip.cause == "mutated"  # torch's record of the skip
    assert sites[0].mutated == ("buf",)
    found = [f for f in exp.findings() if f.kind.startswith(("cudagraph", "gpu.cudagraphs"))]
    assert len({f.cause for f in found}) == 1, [f.title for f in found]
    (f,) = found
    lines = Path(__file__).read_text().splitlines()
    caller = next(i for i, line in enumerate(lines, 1) if line.endswith("# CALLER OF BUF"))
    mutates = next(i for i, line in enumerate(lines, 1) if line.endswith("# MUTATES"))
    assert "`buf`" in f.title and "arg0_1" not in f.title, f.title
    assert f"test_gpu.py:{mutates}" in f.title and f"test_gpu.py:{caller}" in f.title, f.title


def test_numerics_finds_the_planted_triton_relu_bug_at_its_kernel_and_line():
    from test_numerics import RELU_LINE, TwoLayers, _step

    torch.manual_seed(0)
    model = TwoLayers().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    bug = {"triton.inject_relu_bug_TESTING_ONLY": "accuracy"}
    found = compiler.numerics(_step(model, opt), torch.randn(64, 8, device="cuda"), options=bug)
    first = found.first_divergence
    assert first is not None and first.node == "relu" and first.graph == "forward"
    assert first.kernel.startswith("triton_") and first.kernel_id.endswith(first.kernel)
    assert first.source is not None and first.source.line == RELU_LINE
    assert all(n.compared or n.reason for n in found.nodes)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    finding = next(f for f in found.exploration.findings() if f.kind == "numerics.divergence")
    assert "the target's own output `result` differs too" in finding.title, finding.title
    storage = [(p.data_ptr(), p.dtype) for p in model.parameters()]
    clean = compiler.numerics(_step(model, opt), torch.randn(64, 8, device="cuda"))
    assert clean.first_divergence is None, clean.first_divergence
    # end to end against a float64 rerun of the step on the GPU, the model put back after
    assert clean.end_to_end and all(f.compared and f.within and f.rmse_bound is not None
                                    for f in clean.end_to_end), clean.end_to_end  # fmt: skip
    assert [(p.data_ptr(), p.dtype) for p in model.parameters()] == storage
    assert not [f for f in clean.exploration.findings() if f.kind.startswith("numerics.")]


def test_every_triton_kernel_of_a_gpt2_step_has_its_stages_and_config_even_past_150_chars():
    """Triton names a kernel's cache files after it, cut to 150 characters; a GPT-2
    backward fuses a persistent reduction whose name is longer (the capstone recording's
    ``..._native_layer_norm_backward_scalar_tensor_view_13``, 151). Every Triton kernel of
    the step keeps its chosen variant: the four text stages and its block sizes."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2)).cuda().train()
    ids = torch.randint(0, model.config.vocab_size, (2, 64), device="cuda")
    compiled = torch.compile(model)

    def step():
        compiled(input_ids=ids, labels=ids).loss.backward()

    exp = compiler.explore(step, wrap=False)
    kernels = [k for c in exp.compiles for k in c.kernels() if k.language == "triton"]
    assert kernels
    lacking = []
    for k in kernels:
        chosen = next((v for v in k.variants if v.chosen), None)
        texts = {s.stage for s in chosen.stages if s.text} if chosen else set()
        blocks = [key for key in chosen.config if key.endswith("BLOCK")] if chosen else []
        if not ({"ttir", "ttgir", "llir", "ptx"} <= texts and blocks):
            lacking.append((len(k.name), k.name))
    assert not lacking, lacking
    assert not [e for e in exp.errors if e.stage == "triton"], exp.errors


def test_a_cuda_graph_re_recording_shows_with_its_reason_in_the_pane_and_the_report():
    # pytorch #156820 (issue 45): a parameter replaced between calls moves a static input
    # of the CUDA graph (no recompile: Dynamo's guards hold), so CUDA graph trees record
    # the function again and log why; the CUDA graph pane and the report show the reason
    from explorer.panes.costs.cudagraphs import build_cudagraphs
    from explorer.report import summarize

    lin = torch.nn.Linear(64, 64).cuda()
    f = torch.compile(lin, mode="reduce-overhead")
    x = torch.randn(8, 64, device="cuda")

    def run():
        with torch.no_grad():
            for _ in range(3):
                f(x)
            lin.weight = torch.nn.Parameter(torch.randn_like(lin.weight))
            for _ in range(3):
                f(x)

    exp = compiler.explore(run, wrap=False, measure=True)
    assert len(exp.compiles) == 1, [c.recompile_reasons for c in exp.compiles]
    (site,) = build_cudagraphs(exp, None, "cudagraphs").sites
    log = exp.compiles[0].artifacts.get("cudagraphs_log", "")
    assert site.rerecords, f"no re-recording read from torch's CUDA graph messages: {log}"
    assert "(recording 2 of this compile" in site.rerecords[0], site.rerecords
    assert "re-recorded: " in summarize(exp)
    # and the run's calls of the compile (tlparse #46): all six, in one cache entry
    assert exp.profile is not None
    assert [(r.compile, r.calls) for r in exp.profile.regions] == [("0/0", 6)]
