"""The teaching notebooks run top to bottom in a real kernel, widgets and all."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_python3_kernel_runs_this_interpreter():
    spec = KernelSpecManager().get_kernel_spec("python3")
    # jupyter_client starts a spec whose argv[0] is "python" with sys.executable.
    assert spec.argv[0] in ("python", "python3", sys.executable), (
        f"the python3 kernelspec at {spec.resource_dir} runs {spec.argv[0]}, not this venv; "
        f"fix it with: {sys.executable} -m ipykernel install --sys-prefix --name python3"
    )


@pytest.mark.slow
def test_tour_runs_without_errors_and_shows_widgets(tmp_path, monkeypatch):
    # The kernel imports explorer from this checkout even where it is not installed.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    nb = nbformat.read(ROOT / "notebooks" / "tour.ipynb", as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on error

    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    stderr = "".join(
        o.text for c in code for o in c.outputs if o.output_type == "stream" and o.name == "stderr"
    )
    assert "Traceback" not in stderr and "Error" not in stderr, stderr

    def widget_cells() -> list[str]:
        return [
            c.source.splitlines()[0]
            for c in code
            if any(WIDGET_MIME in o.get("data", {}) for o in c.outputs)
        ]

    shown = widget_cells()
    assert "%%compile snippet --backend eager" in shown
    assert "%%compile breaks --backend eager --target f" in shown
    assert "%%compile fused" in shown
    assert len(shown) == 5, shown  # plus explorer.show and explorer.load
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json")
    assert state is not None and state["state"], "the widget state was not saved"
    models = [m for m in state["state"].values() if m["model_name"] == "AnyModel"]
    assert len(models) == 5
    assert all(m["state"]["index"]["compiles"] for m in models)
