"""One finding per cause, keyed the same on every torch: a guard's source read in one
spelling whatever wrapper torch prints around it, a graph break's consequences (its
resume function's recompiles, guards on what it made Python-visible, an untraceable
call on its line) folded into it, and a title and fix that name the kind of guard.

Expectations come from torch: the recompile reasons it recorded for each program
(asserted first), never from the advisor's output.
"""

from __future__ import annotations

import collections

import pytest
import torch

import compiler
from compiler.advise.findings import Finding
from compiler.parse.guards.recompiles import failed_guard, guard_source


def _above_info(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.severity != "info"]


def _one_per_cause(findings: tuple[Finding, ...]) -> None:
    causes = collections.Counter(f.cause for f in findings)
    assert [c for c, n in causes.items() if n > 1] == []


def _reasons(exp: compiler.Exploration) -> list[str]:
    return [r.reason for c in exp.compiles for r in c.recompile_reasons]


# The same program's failed guard as each torch prints it. 2.11 (the GPU machine, read
# from the H200 run) wraps the scheduled lr in ``___as_tensor(...).item()``;
# 2.13 and 2.14.1 print the source bare; older logs keep Dynamo's ``L['self']``.
_LR = {
    "2.11": "___as_tensor(self.param_groups[0]['lr']).item() == 0.01"
    "  # for group in self.param_groups:  # optim/adam.py:229 in step",
    "2.13": "self.param_groups[0]['lr'] == 0.01"
    "                       # for group in self.param_groups:  # optim/adam.py:229 in step",
    "2.14.1": "self.param_groups[0]['lr'] == 0.01"
    "                       # for group in self.param_groups:  # optim/adam.py:229 in step",
    "L-form": "___as_tensor(L['self'].param_groups[0]['lr']).item() == 0.009000000000000001",
}
_DICT = {
    "2.11": "not ___dict_contains('mask', L['batch'])  # if 'mask' in batch:  # m.py:3 in f",
    "2.13": "not ___dict_contains('mask', batch)                      # if 'mask' in batch:",
    "2.14.1": "not ___dict_contains('mask', batch)                      # if 'mask' in batch:",
}
_LIST = {
    "2.11": "len(G['history']) == 1",
    "2.13": "len(G['history']) == 1    # history.append(loss.item())  # m.py:19 in step",
    "2.14.1": "not G['history']    # history.append(loss.item())  # m.py:19 in step",
}


@pytest.mark.parametrize(
    "printed, kind, key",
    [
        (_LR, "number attribute", ".param_groups[0]['lr']"),
        (_DICT, "dict keys", "batch"),
        (_LIST, "list length", "history"),
    ],
    ids=["scheduled-lr", "dict-keys", "list-length"],
)
def test_a_guard_is_one_cause_key_whatever_torch_version_printed_it(printed, kind, key):
    read = {v: failed_guard(text) for v, text in printed.items()}
    assert {g.what for g in read.values()} == {kind}
    assert {guard_source(g) for g in read.values()} == {key}


def test_a_logged_item_is_one_finding_with_what_it_caused_as_evidence():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    history: list[float] = []

    @torch.compile(backend="eager")
    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        history.append(loss.item())
        return loss

    def train():
        for _ in range(4):
            step(torch.randn(4, 8), torch.randn(4, 1)).backward()

    exp = compiler.explore(train, wrap=False)
    # torch's record: a break at the .item() line, then recompiles of the resume
    # function on the list the break left to Python
    breaks = [gb for c in exp.compiles for gb in c.graph_breaks]
    assert breaks and any("item" in (gb.reason + gb.summary).lower() for gb in breaks)
    assert any("history" in r or "___stack" in r for r in _reasons(exp))
    findings = exp.findings()
    _one_per_cause(findings)
    (only,) = _above_info(findings)
    assert only.kind == "graph_break.scalar_output"
    assert not [f for f in findings if f.kind.startswith("recompile")]
    folded = [e.text for e in only.evidence if e.text.startswith("follows from this break")]
    assert folded and any("list" in t for t in folded)


