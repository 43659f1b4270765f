"""`python -m explorer report`: one self-contained HTML file, from a shell."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import compiler
from explorer.report import summarize

TRACE = Path(__file__).parent / "data" / "traces" / "graph_break_eager"


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_report_of_a_trace_writes_one_html_file(tmp_path, subprocess_env):
    """``-o`` names a folder, as for ``python -m compiler report`` (and tlparse)."""
    folder = tmp_path / "pages"
    proc = _run(["report", str(TRACE), "-o", str(folder)], subprocess_env)
    assert proc.returncode == 0, proc.stderr
    out = folder / "explorer.html"
    assert proc.stdout.split() == [str(out), str(folder / "report.md")]
    assert sorted(p.name for p in folder.iterdir()) == ["explorer.html", "report.md"]
    assert proc.stderr.startswith(f"explorer: reading {TRACE} ...\n")
    assert "explorer: rendering 4 compiles ..." in proc.stderr
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "<script src=" not in html  # self-contained: nothing to fetch


def test_o_without_a_suffix_is_a_folder_and_one_ending_in_html_is_the_page(
    tmp_path, subprocess_env
):
    """``-o out`` once wrote an HTML file named ``out``; now a folder, as the compiler's
    ``-o`` is, so both commands can share one: the explorer adds its page to the folder
    the compiler wrote ``exploration.json`` into."""
    compiler_run = subprocess.run(
        [sys.executable, "-m", "compiler", "report", str(TRACE), "-o", "out"],
        env=subprocess_env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert compiler_run.returncode == 0, compiler_run.stderr
    assert "-o out" in compiler_run.stderr  # the next command, as the compiler words it
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "report", "out/exploration.json", "-o", "out"],
        env=subprocess_env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["exploration.json", "explorer.html", "report.md"]
    legacy = tmp_path / "bert.html"
    proc = _run(["report", str(TRACE), "-o", str(legacy)], subprocess_env)
    assert proc.returncode == 0 and legacy.is_file() and legacy.with_suffix(".md").is_file()


def test_report_of_a_script_records_what_it_compiles(tmp_path, subprocess_env):
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            f = torch.compile(lambda t: t.sin() * 2, backend="eager")
            print("result", f(torch.ones(3)).sum().item())
            """
        )
    )
    out = tmp_path / "report.html"
    proc = _run(["report", str(script), "-o", str(out)], subprocess_env)
    assert proc.returncode == 0, proc.stderr
    assert "result" in proc.stdout
    assert "explorer: rendering 1 compile ..." in proc.stderr
    assert out.stat().st_size > 0


def test_report_of_a_missing_path_is_a_one_line_error_with_status_2(tmp_path, subprocess_env):
    proc = _run(
        ["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "r.html")], subprocess_env
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("explorer: ")
    assert len(proc.stderr.strip().splitlines()) == 2  # the progress line and the error
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_writes_the_markdown_report_beside_the_page(tmp_path, subprocess_env):
    out = tmp_path / "report.html"
    proc = _run(["report", str(TRACE), "-o", str(out)], subprocess_env)
    assert proc.returncode == 0, proc.stderr
    report = out.with_suffix(".md").read_text(encoding="utf-8")
    for cid in ("0/0", "1/0", "0/1", "1/1"):
        assert cid in report
    assert "size mismatch" in report


def test_summary_names_every_stage_of_a_live_capture():
    import programs
    import torch

    exp = compiler.explore(programs.with_print, torch.randn(3), backend="aot_eager")
    text = summarize(exp)
    assert "with_print" in text and "dynamo_output_graph" in text and "aot_inference_graph" in text
    assert "print" in text  # the graph break's summary


@pytest.mark.slow
def test_the_report_names_the_user_lines_each_kernel_came_from():
    import inspect

    import programs
    import torch

    exp = compiler.explore(programs.pointwise, torch.randn(4, 4))
    text = summarize(exp)
    lines, first = inspect.getsourcelines(programs.pointwise)
    sin_at = first + next(i for i, line in enumerate(lines) if "torch.sin(x)" in line)
    (kernel,) = exp.compiles[0].kernels()
    assert any(loc.line == sin_at for loc in kernel.user_lines)
    assert f"{programs.__file__}:{sin_at}" in text
