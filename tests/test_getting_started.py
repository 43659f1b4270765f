"""A new user's first minutes: install, %load_ext, explore() on their own module, progress."""

from __future__ import annotations

import importlib.util
import itertools
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib
import torch

import compiler
from explorer._progress import describe

ROOT = Path(__file__).resolve().parent.parent


def test_the_base_install_carries_the_widget_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].strip() for d in project["dependencies"]}
    assert {"anywidget", "ipywidgets", "ipython"} <= names


def test_load_ext_names_the_pip_command_before_anything_runs_when_anywidget_is_missing():
    script = textwrap.dedent(
        """
        import sys
        class Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("anywidget", "ipywidgets"):
                    raise ModuleNotFoundError(f"No module named {name!r}")
        sys.meta_path.insert(0, Missing())
        from IPython.testing.globalipapp import start_ipython
        ip = start_ipython()
        result = ip.run_cell("%load_ext explorer")
        print("TORCH IMPORTED" if "torch" in sys.modules else "torch not imported")
        print("REGISTERED" if "compile" in ip.magics_manager.magics["cell"] else "not registered")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    text = out.stdout + out.stderr
    assert "UsageError" in text and "pip install anywidget ipywidgets" in text, text
    assert "Traceback" not in text, text
    assert "not registered" in text and "torch not imported" in text, text


def _module_from_file(tmp_path: Path):
    path = tmp_path / "user_model.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch

            def f(x):
                return torch.sin(x) * 2 + 1

            def run(fn):
                return fn(torch.randn(8))
            """
        )
    )
    spec = importlib.util.spec_from_file_location("user_model_from_path", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not in sys.modules: what failed under wrapping
    return module


def test_explore_records_a_lambda_that_compiles_a_function_from_a_module_file(tmp_path):
    m = _module_from_file(tmp_path)
    exp = compiler.explore(lambda: m.run(torch.compile(m.f, backend="eager")))
    assert [c.code_name for c in exp.compiles] == ["f"]
    assert exp.options is not None and exp.options.wrapped is False
    assert "dynamo_output_graph" in exp.compiles[0].graphs


def test_explore_still_wraps_a_plain_function_that_only_uses_torch(tmp_path):
    m = _module_from_file(tmp_path)
    exp = compiler.explore(m.f, torch.randn(8), backend="eager")
    assert exp.options is not None and exp.options.wrapped is True
    assert [c.code_name for c in exp.compiles] == ["f"]


def test_explore_names_wrap_false_when_options_meet_a_callable_that_compiles_itself(tmp_path):
    m = _module_from_file(tmp_path)
    with pytest.raises(compiler.OptionError, match=r"calls compiled code itself .* wrap=False"):
        compiler.explore(lambda: m.run(torch.compile(m.f)), backend="aot_eager")


def test_explore_runs_a_callable_that_reads_a_compiled_module_as_it_is():
    model = torch.compile(torch.nn.Linear(4, 2), backend="eager")

    def step():
        return model(torch.randn(3, 4)).sum()

    exp = compiler.explore(step)
    assert exp.options is not None and exp.options.wrapped is False
    assert len(exp.compiles) == 1


def test_reporting_announces_each_phase_while_the_compile_runs_and_restores_the_logger():
    log = logging.getLogger("torch.__trace")
    before = (log.level, log.propagate, list(log.handlers))
    seen = []
    with compiler.reporting(seen.append):
        torch.compile(lambda x: x.cos() + 1, backend="eager")(torch.randn(4))
    assert (log.level, log.propagate, list(log.handlers)) == before
    events = [(p.event, p.phase) for p in seen]
    start = events.index(("start", "backend_compile"))
    end = events.index(("end", "backend_compile"))
    assert start < end
    during = seen[start]
    assert "entire_frame_compile" in during.running and during.running[-1] == "backend_compile"
    assert during.compiles == 1 and during.compile_id == "0/0"
    assert all(a.elapsed_s <= b.elapsed_s for a, b in itertools.pairwise(seen))
    assert describe(during) == "compile 1 · backend"
