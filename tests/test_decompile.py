"""Our decompiler on Dynamo's real output: every frame parses and behaves like the original.

Each program compiles with ``backend="eager"`` (the bytecode Dynamo writes does not depend
on the backend), every transformed frame and resume function is decompiled, and the
program runs again with every one of those functions running its decompiled source,
against a plain eager run (``compiler.decompile.verify.check``). What the source must
call comes from torch: the names of compiled graphs and resume functions the transformed
bytecode loads. Needs torch and pytest only (no Jupyter): run it on any Python
3.10-3.13 with ``pytest -q tests/test_decompile.py``.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import programs
import pytest
import torch

import compiler
from compiler.decompile import as_function, decompile
from compiler.decompile.verify import Check, check

ROOT = Path(__file__).resolve().parent.parent


def assert_every_frame_decompiles_and_behaves(result: Check) -> None:
    assert result.frames, "Dynamo transformed no frame"
    failed = [(f.code_name, f.error) for f in result.frames if f.source is None]
    assert not failed, f"{result.decompiled}/{len(result.frames)} decompiled: {failed}"
    for frame in result.frames:
        assert frame.source is not None
        ast.parse(frame.source)
        for name in frame.dynamo_names:  # torch's fact: the bytecode calls these
            assert name in frame.source, f"{frame.code_name} never calls {name}"
        # Dynamo's helpers are called, not left as bare attribute loads
        assert not re.search(
            r"^\s*tmp_\d+ = \S+\.record_pregraph_bytecode_enter$", frame.source, re.M
        )
    assert result.behaves is True, result.why
    # a frame the run could not put its decompiled code in (its function is made and
    # dropped inside a run) is only ever one that calls no compiled graph
    graphs = {f.code_name for f in result.frames if f.dynamo_names}
    assert not graphs & set(result.unchecked), result.why


def readme_example():
    """The graph-break function ``f`` of README.md's quick start, as the README has it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^def f\(x\):\n(?:    .*\n)+", text[text.index("## Quick start") :], re.M)
    assert found, "README.md's quick start has no graph-break example"
    namespace = {"torch": torch}
    exec(compile(found.group(0), "<README.md>", "exec"), namespace)
    return namespace["f"]


def test_the_readme_graph_break_example_decompiles_and_behaves_like_the_original(capsys):
    f = readme_example()
    result = check(programs.compiled_call(f, torch.randn(64)))
    assert len(result.frames) >= 2, "a graph break: the frame and a resume function"
    assert_every_frame_decompiles_and_behaves(result)
    # f's own frame (torch 2.11 transforms a wrapper frame, ``inner``, before it)
    top = next(fr for fr in result.frames if fr.code_name == f.__code__.co_name)
    assert top.source is not None
    assert any(n.startswith("__resume_at") for n in top.dynamo_names)
    assert "if " in top.source, "the break is a branch on a graph output"


def _wrapped(fn):
    def inner(*args, **kwargs):  # made at each call: no function object lives before it
        return fn(*args)

    return inner


def test_a_wrapper_made_during_the_run_is_checked_through_the_function_that_makes_it(capsys):
    """Dynamo transforms the wrapper's frame too (the break is in the function it calls);
    the wrapper's function is made inside the run, from a code constant of ``_wrapped``:
    the check puts the decompiled code among ``_wrapped``'s constants."""
    f = readme_example()
    result = check(lambda: lambda: torch.compile(_wrapped(f), backend="eager")(torch.randn(64)))
    assert [fr.code_name for fr in result.frames][:2] == ["inner", "f"]
    assert_every_frame_decompiles_and_behaves(result)
    assert result.unchecked == ()


