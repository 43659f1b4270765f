"""The teaching notebooks run top to bottom in a real kernel, widgets and all."""

from __future__ import annotations

import copy
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from notebook_answers import answer_checks, is_check, with_answer_checks

ROOT = Path(__file__).resolve().parent.parent
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ALL_NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def _run_then_run_each_code_cell_again(client: NotebookClient) -> None:
    """Execute the notebook top to bottom, then every code cell a second time in the same
    kernel, in order, as a reader does who runs a cell again. The second run executes a copy
    of the notebook (nbclient applies display updates to ``client.nb`` by cell index), so the
    first run's outputs and widget state are what the caller checks; a cell that fails the
    second time raises CellExecutionError naming it."""
    first = client.nb
    with client.setup_kernel():
        for index, cell in enumerate(first.cells):
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
        client.set_widgets_metadata()
        client.nb = copy.deepcopy(first)
        try:
            for index, cell in enumerate(client.nb.cells):
                if cell.cell_type == "code" and not is_check(cell):
                    client.execute_cell(cell, index)
        finally:
            client.nb = first


def test_python3_kernel_runs_this_interpreter():
    spec = KernelSpecManager().get_kernel_spec("python3")
    # jupyter_client starts a spec whose argv[0] is "python" with sys.executable.
    assert spec.argv[0] in ("python", "python3", sys.executable), (
        f"the python3 kernelspec at {spec.resource_dir} runs {spec.argv[0]}, not this venv; "
        f"fix it with: {sys.executable} -m ipykernel install --sys-prefix --name python3"
    )


@pytest.mark.slow
def test_tour_runs_without_errors_twice_and_shows_widgets(tmp_path, monkeypatch):
    # The kernel imports explorer from this checkout even where it is not installed.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    nb = with_answer_checks(nbformat.read(ROOT / "notebooks" / "tour.ipynb", as_version=4))
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    # raises CellExecutionError, with the cell and its traceback, on error
    _run_then_run_each_code_cell_again(client)

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


TEACHING = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb") if p.name != "tour.ipynb")


def test_the_teaching_notebooks_are_there_and_committed_without_outputs():
    expected = {
        "2_graph_breaks_guards_recompiles.ipynb",
        "3_inside_inductor.ipynb",
        "4_compile_and_compare.ipynb",
        "5_training.ipynb",
        "6_serving_and_export.ipynb",
        "7_compiler_api.ipynb",
        "8_kernel_lab.ipynb",
        "9_capstone_real_model.ipynb",
        "10_debug_your_model.ipynb",
    }
    assert expected <= set(TEACHING), TEACHING
    for name in TEACHING:
        nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), name
        assert "%load_ext explorer" in code[0].source, name


# the kernel lab's notebook has a test of its own below, which runs it twice
@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in TEACHING if n != "8_kernel_lab.ipynb"])
def test_a_teaching_notebook_runs_top_to_bottom_then_each_cell_again_and_shows_the_explorer(
    name, monkeypatch
):
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    nb = with_answer_checks(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        # run where a reader runs it: next to recordings/ (Binder opens it there too)
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    )
    _run_then_run_each_code_cell_again(client)

    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    stderr = "".join(
        o.text for c in code for o in c.outputs if o.output_type == "stream" and o.name == "stderr"
    )
    assert "Traceback (most recent call last)" not in stderr, stderr
    shown = [c for c in code if any(WIDGET_MIME in o.get("data", {}) for o in c.outputs)]
    assert shown, f"{name} never shows the explorer"
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json")
    models = [m for m in state["state"].values() if m["model_name"] == "AnyModel"]
    indexes = [m["state"]["index"] for m in models if "index" in m["state"]]
    assert indexes and all(i.get("compiles") for i in indexes), "an explorer shows no compile"
    if name == "3_inside_inductor.ipynb":  # its Inductor compile takes seconds: progress shows
        texts = [o.get("data", {}).get("text/plain", "") for c in code for o in c.outputs]
        assert any(t.startswith("torch.compile: done in ") for t in texts), texts


@pytest.mark.slow
def test_kernel_lab_notebook_runs_twice_and_its_exercises_hide_their_solutions(monkeypatch):
    """Top to bottom, then every cell again in the same kernel (a reader re-runs cells);
    no Inductor compile, only Triton's lowering (the [triton] extra)."""
    pytest.importorskip("triton", reason="the kernel lab needs the [triton] extra")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    nb = with_answer_checks(nbformat.read(ROOT / "notebooks" / "8_kernel_lab.ipynb", as_version=4))
    exercises = [c.source for c in nb.cells if c.cell_type == "markdown"
                 and c.source.lstrip("#").lstrip().startswith("Exercise")]  # fmt: skip
    assert exercises and all("predict" in e.lower() for e in exercises), exercises
    assert all("<details><summary>Solution</summary>" in e and e.rstrip().endswith("</details>")
               for e in exercises)  # fmt: skip
    client = NotebookClient(nb, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(ROOT / "notebooks")}})  # fmt: skip
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    with client.setup_kernel():
        for run in range(2):
            for i, cell in code:
                if run == 0 or not is_check(cell):
                    client.execute_cell(cell, i)  # raises CellExecutionError on an error
    outputs = [o for _, c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(WIDGET_MIME in o.get("data", {}) for o in outputs), "no explorer shown"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "reproduces the recorded PTX instructions: True" in text, text


def _exercises(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell index, source) of each exercise: a markdown cell whose heading starts with
    "Exercise" (``### Exercise: ...``)."""
    heading = re.compile(r"^#+\s+Exercise\b")
    return [
        (i, c.source)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and heading.match(c.source.lstrip())
    ]


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_every_notebook_asks_for_a_prediction_and_hides_the_solution(name):
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    exercises = _exercises(nb)
    assert exercises, f"{name} has no exercise (a markdown cell whose heading starts with Exercise)"
    for index, source in exercises:
        # the solution is folded: one <details> whose summary is "Solution", and nothing of
        # it (no "Solution" heading or text) outside the fold
        folds = re.findall(r"<details>\s*<summary>Solution</summary>(.*?)</details>", source, re.S)
        assert len(folds) == 1 and folds[0].strip(), (name, index, source)
        outside = re.sub(r"<details>.*?</details>", "", source, flags=re.S)
        assert "Solution" not in outside and "<details>" not in outside, (name, index)
        # a prediction is asked before the cell or pane that checks it: code follows
        later = [c for c in nb.cells[index + 1 :] if c.cell_type == "code"]
        assert later, f"{name}: exercise in cell {index} has no code cell after it to check it"


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_every_exercise_states_an_answer_the_notebook_run_checks(name):
    # the check itself runs in the notebook tests above (notebook_answers.with_answer_checks)
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    for index, source in _exercises(nb):
        fold = re.search(r"<details>\s*<summary>Solution</summary>(.*?)</details>", source, re.S)
        checks = answer_checks(fold.group(1) if fold else "")
        assert checks, (
            f"{name}: the solution of the exercise in cell {index} states no checked answer "
            '(<code title="check: EXPR">VALUE</code>, see tests/notebook_answers.py)'
        )