def _dict_keys() -> compiler.Exploration:
    m = torch.nn.Linear(8, 8)

    @torch.compile(backend="eager")
    def f(batch):
        y = m(batch["x"])
        if "mask" in batch:
            y = y * batch["mask"]
        return y

    def go():
        f({"x": torch.randn(2, 8)})
        f({"x": torch.randn(2, 8), "mask": torch.ones(2, 8)})

    return compiler.explore(go, wrap=False)


def _list_length() -> compiler.Exploration:
    @torch.compile(backend="eager")
    def f(x, xs):
        for t in xs:
            x = x + t
        return x

    return compiler.explore(lambda: [f(torch.ones(2), [torch.ones(2)] * n) for n in (1, 2)],
                            wrap=False)  # fmt: skip


class _Scaled(torch.nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x * self.scale


def _number_attribute() -> compiler.Exploration:
    m = _Scaled(0.5)
    cm = torch.compile(m, backend="eager")

    def go():
        cm(torch.ones(2))
        m.scale = 0.25
        cm(torch.ones(2))

    return compiler.explore(go, wrap=False)


SCALE = 2.0


def _global() -> compiler.Exploration:
    @torch.compile(backend="eager")
    def f(x):
        return x * SCALE

    def go():
        global SCALE
        f(torch.ones(2))
        SCALE = 3.0
        f(torch.ones(2))
        SCALE = 2.0

    return compiler.explore(go, wrap=False)


def _tensor(other: torch.Tensor) -> compiler.Exploration:
    f = torch.compile(lambda x: x * 2, backend="eager")
    return compiler.explore(lambda: (f(torch.ones(2)), f(other)), wrap=False)


def _object_identity() -> compiler.Exploration:
    @torch.compile(backend="eager")
    def f(x, fn):
        return fn(x)

    return compiler.explore(lambda: (f(torch.ones(2), torch.relu), f(torch.ones(2), torch.tanh)),
                            wrap=False)  # fmt: skip


def _grad_mode() -> compiler.Exploration:
    f = torch.compile(lambda x: x * 2, backend="eager")

    def go():
        f(torch.ones(2))
        with torch.no_grad():
            f(torch.ones(2))

    return compiler.explore(go, wrap=False)


def _autocast() -> compiler.Exploration:
    f = torch.compile(lambda x: x @ x, backend="eager")

    def go():
        f(torch.ones(2, 2))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            f(torch.ones(2, 2))

    return compiler.explore(go, wrap=False)


def _closure_cell() -> compiler.Exploration:
    def make(k):
        def g(x):
            return x * k

        return g

    @torch.compile(backend="eager")
    def f(x, g):
        return g(x)

    return compiler.explore(lambda: (f(torch.ones(2), make(2)), f(torch.ones(2), make(3))),
                            wrap=False)  # fmt: skip


# (program, what torch's reason says, the kind the title names, words of the fix)
KINDS = {
    "dict keys": (_dict_keys, "___dict_contains", "a dict's keys", "always pass the same keys"),
    "list length": (_list_length, "len(", "a list's length", "torch.stack"),
    "number attribute": (_number_attribute, "scale", "an int or float attribute", "buffer"),
    "global": (_global, "SCALE", "a global", "Pass it as an argument"),
    "dtype": (lambda: _tensor(torch.ones(2, dtype=torch.float64)), "dtype", "a tensor's dtype",
              "Convert once"),
    "requires_grad": (lambda: _tensor(torch.ones(2, requires_grad=True)), "requires_grad",
                      "a tensor's requires_grad", "keep it the same"),
    "size": (lambda: _tensor(torch.ones(3)), "size mismatch", "sizes changed", "mark_dynamic"),
    "object identity": (_object_identity, "___check_obj_id", "an object's identity",
                        "pass the same object"),
    "grad mode": (_grad_mode, "grad_mode", "grad mode", "expected"),
    "autocast": (_autocast, "autocast", "autocast", "autocast"),
    "closure cell": (_closure_cell, "cell_contents", "a closure's cell", "argument"),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_of_guard_gets_a_title_naming_it_and_a_fix_for_it(kind):
    program, printed, title, fix = KINDS[kind]
    exp = program()
    reasons = _reasons(exp)
    assert reasons and printed in reasons[0]  # torch's record of what failed
    findings = exp.findings()
    _one_per_cause(findings)
    (rc,) = [f for f in findings if f.kind.startswith("recompile")]
    assert title in rc.title, rc.title
    assert fix.lower() in rc.suggestion.lower(), rc.suggestion
    assert "buffer" not in rc.suggestion or kind == "number attribute"


def test_the_scheduled_lr_as_torch_2_11_prints_it_is_one_finding():
    # torch 2.11 (the H200 run of the issue) printed the step's recompiles of one program
    # in both spellings: `___as_tensor(self.param_groups[0]['lr']).item()` and the bare
    # source; the step's later compiles hit the recompile limit
    from compiler.model import Compile, CompileId, CompileMetrics, RecompileReason

    def step(n: int, reason: str = "", fail: str = "") -> Compile:
        reasons = (RecompileReason(previous="", reason=reason, text=reason),) if reason else ()
        return Compile(compile_id=CompileId.from_string(f"2/{n}"), code_name="step",
                       filename="/opt/torch/optim/adam.py", recompile_reasons=reasons,
                       metrics=CompileMetrics(fail_reason=fail or None))  # fmt: skip

    printed = [_LR["2.11"].replace("0.01", f"0.0{9 - n}") for n in range(3)] + [_LR["2.13"]]
    compiles = (step(0), *(step(n + 1, r) for n, r in enumerate(printed)),
                step(5, fail="cache_size_limit reached"))  # fmt: skip
    exp = compiler.Exploration(source="trace", compiles=compiles)
    findings = exp.findings()
    _one_per_cause(findings)
    (lr,) = [f for f in findings if f.kind.startswith("recompile")]
    assert lr.cause == "recompile|number attribute|.param_groups[0]['lr']"
    assert "lr=torch.tensor(" in lr.suggestion


_SAME_PROGRAM = """
import sys
sys.path.insert(0, {tests!r})
import programs
programs.{name}()
"""


@pytest.mark.parametrize("name, key", [
    ("scheduled_lr_steps", ".param_groups[0]['lr']"),
    ("dict_keys_calls", "batch"),
    ("list_length_calls", "xs"),
], ids=["scheduled-lr", "dict-keys", "list-length"])  # fmt: skip
def test_a_live_capture_keys_a_guard_by_its_source_as_the_trace_keys_its_printed_guard(
    name, key, tmp_path, subprocess_env
):
    import subprocess
    import sys
    from pathlib import Path

    import programs

    live = compiler.explore(getattr(programs, name), wrap=False)
    out = tmp_path / "trace"
    code = _SAME_PROGRAM.format(tests=str(Path(__file__).parent), name=name)
    env = dict(subprocess_env, TORCH_TRACE=str(out))
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    traced = compiler.load_trace(out)
    live_reasons = [r for c in live.compiles for r in c.recompile_reasons]
    traced_reasons = [r for c in traced.compiles for r in c.recompile_reasons]
    assert live_reasons and traced_reasons
    # live: each failed guard read from the Source Dynamo built for it; a trace has none
    assert all(r.source for r in live_reasons) and not any(r.source for r in traced_reasons)
    live_keys = {guard_source(failed_guard(r.reason), r.source) for r in live_reasons}
    traced_keys = {guard_source(failed_guard(r.reason)) for r in traced_reasons}
    assert live_keys == traced_keys == {key}
    causes = {f.cause for f in live.findings() if f.kind.startswith("recompile")}
    assert causes == {f.cause for f in traced.findings() if f.kind.startswith("recompile")}
