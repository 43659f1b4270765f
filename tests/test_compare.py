"""compiler.compare, its compile log, the %%compare magic and the compare widget."""

from __future__ import annotations

import json
import re

import pytest
import torch
from conftest import ipython_shell

import compiler
import explorer
from compiler import Config
from explorer.compare_widget import comparison_data
from explorer.compile_log import compile_log


def pointwise(x):
    return (torch.sin(x) * 2 + x).relu()


def breaking(x):
    y = torch.cos(x)
    if y.sum() > 0:  # data-dependent: a graph break
        return y + 1
    return y - 1


DYNAMO_EAGER = Config(name="dynamo-eager", backend="eager")


@pytest.fixture(scope="module")
def ip():
    shell = ipython_shell()
    shell.run_line_magic("load_ext", "explorer")
    shell.run_cell("import torch")
    yield shell
    shell.run_line_magic("unload_ext", "explorer")


def test_rows_start_with_eager_and_measure_each_configuration():
    c = compiler.compare(pointwise, torch.randn(32), configs=["aot_eager", DYNAMO_EAGER], steps=7)
    assert [r.name for r in c.rows] == ["eager", "aot_eager", "dynamo-eager"]
    eager = c.rows[0]
    assert eager.exploration is None and eager.speedup == pytest.approx(1.0)
    for r in c.rows[1:]:
        assert not r.error
        low, high = r.spread_ms
        assert 0 < low <= r.median_ms <= high
        assert r.first_call_ms > r.median_ms, "the first call compiles"
        assert r.speedup == pytest.approx(eager.median_ms / r.median_ms)
        assert r.compiles == 1 and r.recompiles == 0 and r.graph_breaks == 0
        assert r.matches_eager is True
        assert "dynamo_output_graph" in r.exploration.compiles[0].graphs
    assert "aot_inference_graph" in c.row("aot_eager").exploration.compiles[0].graphs


def test_graph_breaks_and_recompiles_are_counted_from_the_recorded_compiles():
    state = {"calls": 0}

    def counting(x):
        state["calls"] += 1
        return x * state["calls"]  # a new constant per call: guards fail, Dynamo recompiles

    c = compiler.compare(breaking, torch.ones(8), configs=[DYNAMO_EAGER], steps=3)
    row = c.row("dynamo-eager")
    assert row.graph_breaks == 1 and row.compiles == len(row.exploration.compiles) >= 2
    log = compile_log(c)
    assert "## Graph breaks" in log and "dynamo-eager:" in log.split("## Graph breaks")[1]

    c = compiler.compare(counting, torch.ones(8), configs=[DYNAMO_EAGER], steps=3, warmup=1)
    row = c.row("dynamo-eager")
    assert row.recompiles >= 1 and row.recompiles == len(row.exploration.recompiles)
    recompiles = compile_log(c).split("## Recompiles")[1]
    assert f"compile {row.exploration.recompiles[0].compile_id}" in recompiles


def test_a_failing_configuration_becomes_a_row_with_its_error_and_the_rest_still_run():
    bad = Config(name="bad", backend="inductor", options={"no_such_inductor_option": 1})
    c = compiler.compare(pointwise, torch.randn(8), configs=[bad, "aot_eager"], steps=2)
    assert "no_such_inductor_option" in c.row("bad").error
    assert c.row("aot_eager").median_ms is not None
    assert "| bad | failed: " in compile_log(c)


def test_a_bad_mode_gets_the_one_option_checks_error_in_its_row():
    with pytest.raises(compiler.OptionError) as checked:
        compiler.CompileSpec(mode="fast").check()
    bad = Config(name="fast", mode="fast")
    c = compiler.compare(pointwise, torch.randn(8), configs=[bad, "aot_eager"], steps=2)
    assert c.row("fast").error == f"OptionError: {checked.value}"
    assert "unknown mode 'fast'. Known modes: " in c.row("fast").error
    assert c.row("aot_eager").median_ms is not None


