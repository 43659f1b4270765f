"""``explore(..., measure=True)`` decides from the run (issue 42, part 3): calls are counted
per compiled frame over all its recompiles, the target is called again only where its run
called every compiled frame once, and the profiler's own prints stay out of the user's
output.

tests/conftest.py resets Dynamo around every test. The real runs here use the eager
backend: the decision and the extra calls do not depend on which kernels ran.
"""

from __future__ import annotations

import torch

import compiler
from compiler.profile.calls import calls_again, frame_calls, untimed_note
from compiler.profile.events import region_calls
from compiler.profile.own_run import OwnRun


def test_twelve_calls_of_one_frame_over_eight_compiles_call_the_target_no_more():
    # as recorded from a compiled optimizer step under LambdaLR on an H200 (torch 2.11):
    # the step recompiles on its float lr until the limit, then the last compile serves
    recorded = [f"2/{min(n, 7)}" for n in range(12)]
    frames = frame_calls(recorded)
    assert list(frames) == ["2/0"]
    assert len(frames["2/0"].calls) == 12 and len(frames["2/0"].compiles) == 8
    assert frames["2/0"].warm_ups == (1, 2, 3, 4, 5, 6, 7, 8)
    assert not calls_again(frames)


def test_every_compile_running_once_is_still_a_loop_and_says_no_steady_call_was_timed():
    frames = frame_calls(["0/0", "1/0", "0/1", "1/0", "0/2", "1/0"])
    assert not calls_again(frames)
    note = untimed_note(frames)
    assert "Frame 0/0 ran 3 times in 3 compiles (0/0, 0/1, 0/2), warm-up calls 1, 2, 3" in note
    assert "The target was not called again" in note


def test_a_one_step_target_with_a_graph_break_counts_as_one_step():
    # a frame and its resume function, each called once: the only case of extra calls
    assert calls_again(frame_calls(["0/0", "1/0"]))
    assert not calls_again(frame_calls([]))  # no compiled code ran: nothing to time
    # the capture's renumbered ids name the frames where torch's differ
    assert list(frame_calls(["5/0", "6/0"], {"5/0": "0/0", "6/0": "1/0"})) == ["0/0", "1/0"]


def broken_step(x):
    y = x.sin()
    print("a graph break")
    return y.cos()


def test_the_rule_reads_a_real_profiled_run_with_a_graph_break_as_one_step():
    step = torch.compile(broken_step, backend="eager")
    run = OwnRun(cuda=False)
    with run.profiling():
        step(torch.randn(4))
    frames = frame_calls(region_calls(run.spans))
    assert len(frames) == 2 and calls_again(frames)


class Growing(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x).relu()


def test_a_loop_recompiling_on_every_step_runs_once_under_measure(tmp_path):
    # shapes change on every call with dynamic=False: each step is a new compile of the
    # same frame, run once. The file append is what no snapshot can take back.
    log = tmp_path / "runs.txt"
    compiled = torch.compile(Growing(), backend="eager", dynamic=False)

    def run():
        with log.open("a") as f:
            f.write("run\n")
        for n in range(1, 7):
            compiled(torch.randn(n, 4))

    exp = compiler.explore(run, wrap=False, measure=True)
    assert log.read_text() == "run\n"
    assert len(exp.compiles) == 6 and all(c.compile_id.frame_id == 0 for c in exp.compiles)
    untimed = [n for n in exp.notes if "No steady call could be timed" in n]
    assert untimed and "Frame 0/0 ran 6 times in 6 compiles" in untimed[0], exp.notes
    assert not any(e.stage == "timing" for e in exp.errors)


def test_a_one_step_target_is_the_one_the_rule_calls_again_on_cuda(tmp_path):
    # on a CPU capture makes no extra calls: the timing error says what CUDA does
    log = tmp_path / "runs.txt"
    compiled = torch.compile(broken_step, backend="eager")

    def step():
        with log.open("a") as f:
            f.write("run\n")
        return compiled(torch.randn(4))

    exp = compiler.explore(step, wrap=False, measure=True)
    if torch.cuda.is_available():  # warm-ups, profiled, eager and compiled calls
        assert log.read_text().count("run") > 1 and exp.call_timing is not None
        return
    assert log.read_text() == "run\n"
    errors = [e for e in exp.errors if e.stage == "timing"]
    assert errors and "called each compiled frame once" in errors[0].message


def said(x):
    print("the user's own line")
    return x + 1


def test_the_profilers_own_prints_go_to_the_notes_and_the_users_prints_stay(capfd):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        pass
    bare = "".join(capfd.readouterr())  # what this build's profiler prints on its own
    compiled = torch.compile(said, backend="eager")

    def run():
        for _ in range(2):
            compiled(torch.ones(2))

    exp = compiler.explore(run, wrap=False, measure=True)
    out, err = capfd.readouterr()
    assert out.count("the user's own line") == 2  # printed at trace time and eagerly: both
    assert "profiler_start" not in out + err and "profiler_stop" not in out + err
    printed = [n for n in exp.notes if n.startswith("torch's profiler printed")]
    # kineto prints its USDT lines on some builds only: where it printed, the notes have them
    assert bool(printed) == ("profiler_start" in bare), (bare, exp.notes)
    assert all("profiler_start" in n and "profiler_stop" in n for n in printed)


class Decoder(torch.nn.Module):
    """A prompt through the first layers, then one token at a time through all of them:
    the decode compiles' output code is three times the prompt's, and each layer's matmul
    is a library call (``extern_kernels.mm``, no C++ kernel to build)."""

    def __init__(self) -> None:
        super().__init__()
        weights = [torch.nn.Parameter(torch.randn(8, 8) / 3) for _ in range(24)]
        self.layers = torch.nn.ParameterList(weights)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = self.layers[:2] if x.shape[0] > 1 else self.layers
        for w in layers:
            x = x @ w
        return x


def test_a_decode_loop_whose_forward_recompiles_links_each_call_to_its_own_output_code():
    # GPT-2 generate() with a compiled forward once raised IndexError here: the kernel
    # id ``inference/extern_kernels.mm`` names a kernel in every compile of the frame, and
    # the profile took one compile's output code for another's call lines
    torch.manual_seed(0)
    model = Decoder()
    model.forward = torch.compile(model.forward)

    def generate():
        with torch.no_grad():
            h = model(torch.randn(5, 8))
            for _ in range(4):
                h = model(h[-1:])
        return h

    exp = compiler.explore(generate, wrap=False, measure=True)
    assert exp.profile is not None and not exp.errors
    by_compile = {k.compile: k for k in exp.profile.kernels}
    ids = {str(c.compile_id) for c in exp.compiles}
    assert len(exp.compiles) >= 2 and set(by_compile) <= ids
    # every compile the decode steps ran is linked; torch 2.11 (H200) links none of the
    # prompt compile's one call (0/0), 2.13 and 2.14.1 do
    assert ids - {"0/0"} <= set(by_compile), (ids, set(by_compile))
    if "0/0" in by_compile:
        assert by_compile["0/0"].events == 2  # the prompt's two matmuls, in its own compile
        assert sum(k.events for k in exp.profile.kernels) == 2 + 4 * 24
