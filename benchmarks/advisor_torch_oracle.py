"""The advisor against an oracle nobody here wrote: torch's own tests of what it prints
for each kind of graph break and recompile (pytorch/pytorch ``test/dynamo/
test_graph_break_messages.py`` and ``test_recompile_ux.py``).

Each case is our own minimal program for the situation one torch test sets up (named
beside it; no code copied), run without ``fullgraph=True`` (most of those tests raise
under it). The expected cause is what the installed torch records for the run: the
graph-break registry entry of its first break (its gb_type must read as the torch test
says), or the failed guard of its first recompile (its text must contain what the test
asserts). A case agrees when the advisor's FIRST finding is of the expected kind and its
cause key names that registry id or that guard's source.

    PYTHONPATH=$PWD python benchmarks/advisor_torch_oracle.py [name ...]
"""

from __future__ import annotations

import sys
import unittest
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.advise.breaks.registry import Registry  # noqa: E402

GB = "test/dynamo/test_graph_break_messages.py"
RC = "test/dynamo/test_recompile_ux.py"


@dataclass(frozen=True)
class Case:
    name: str
    mirrors: str  # torch's test file::test name
    program: Callable[[], compiler.Exploration]
    kind: str  # the advisor kind the first finding should have (a prefix)
    torch_says: str  # what torch's test asserts torch prints
    source: str = ""  # for a recompile: the guard source the cause must name


def _explore(run: Callable[[], object]) -> compiler.Exploration:
    return compiler.explore(run, wrap=False)


def _break(fn: Callable[..., object], *args: object) -> compiler.Exploration:
    compiled = torch.compile(fn, backend="eager")
    return _explore(lambda: compiled(*args))


def _twice(fn: Callable[..., object], first: tuple, second: tuple) -> compiler.Exploration:
    compiled = torch.compile(fn, backend="eager", dynamic=False)
    return _explore(lambda: (compiled(*first), compiled(*second)))


def _nonzero(x):
    y = x * 2
    idx = torch.nonzero(y > 0)
    return y.sum() + idx.shape[0]


def _item(x):
    y = x * 2
    v = y.sum().item()
    return y + v


def _print(x):
    y = x + 1
    print("step")
    return y * 2


