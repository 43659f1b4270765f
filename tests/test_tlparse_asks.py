"""What tlparse's users asked for (issue 45), on committed traces: the compile-time config
of each compile, diffable between two (tlparse #73); where each guard came from (#68)."""

from __future__ import annotations

from pathlib import Path

import compiler
from explorer.panes.runtime import build_metrics

TRACES = Path(__file__).parent / "data" / "traces"


def test_each_compile_keeps_its_whole_config_and_two_compiles_diff():
    """cache_config/a and /b are one program, b with ``inductor.max_fusion_size = 32``."""
    a = compiler.load_trace(TRACES / "cache_config" / "a").compiles[0]
    b = compiler.load_trace(TRACES / "cache_config" / "b").compiles[0]
    config = compiler.config_of(a)
    assert set(config) == {"dynamo", "inductor", "compiler"}
    assert config["inductor"]["max_fusion_size"] == 64 and len(config["inductor"]) > 300
    changes = compiler.config_diff(a, b)
    assert [(ch.section, ch.name, ch.a, ch.b) for ch in changes] == [
        ("inductor", "max_fusion_size", "64", "32")
    ]
    assert compiler.config_diff(a, a) == ()


def test_the_metrics_pane_says_what_config_changed_since_the_compile_before():
    exp = compiler.load_trace(TRACES / "recompiles")
    rows = dict(build_metrics(exp, exp.compiles[1].key, "compilation_metrics").summary)
    assert rows["config"].startswith("dynamo ")
    assert rows[f"config vs {exp.compiles[0].key}"] == "the same"


def test_the_config_survives_the_file_form():
    exp = compiler.load_trace(TRACES / "cache_config" / "b")
    back = compiler.Exploration.from_json(exp.to_json())
    assert compiler.config_of(back.compiles[0]) == compiler.config_of(exp.compiles[0])


def test_each_tree_guard_names_the_user_line_that_installed_it():
    """Already covered before issue 45: Dynamo's guard tree ends each guard with the
    source line that needed it, which ``Guard.origin`` keeps (the guards pane shows it)."""
    exp = compiler.load_trace(TRACES / "graph_break_eager")
    origins = [g.origin for g in exp.compiles[0].guards.guards if g.kind == "TENSOR_MATCH"]
    assert origins and all("programs.py:" in o for o in origins)


def test_a_trace_says_it_holds_no_torch_compile_call_or_options():
    """tlparse #71 is live only: the report of a trace says so, and where to get them."""
    from explorer.report import summarize

    text = summarize(compiler.load_trace(TRACES / "recompiles"))
    (line,) = [ln for ln in text.splitlines() if ln.startswith("- **Options:**")]
    assert "not in a TORCH_TRACE log" in line and "live capture" in line
