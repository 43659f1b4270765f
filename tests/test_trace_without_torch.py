"""Reading a trace needs no torch: loading a log or a rank directory, the advisor over it,
the offline page and the Markdown report import none, and where importing torch fails
``python -m explorer report LOG`` still writes the page (issue 45).

The graph-break registry is then read as a file: the installed torch's, else the copy
the package ships (``compiler/graph_break_registry.json``), checked here against torch's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from compiler import _torch_files

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "data" / "traces"

_LOAD_ALL = r"""
import json, sys
import compiler
from compiler.advise.breaks.registry import Registry
from explorer.export import to_html
from explorer.report import write_markdown

out = {}
for trace in sys.argv[2:]:
    exp = compiler.load_trace(trace)
    findings = exp.findings()
    to_html(exp, sys.argv[1] + "/page.html")
    write_markdown(exp, sys.argv[1] + "/report.md")
    out[trace] = [len(exp.compiles), [f.kind for f in findings]]
links = [f.evidence for f in compiler.load_trace(sys.argv[2]).findings()]
print(json.dumps({"torch": "torch" in sys.modules, "traces": out,
                  "source": Registry().source,
                  "page": "gb0025.html" in open(sys.argv[1] + "/page.html").read()
                          or "gb0025.html" in open(sys.argv[1] + "/report.md").read()}))
"""


def test_loading_advising_and_writing_a_trace_import_no_torch(tmp_path):
    """A log with graph breaks, a one-rank and a four-rank directory: loaded, advised,
    written as a page and a report, and torch never imported."""
    traces = [TRACES / "graph_break_eager", TRACES / "nccl4", TRACES / "recompiles"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL, str(tmp_path), *map(str, traces)],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["torch"] is False
    assert all(n > 0 and kinds for n, kinds in result["traces"].values()), result
    assert result["source"].startswith("the installed torch")
    assert (tmp_path / "page.html").stat().st_size > 10_000
    assert (tmp_path / "report.md").read_text(encoding="utf-8").strip()


def _venv_without_torch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh venv (nothing installed) that sees this checkout, where ``import torch``
    raises ImportError: a ``torch`` package that refuses to import comes first on its path."""
    venv.create(tmp_path / "venv", with_pip=False)
    stub = tmp_path / "stub" / "torch"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("torch is not installed (stub)")\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = os.pathsep.join([str(stub.parent), str(ROOT)])
    return tmp_path / "venv" / "bin" / "python", env


def test_explorer_report_writes_the_page_where_torch_does_not_import(tmp_path):
    python, env = _venv_without_torch(tmp_path)
    page, log = tmp_path / "out" / "gb.html", TRACES / "graph_break_eager"
    done = subprocess.run(
        [str(python), "-m", "explorer", "report", str(log), "-o", str(page)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert page.stat().st_size > 10_000 and page.with_suffix(".md").is_file()
    # the advisor's registry is the shipped copy, and the report says so
    assert "shipped" in done.stderr, done.stderr
    # a command that needs torch says so in a sentence, not a traceback
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    failed = subprocess.run(
        [str(python), "-m", "explorer", "report", str(script), "-o", str(tmp_path / "s.html")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert failed.returncode == 2
    assert "needs torch" in failed.stderr and "Traceback" not in failed.stderr


def test_the_shipped_registry_is_the_installed_torchs():
    """``compiler/graph_break_registry.json`` is torch's file as this torch ships it
    (rerun ``scripts/ship_graph_break_registry.py`` after upgrading torch)."""
    shipped = json.loads(_torch_files.SHIPPED_REGISTRY.read_text(encoding="utf-8"))
    version = _torch_files.installed_torch_version()
    if shipped["torch"] != version:
        pytest.skip(f"the registry was shipped from torch {shipped['torch']}; this is {version}")
    where = _torch_files.torch_dir()
    assert where is not None
    raw = json.loads((where / "_dynamo" / "graph_break_registry.json").read_text("utf-8"))
    assert shipped["registry"] == raw


def test_every_registry_link_is_the_page_torch_links():
    import torch._dynamo.exc

    registry = _torch_files.graph_break_registry()
    assert len(registry) > 400
    for entries in registry.values():
        page = torch._dynamo.exc.get_gbid_documentation_link(str(entries[0]["Gb_type"]))
        assert entries[0]["Link"] == (page or "")