def test_a_config_is_a_name_and_a_spec_its_fields_readable_as_before():
    spec = compiler.CompileSpec(backend="aot_eager", dynamic=True)
    assert Config(name="a", spec=spec) == Config(name="a", backend="aot_eager", dynamic=True)
    config = Config(name="a", spec=spec, cuda_only=True)
    assert (config.backend, config.dynamic, config.cuda_only) == ("aot_eager", True, True)
    assert config.describe() == 'torch.compile(backend="aot_eager", dynamic=True)'
    with pytest.raises(TypeError, match=r"give spec= or its fields \(mode\), not both"):
        Config(name="a", spec=spec, mode="max-autotune")


def test_bad_names_and_targets_get_clear_errors():
    unknown = r"unknown configuration 'fastest'\. Known: eager"
    with pytest.raises(compiler.OptionError, match=unknown):
        compiler.compare(pointwise, torch.randn(8), configs=["fastest"])
    with pytest.raises(compiler.OptionError, match=r"pass the function or module before"):
        compiler.compare(torch.compile(pointwise, backend="eager"), torch.randn(8))
    with pytest.raises(compiler.InputError, match=r"pointwise fails eagerly on these inputs"):
        compiler.compare(pointwise, "not a tensor", configs=["aot_eager"])


def test_cuda_only_presets_are_skipped_on_the_cpu_with_a_note():
    c = compiler.compare(pointwise, torch.randn(8), configs=["reduce-overhead"], steps=2)
    assert [r.name for r in c.rows] == ["eager"]
    assert "reduce-overhead" in c.notes[0] and "## Notes" in compile_log(c)


def test_the_compile_log_holds_the_environment_and_one_table_row_per_configuration():
    c = compiler.compare(pointwise, torch.randn(16), configs=["aot_eager"], steps=3)
    log = compile_log(c)
    assert f"torch {torch.__version__}" in log
    assert "float32[16] cpu" in log
    table = [line for line in log.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in table[1:]] == ["eager", "aot_eager"]
    assert 'aot_eager: `torch.compile(backend="aot_eager")`' in log


@pytest.mark.slow
def test_inductor_default_and_dynamic_rows_compile_real_kernels():
    c = compiler.compare(pointwise, torch.randn(64), configs=["default", "dynamic"], steps=5)
    for name in ("default", "dynamic"):
        row = c.row(name)
        assert not row.error and row.matches_eager is True
        assert row.exploration.compiles[0].kernels(), "Inductor generated kernels"
    graph = c.row("dynamic").exploration.compiles[0].graphs["dynamo_output_graph"]
    assert "s" in graph.nodes[0].annotation, "dynamic=True traces a symbolic size"


def test_compare_magic_times_the_last_expression_after_running_the_setup(ip, tmp_path):
    log = tmp_path / "COMPILE_LOG.md"
    cell = "lin = torch.nn.Linear(8, 8)\nx = torch.randn(4, 8)\nlin(x).relu()\n"
    ip.run_cell_magic("compare", f"cmp --configs aot_eager --steps 3 --log {log}", cell)
    c = ip.user_ns["cmp"]
    assert c.target == "lin(x).relu()"
    assert [r.name for r in c.rows] == ["eager", "aot_eager"]
    node = next(n for n in c.row("aot_eager").exploration.compiles[0].graphs[
        "dynamo_output_graph"].nodes if n.op == "call_function")  # fmt: skip
    assert node.source is not None and node.source.line == 3
    assert log.read_text() == compile_log(c)


def test_compare_magic_rejects_a_cell_without_a_final_expression(ip):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="times the cell's last expression"):
        ip.run_cell_magic("compare", "", "y = 1\n")


def test_the_compare_view_draws_plain_data_and_explores_the_selected_row():
    c = compiler.compare(pointwise, torch.randn(8), configs=["aot_eager"], steps=2)
    data = comparison_data(c)
    assert json.loads(json.dumps(data)) == data
    assert [r["explorable"] for r in data["rows"]] == [False, True]
    view = explorer.view_comparison(c)
    assert view.table.comparison == data and view.selected == ""
    assert view.select("aot_eager").selected == "aot_eager"
    with pytest.raises(ValueError, match="'eager' has no recorded compiles"):
        view.select("eager")


def test_the_compare_front_end_ships_and_writes_no_html():
    from explorer._static import static_text, widget_module

    js = widget_module("compare")  # what CompareWidget._esm ships, bundled: no imports left
    assert "as default" in js
    assert "innerHTML" not in js and not re.search(r"^\s*import\b", js, re.M)
    assert static_text("compare.css")