def test_the_graph_break_example_script_decompiles_with_its_print(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("graph_break", ROOT / "examples/graph_break.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # x in [0, 1): sin(x) * 2 + 1 sums above 0, so the branch that prints is taken (with
    # randn about one run in 70 took the other branch, whose frames hold no print: the
    # torch 2.14.1 smoke set failed on it once)
    result = check(programs.compiled_call(module.scale_or_clip, torch.rand(8)))
    assert_every_frame_decompiles_and_behaves(result)
    assert any("print(" in (f.source or "") for f in result.frames)
    assert capsys.readouterr().out.count("positive sum") in (0, 3)


def test_a_module_with_a_print_and_loops_decompiles_and_behaves(capsys):
    result = check(programs.compiled_module(programs.PrintLoop, torch.randn(4, 8)))
    assert_every_frame_decompiles_and_behaves(result)
    assert len(result.frames) == 2  # forward up to the print, and its resume function
    assert "print(" in (result.frames[0].source or "")


SUITE = programs.decompile_builds()


@pytest.mark.parametrize("name", sorted(set(SUITE) - {"PrintLoop"}))  # PrintLoop: above
def test_every_frame_of_the_suites_programs_decompiles_and_behaves(name, capsys):
    assert_every_frame_decompiles_and_behaves(check(SUITE[name]))


def test_the_markup_programs_decompile_and_behave(tmp_path):
    evil = programs.markup_program(tmp_path).evil
    branchy = programs.markup_branch_program(tmp_path).branchy
    for fn in (evil, branchy):
        assert_every_frame_decompiles_and_behaves(check(programs.compiled_call(fn, torch.randn(4))))


@pytest.mark.slow
def test_every_frame_of_a_gpt2_training_step_decompiles_and_behaves(capsys):
    pytest.importorskip("transformers")

    def build():
        step, ids = programs.gpt2_training_step(2)
        return lambda: torch.compile(step, backend="eager")(ids)

    result = check(build)
    assert len(result.frames) >= 4  # the warning_once break splits it in several frames
    assert_every_frame_decompiles_and_behaves(result)


def _plain(x, y, scale=2):
    a, *rest = (x, y, x + y)
    values = []
    for v in (a, *rest):  # no comprehension: before 3.12 it is a nested function
        values.append(v * scale)
    name = f"{len(values)!r:>4}|{scale:.1f}"
    total = 0
    for i, v in enumerate(values):
        if i % 2:
            continue
        total = total + v
    with torch.no_grad():
        t = torch.tensor([total, x - y])[0:1]
    return name, total if x > y else -total, t, {"k": x, **{"y": y}}, values[-1:], not x


def _makes_functions(x, y):
    def scale(v, k=2, *, shift=0):
        return v * k - shift + y  # reads y from the enclosing frame

    y = y + 1  # the nested function sees the new y: they share its cell
    return scale(x), scale(x, 3, shift=1), (lambda v: scale(v, 2) + y)(x)


@pytest.mark.parametrize("args", [(3, 1), (0.5, -2)])
def test_nested_functions_decompile_to_nested_defs_that_run_the_same(args):
    """MAKE_FUNCTION over a nested code constant (Dynamo 2.11 makes resume functions so;
    user code after a graph break makes its own): a nested ``def`` or lambda with its
    defaults, closing over the same variables."""
    source = decompile(_makes_functions.__code__)
    tree = ast.parse(source)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "scale" for n in ast.walk(tree))
    assert any(isinstance(n, ast.Lambda) for n in ast.walk(tree))
    again = as_function(source, _makes_functions.__code__, _makes_functions.__globals__)
    assert again(*args) == _makes_functions(*args)


def _comprehensions(xs, k):
    kept = [x * k for x in xs if x > 0]
    total = sum(x + 1 for x in xs)
    doubled = {x: x * 2 for x in xs}
    return kept, total, doubled, any(isinstance(x, int) for x in xs), {x % 2 for x in xs}


@pytest.mark.parametrize("xs", [[1, -2, 3], [], [0.5]])
def test_comprehensions_decompile_and_run_the_same(xs):
    """A comprehension is a nested function taking an iterator before 3.12, inlined into
    the function from 3.12 (PEP 709: GET_ITER, LOAD_FAST_AND_CLEAR, the new list, SWAP,
    FOR_ITER): both read as loops that give what the comprehension gives."""
    source = decompile(_comprehensions.__code__)
    ast.parse(source)
    again = as_function(source, _comprehensions.__code__, _comprehensions.__globals__)
    assert again(xs, 2) == _comprehensions(xs, 2)


@pytest.mark.parametrize("args", [(3, 1, 2), (1, 3, 2), (2, 2, 0.5)])
def test_plain_python_decompiles_and_runs_the_same(args):
    """Python's own bytecode for the constructs Dynamo's output uses, on this Python."""
    source = decompile(_plain.__code__)
    ast.parse(source)
    again = as_function(source, _plain.__code__, _plain.__globals__)
    assert again(*args) == _plain(*args)


def test_explore_shows_our_decompiled_source_for_each_frame():
    exp = compiler.explore(readme_example(), torch.randn(64), backend="eager")
    assert len(exp.compiles) >= 2
    calling = 0
    for c in exp.compiles:
        b = c.bytecode
        assert b is not None and b.transformed is not None
        assert b.decompile_error is None, b.decompile_error
        assert b.decompiled is not None
        ast.parse(b.decompiled)
        called = set(re.findall(r"\b(__compiled_fn_\w+|__resume_at_\w+)\b", b.transformed))
        assert all(name in b.decompiled for name in called)
        calling += bool(called)
    # f's frame and its resume functions call compiled graphs (torch 2.11 also transforms
    # a wrapper frame that calls none)
    assert calling >= 2


def test_the_python_version_is_one_the_decompiler_reads():
    assert (3, 10) <= sys.version_info[:2] <= (3, 13), "compiler.decompile reads 3.10-3.13"


def test_compiled_autograds_frame_decompiles_with_the_gradients_it_writes():
    """The backward compiled autograd captures is a frame too: its decompiled source calls
    the backward graph and assigns each parameter's ``.grad`` (a side effect restored)."""
    import torch._dynamo.config

    models = []

    def build():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        models.append(model)
        x = torch.randn(4, 8)

        def train(x):
            loss = model(x).sum()
            loss.backward()
            return loss, [p.grad for p in model.parameters()]

        def run():
            with torch._dynamo.config.patch(compiled_autograd=True):
                return torch.compile(train, backend="eager")(x)

        return run

    result = check(build)
    assert_every_frame_decompiles_and_behaves(result)
    backward = [f for f in result.frames if f.code_name == "forward"]
    assert backward, [f.code_name for f in result.frames]
    parameters = len(list(models[0].parameters()))
    assert (backward[0].source or "").count(".grad = ") == parameters