def _explicit(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2


@torch.compiler.disable
def _kept_eager(y):
    return y - 1


def _disabled(x):
    y = x + 1
    y = _kept_eager(y)
    return y * 2


def _warn(x):
    y = x + 1
    warnings.warn("careful", stacklevel=1)
    return y * 2


def _skipped(x):
    y = x + 1
    unittest.skip("reason")
    return y * 2


def _branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def _add(a, b):
    return torch.add(a, b)


def _ones(x):
    return torch.ones(len(x)) * x[-1]


def _flag(b, a):
    return b * 2 if a else b + 1


def _limit_on_sizes() -> compiler.Exploration:
    def model(x):
        return x + x

    def run():
        with torch._dynamo.config.patch(automatic_dynamic_shapes=False, recompile_limit=2):
            compiled = torch.compile(model, backend="eager")
            for n in range(2, 12):
                compiled(torch.randn(n, 3))

    return _explore(run)


def _resume_on_a_global() -> compiler.Exploration:
    held = {"t": torch.randn(4, 8)}

    def f(x):
        x = x.sin()
        print("between")
        return held["t"].cos() + x.sum()

    def run():
        compiled = torch.compile(f, backend="eager")
        for shape in ((4, 8), (5, 8), (5, 9)):
            held["t"] = torch.randn(*shape)
            compiled(torch.randn(4, 8))

    return _explore(run)


X = torch.ones(3, 4, 5)
CASES = [
    Case("dynamic_shape_operator", f"{GB}::test_dynamic_shape_operator",
         lambda: _break(_nonzero, torch.randn(8)), "graph_break.dynamic_output_shape",
         "Dynamic shape operator"),
    Case("item", f"{GB}::test_data_dependent_operator",
         lambda: _break(_item, torch.randn(8)), "graph_break.scalar_output", "Tensor.item"),
    Case("print", f"{GB}::test_unsupported_builtin",
         lambda: _break(_print, torch.randn(8)), "graph_break.logging",
         "Failed to trace builtin operator"),
    Case("graph_break_call", f"{GB}::test_dynamo_graph_break_fn",
         lambda: _break(_explicit, torch.randn(8)), "graph_break.explicit",
         "Call to `torch._dynamo.graph_break()`"),
    Case("disable", f"{GB}::test_disable",
         lambda: _break(_disabled, torch.randn(8)), "graph_break.disabled",
         "Skip calling `torch.compiler.disable()`d function"),
    Case("warnings", f"{GB}::test_warnings",
         lambda: _break(_warn, torch.randn(8)), "graph_break.logging",
         "Attempted to call function marked as skipped"),
    Case("skipped_function", f"{GB}::test_skipfile_call",
         lambda: _break(_skipped, torch.randn(8)), "graph_break.unsupported_call",
         "Attempted to call function marked as skipped"),
    Case("data_dependent_branch", f"{GB} (data-dependent branching)",
         lambda: _break(_branch, torch.randn(8)), "graph_break.data_dependent_branch",
         "Data-dependent branching"),
    Case("size", f"{RC}::test_verbose_tensor_check (size)",
         lambda: _twice(_add, (X, 4), (X[0:2], 4)), "recompile.size",
         "tensor 'a' size mismatch at index 0. expected 3, actual 2", "a"),
    Case("stride", f"{RC}::test_verbose_tensor_check (stride)",
         lambda: _twice(_add, (X, 4), (X.clone().as_strided((3, 4, 5), (1, 3, 12)), 4)),
         "recompile.stride", "tensor 'a' stride mismatch at index 0", "a"),
    Case("dtype", f"{RC}::test_verbose_tensor_check (dtype)",
         lambda: _twice(_add, (X, 4), (X.half(), 4)), "recompile.dtype",
         "tensor 'a' dtype mismatch. expected Float, actual Half", "a"),
    Case("requires_grad", f"{RC}::test_verbose_tensor_check (requires_grad)",
         lambda: _twice(_add, (X, 4), (X.clone().requires_grad_(), 4)),
         "recompile.requires_grad", "tensor 'a' requires_grad mismatch", "a"),
    Case("type", f"{RC}::test_mismatched_type",
         lambda: _twice(_add, (X, X.clone()), (X, 1)), "recompile.type",
         "expected type of 'b' to be", "b"),
    Case("list_length", f"{RC}::test_multiple_guard_fails_report_all",
         lambda: _twice(_ones, ([4, 5, 6],), ([7, 8],)), "recompile.list_length",
         "len(x) == 3", "x"),
    Case("bool_argument", f"{RC}::test_fail_on_recompile_limit_hit",
         lambda: _twice(_flag, (torch.randn(5), True), (torch.randn(5), False)),
         "recompile.value", "a", "a"),
    Case("recompile_limit", f"{RC}::test_dynamic_input",
         _limit_on_sizes, "recompile.limit", "size mismatch", "x"),
    Case("resume_function", f"{RC}::test_recompile_limit_resume_function_auto_dynamic",
         _resume_on_a_global, "graph_break.logging", "Failed to trace builtin operator"),
]  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    case: Case
    expected: str  # the cause torch recorded: registry id or failed guard
    torch_agrees: bool  # torch printed what its test says
    first: str  # the advisor's first finding: kind | cause
    agrees: bool
    # every finding as (kind, cause key, title): compared across torch versions
    findings: tuple[tuple[str, str, str], ...] = ()


def judge(case: Case) -> Outcome:
    """Run ``case`` and compare the advisor's first finding with torch's record."""
    torch._dynamo.reset()
    exp = case.program()
    registry = Registry()
    breaks = [gb for c in exp.compiles for gb in c.graph_breaks]
    reasons = [r.reason for c in exp.compiles for r in c.recompile_reasons]
    findings = exp.findings()
    first = findings[0] if findings else None
    if case.kind.startswith("graph_break"):
        entry = registry.entry_for(breaks[0]) if breaks else None
        expected = f"{entry.gb_id} {entry.gb_type}" if entry else (breaks[0].summary if breaks
                                                                    else "no break")  # fmt: skip
        said = " ".join(f"{gb.summary} {gb.reason}" for gb in breaks[:1])
        torch_agrees = case.torch_says in said or bool(entry and case.torch_says == entry.gb_type)
        names = entry is not None and first is not None and entry.gb_id in first.cause
    else:
        expected = reasons[0].split("\n", 1)[0].split("  #", 1)[0].strip() if reasons else "none"
        torch_agrees = any(case.torch_says in r for r in reasons)
        names = first is not None and case.source in first.cause.split("|")[-1]
    agrees = bool(first and first.kind.startswith(case.kind) and names)
    shown = f"{first.kind} | {first.cause}" if first else "(no finding)"
    every = tuple((f.kind, f.cause, f.title) for f in findings)
    return Outcome(case, expected, torch_agrees, shown, agrees, every)


def main(names: list[str]) -> None:
    cases = [c for c in CASES if not names or c.name in names]
    outcomes = []
    for case in cases:
        o = judge(case)
        outcomes.append(o)
        mark = "yes" if o.agrees else "NO"
        print(f"| {case.name} | {case.mirrors} | {o.expected[:70]} | {o.first[:90]} | {mark} |",
              flush=True)  # fmt: skip
    agree = sum(o.agrees for o in outcomes)
    said = sum(o.torch_agrees for o in outcomes)
    print(f"\nfirst finding names torch's cause and kind: {agree} of {len(outcomes)} "
          f"(torch {torch.__version__}; torch printed what its test says in {said})")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
