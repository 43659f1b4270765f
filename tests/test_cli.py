"""`python -m compiler report`: the headless form, run as a user would from a shell."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import compiler

TRACE = Path(__file__).parent / "data" / "traces" / "graph_break_eager"


def _run(args: list[str], env: dict, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compiler", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_report_of_a_trace_directory_writes_json_and_says_where_markdown_went(
    tmp_path, subprocess_env
):
    proc = _run(["report", str(TRACE), "-o", str(tmp_path / "out")], subprocess_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "out" / "exploration.json")
    exp = compiler.Exploration.from_json((tmp_path / "out" / "exploration.json").read_text())
    assert exp == compiler.load_trace(TRACE)
    assert "halfway there" not in proc.stdout  # nothing ran: a trace is only read
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["exploration.json"]
    assert "compiler: the Markdown report and the HTML page now come from the explorer: " in (
        proc.stderr
    )
    assert "python -m explorer report" in proc.stderr


def test_report_of_a_script_records_its_compiles_and_keeps_its_output(tmp_path, subprocess_env):
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            import programs
            f = torch.compile(programs.data_dependent, backend="eager")
            print("result", f(torch.ones(3)).sum().item())
            """
        )
    )
    proc = _run(["report", str(script), "-o", str(tmp_path / "out")], subprocess_env)
    assert proc.returncode == 0, proc.stderr
    assert "result" in proc.stdout
    exp = compiler.Exploration.from_json((tmp_path / "out" / "exploration.json").read_text())
    assert exp.graph_breaks and exp.graph_breaks[0].location.code.startswith("if x.sum() > 0")


def test_report_of_a_missing_path_is_a_one_line_error(tmp_path, subprocess_env):
    proc = _run(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "out")], subprocess_env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("compiler: no trace at")
    assert "Traceback" not in proc.stderr


def test_report_of_a_script_that_raises_still_writes_what_was_captured(tmp_path, subprocess_env):
    script = tmp_path / "broken.py"
    script.write_text(
        "import torch, programs\n"
        "torch.compile(programs.pointwise, backend='eager')(torch.ones(2))\n"
        "raise RuntimeError('user bug after the compile')\n"
    )
    proc = _run(["report", str(script), "-o", str(tmp_path / "out")], subprocess_env)
    assert proc.returncode == 1
    assert "RuntimeError" in proc.stderr and "user bug after the compile" in proc.stderr
    exp = compiler.Exploration.from_json((tmp_path / "out" / "exploration.json").read_text())
    assert len(exp.compiles) == 1
