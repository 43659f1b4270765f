"""The explorer never breaks the user's program (issue 42): a failure of the explorer's own
work (a recording hook, linking the profile, an advisor rule) stops at one boundary, is kept
in the Exploration's errors with its stage and traceback, and is shown; the user's run ends
as a plain run would, once.

Each test plants a failure in our own code, as it is imported where it is called, and runs
the real thing around it.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from explorer.panes import build_index
from explorer.report import summarize


def planted(*_args: object, **_kwargs: object) -> object:
    raise IndexError("planted: list index out of range")


def _loop(ran: list[int], steps: int = 3, backend: str = "inductor"):
    """A small training loop over a compiled model; ``ran`` gets one entry per call of it,
    a side effect nothing the explorer saves can undo."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model, backend=backend)
    data, target = torch.randn(steps, 4, 8), torch.randn(steps, 4, 2)

    def run():
        ran.append(1)
        for i in range(steps):
            torch.nn.functional.mse_loss(compiled(data[i]), target[i]).backward()
            opt.step()
            opt.zero_grad()

    return run, model


@pytest.mark.slow
def test_a_failure_linking_the_profile_is_kept_and_the_loop_ran_once(monkeypatch):
    from compiler.profile import attach

    ran: list[int] = []
    run, model = _loop(ran)
    run()
    plain = [p.detach().clone() for p in model.parameters()]

    # the output-code reader the profile's linking calls, as attach.py imported it
    monkeypatch.setattr(attach, "call_source_nodes", planted)
    ran.clear()
    run, model = _loop(ran)
    exp = compiler.explore(run, wrap=False, measure=True)
    assert ran == [1], "the target ran more than once"
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), plain, strict=True))
    assert exp.compiles  # what was recorded before the failure is kept
    failed = [e for e in exp.errors if "planted" in e.traceback]
    assert [e.stage for e in failed] == ["profile"], exp.errors
    assert "compiler/profile/attach.py" in failed[0].traceback
    assert failed[0].message.startswith("the explorer's own profile step failed (IndexError")
    # shown in the report and in the widget's index
    assert "**profile:** the explorer's own profile step failed" in summarize(exp)
    shown = build_index(exp).errors
    assert any(e.stage == "profile" and "planted" in e.traceback for e in shown)


def test_a_recording_hook_that_fails_leaves_the_run_as_a_plain_run(monkeypatch):
    # torch calls the trace handler for every event of the compile; it parses each one
    from compiler.capture import recording

    monkeypatch.setattr(recording, "event_from_dict", planted)
    calls: list[int] = []

    def f(x):
        calls.append(1)
        return x.sin() + 1

    x = torch.randn(8)
    exp = compiler.explore(f, x, backend="aot_eager")
    assert calls == [1]
    failed = [e for e in exp.errors if e.stage == "recording"]
    assert len(failed) == 1 and "planted" in failed[0].traceback, exp.errors
    assert "times." in failed[0].message  # once per event, kept once
    # the trace's stages are missing and the error says why; the bytecode hook still ran
    assert [c.graphs for c in exp.compiles] == [{}]


def test_a_failing_recording_hook_lets_the_users_exception_through_unchanged(monkeypatch):
    from compiler.capture import recording

    monkeypatch.setattr(recording, "event_from_dict", planted)
    f = torch.compile(lambda x: x.sin(), backend="eager")
    theirs = KeyError("the user's own")

    def run(x):
        f(x)
        raise theirs

    with pytest.raises(compiler.InputError) as caught:
        compiler.explore(run, torch.randn(4), wrap=False)
    # the documented wording, from the user's own exception
    assert caught.value.__cause__ is theirs
    assert caught.value.exploration is not None
    assert any(e.stage == "recording" for e in caught.value.exploration.errors)


def test_an_advisor_rule_that_fails_is_an_advisor_error_not_an_exception(monkeypatch):
    from compiler.advise import diagnose

    family = next(f for f in diagnose._FAMILIES if f.__name__.endswith("graph_breaks"))
    monkeypatch.setattr(family, "findings", planted)

    def f(x):
        return x * x.sum().item()

    exp = compiler.explore(f, torch.randn(4), backend="eager")
    assert exp.findings() == ()
    (failed,) = [e for e in exp.stage_errors() if e.stage == "advisor"]
    assert "planted" in failed.traceback and failed not in exp.errors
    assert "**advisor:** the explorer's own advisor step failed" in summarize(exp)
    assert any(e.stage == "advisor" for e in build_index(exp).errors)


def test_a_restore_that_fails_is_kept_and_the_users_exception_goes_on(monkeypatch):
    from compiler.capture.observe import observe
    from compiler.capture.state import Snapshot

    monkeypatch.setattr(Snapshot, "restore", planted)
    theirs = ValueError("the user's own")
    obs = observe(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError) as caught, obs, obs.extra_calls():
        raise theirs
    assert caught.value is theirs
    (failed,) = obs.boundary.take()
    assert failed.stage == "restore" and "planted" in failed.traceback


def test_each_observation_drops_only_its_own_compiles():
    # the fresh compiles live in the observation (no module-level registry keyed by id())
    from test_exported import Counting

    from compiler.capture import spec as spec_module
    from compiler.capture.observe import observe

    assert not hasattr(spec_module, "_FRESH")
    backend = Counting()
    how = spec_module.CompileSpec(backend=backend)
    x = torch.randn(4)
    with observe(torch.cos) as outer:
        first = outer.compiled(how, torch.cos)
        first(x)
        with observe(torch.cos) as inner:
            inner.compiled(how, torch.cos)(x)
        assert backend.compiles == 2
        first(x)  # the outer compile's entry survived the inner observation's exit
        assert backend.compiles == 2
    assert outer.evict(first) == 0  # already dropped on exit


def test_a_compile_cell_whose_recording_hook_fails_still_runs_once_and_says_why(monkeypatch):
    import ast

    from compiler.capture import recording
    from compiler.capture.cell import explore_cell
    from compiler.capture.spec import CompileSpec

    monkeypatch.setattr(recording, "event_from_dict", planted)
    ns = {"torch": torch, "x": torch.ones(3), "seen": []}
    run = explore_cell(ast.parse("seen.append(1)\ny = x.sin()\ny + 1"), "<cell>", ns,
                       spec=CompileSpec(backend="eager"))  # fmt: skip
    assert run.has_value and torch.equal(run.value, torch.ones(3).sin() + 1)
    assert ns["seen"] == [1]
    assert [e.stage for e in run.exploration.errors] == ["recording"]
