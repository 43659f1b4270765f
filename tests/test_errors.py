"""Bad input gets one clear ExploreError, with what was captured so far attached."""

from __future__ import annotations

import programs
import pytest
import torch

import compiler


def test_non_callable_target_raises_target_error():
    with pytest.raises(
        compiler.TargetError, match=r"needs a function or an nn.Module to run, but got a Tensor"
    ):
        compiler.explore(torch.randn(3))


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(
        compiler.OptionError, match=r"unknown backend 'inductr'\. Known backends: .*inductor"
    ):
        compiler.explore(programs.pointwise, torch.randn(3), backend="inductr")


def test_unknown_mode_lists_the_known_ones():
    with pytest.raises(
        compiler.OptionError, match=r"unknown mode 'fast'\. Known modes: .*max-autotune"
    ):
        compiler.explore(programs.pointwise, torch.randn(3), mode="fast")


def test_unknown_inductor_option_is_named():
    with pytest.raises(compiler.OptionError, match=r"unknown Inductor option 'no_such_flag'"):
        compiler.explore(programs.pointwise, torch.randn(3), options={"no_such_flag": True})


def test_one_check_gives_every_path_the_same_error():
    import ast

    from compiler.capture.cell import explore_cell

    bad = compiler.CompileSpec(mode="fast", dynamic=True)
    with pytest.raises(compiler.OptionError) as checked:
        bad.check()
    with pytest.raises(compiler.OptionError) as explored:
        compiler.explore(programs.pointwise, torch.randn(3), **bad.kwargs())
    with pytest.raises(compiler.OptionError) as cell:
        explore_cell(ast.parse("x + 1"), "<cell>", {"x": torch.ones(2)}, spec=bad)
    assert str(checked.value) == str(explored.value) == str(cell.value)


def test_values_of_the_wrong_type_are_refused_by_name():
    for fields, says in [
        ({"dynamic": "yes"}, r"dynamic must be True, False or None, not 'yes'"),
        ({"fullgraph": None}, r"fullgraph must be True or False, not None"),
        ({"options": [1]}, r"options must be a dict of Inductor option names to values"),
        ({"backend": None}, r"backend must be a name or a callable, not NoneType"),
    ]:
        with pytest.raises(compiler.OptionError, match=says):
            compiler.CompileSpec.of(**fields).check()
    with pytest.raises(TypeError, match=r"unknown compile option modes; the options are backend"):
        compiler.CompileSpec.of(modes="max-autotune")


def test_options_for_an_already_compiled_target_are_refused():
    compiled = torch.compile(programs.pointwise, backend="eager")
    with pytest.raises(
        compiler.OptionError, match=r"mode only applies when explore\(\) compiles the target"
    ):
        compiler.explore(compiled, torch.randn(3), mode="max-autotune")


def test_inputs_that_fail_eagerly_raise_input_error():
    def matmul(a, b):
        return a @ b

    with pytest.raises(
        compiler.InputError,
        match=r"matmul fails on these inputs even without torch.compile: RuntimeError",
    ):
        compiler.explore(matmul, torch.randn(2, 3), torch.randn(4, 5), backend="eager")


def test_fullgraph_with_a_graph_break_names_the_line_and_keeps_the_capture():
    with pytest.raises(
        compiler.CompileError, match=r"fullgraph=True, but Dynamo hit a graph break"
    ) as info:
        compiler.explore(programs.with_print, torch.randn(3), backend="eager", fullgraph=True)
    exp = info.value.exploration
    assert exp is not None
    assert exp.compiles, "the failed compile is still recorded"
    assert exp.compiles[0].metrics.fail_type
    assert any(e.stage == "dynamo" for e in exp.errors)


def test_a_dimension_marked_dynamic_that_the_code_specialises_is_a_compile_error():
    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(compiler.CompileError, match=r"marked dynamic was specialised") as info:
        compiler.explore(programs.specialises_on_size, x, backend="eager")
    assert info.value.stage == "dynamic"
    assert "maybe_mark_dynamic" in str(info.value)
    assert any(e.stage == "dynamic" for e in info.value.exploration.errors)


def test_user_exception_inside_a_compiled_function_is_reported_once():
    calls = []

    def noisy(x):
        calls.append(1)
        raise KeyError("missing key in user code")

    with pytest.raises(
        compiler.InputError, match=r"noisy raised KeyError at .*test_errors\.py:\d+: 'missing key"
    ):
        compiler.explore(noisy, torch.randn(2), backend="eager")
    assert len(calls) == 1, "the failing target must not be run a second time"


def test_user_exception_inside_a_compiled_training_step_is_reported():
    def step():
        raise ValueError("boom in user code")

    with pytest.raises(
        compiler.InputError,
        match=r"step raised ValueError at .*test_errors\.py:\d+: boom in user code\. The error "
        r"comes from your code",
    ):
        compiler.explore(step, wrap=False)


def test_missing_trace_path_is_a_trace_format_error(tmp_path):
    with pytest.raises(compiler.TraceFormatError, match=r"no trace at .*does not exist"):
        compiler.load_trace(tmp_path / "nope")


def test_directory_without_logs_is_a_trace_format_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(
        compiler.TraceFormatError, match=r"no trace logs \(\*\.log, \*\.log\.gz, \*\.log\.xz\)"
    ):
        compiler.load_trace(tmp_path)


def test_a_file_that_is_not_a_trace_is_a_trace_format_error(tmp_path):
    bogus = tmp_path / "x.log"
    bogus.write_text("just some text\nnot a trace\n")
    with pytest.raises(
        compiler.TraceFormatError, match=r"holds no torch.compile structured trace events"
    ):
        compiler.load_trace(bogus)


def test_json_from_a_newer_major_schema_is_refused():
    exp = compiler.explore(programs.pointwise, torch.randn(3), backend="eager")
    major = compiler.model.SCHEMA_VERSION[0]
    text = exp.to_json().replace(f'"schema_version": [{major},', '"schema_version": [99,', 1)
    with pytest.raises(
        compiler.SchemaVersionError, match=r"written with schema 99\.\d+, newer than the \d+\.\d+"
    ):
        compiler.Exploration.from_json(text)


def test_json_that_is_not_an_exploration_is_refused():
    with pytest.raises(
        compiler.TraceFormatError, match=r"expected the keys 'schema_version' and 'exploration'"
    ):
        compiler.Exploration.from_json('{"hello": 1}')
