"""The environment scripts/start.sh builds (the package with its [lab] extra) runs every
notebook: what they import is declared there, and what they read lies beside them.

The fast tests check the notebooks' imports against the extras pyproject.toml declares; the
slow one builds that environment for real (a fresh venv, the installed torch pinned, then
``pip install -e .[lab]``, as scripts/setup.sh does) and runs notebooks 9 and 10 in it.
"""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import tomllib
from test_binder import DISTRIBUTIONS, OURS, _notebook_imports

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# (notebook data, the test suite's copy it must equal): the same files, kept once per reader
NOTEBOOK_DATA = ROOT / "notebooks" / "data"
TEST_DATA = ROOT / "tests" / "data"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower()


def _declared(extras: list[str]) -> set[str]:
    """Distributions the package and the given extras name directly, self-references
    (``torch-compile-explorer[widgets]``) followed."""
    names = {_name(r) for r in PROJECT["dependencies"]}
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in PROJECT["optional-dependencies"][extra]:
            if _name(req) == PROJECT["name"]:
                todo += re.search(r"\[(.*)\]", req).group(1).split(",")
            else:
                names.add(_name(req))
    return names


def test_start_sh_installs_what_every_notebook_but_the_kernel_lab_imports():
    lab = _declared(["lab"])
    missing = {
        module: sorted(notebooks)
        for module, notebooks in _notebook_imports().items()
        if module not in sys.stdlib_module_names
        and module not in OURS
        and DISTRIBUTIONS.get(module, module).lower() not in lab
    }
    assert not missing, f"the [lab] extra (scripts/start.sh) lacks what these import: {missing}"
    assert "transformers" in lab  # notebooks 9 and 10 build their models from its configs


def test_start_sh_runs_the_lab_extra_and_offers_triton_for_the_kernel_lab():
    # notebook 8's relower imports triton lazily (compiler/lab), so the import scan above
    # cannot see it: the start script's --triton option installs it
    assert "triton" in _declared(["triton"])
    script = (ROOT / "scripts" / "start.sh").read_text()
    assert "bash scripts/setup.sh lab triton" in script and "--triton) triton=1" in script
    lab8 = nbformat.read(ROOT / "notebooks" / "8_kernel_lab.ipynb", as_version=4)
    assert "scripts/start.sh --triton" in lab8.cells[0].source


def test_no_torch_in_the_lab_extra_beyond_the_base_range():
    # an unpinned torch in an extra would let pip pick a multi-GB CUDA build
    torch_reqs = [r for r in PROJECT["optional-dependencies"]["lab"] if _name(r) == "torch"]
    assert not torch_reqs, torch_reqs


def test_the_notebooks_read_their_data_beside_them():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert "../tests" not in code and "tests/data" not in code, path.name


@pytest.mark.parametrize(
    "name",
    sorted(str(p.relative_to(NOTEBOOK_DATA)) for p in NOTEBOOK_DATA.rglob("*") if p.is_file()),
)
def test_notebook_data_is_the_test_suites_committed_data_byte_for_byte(name):
    # the tests pin facts of these files; the notebooks' copies must be the same files
    copy, original = NOTEBOOK_DATA / name, TEST_DATA / name
    assert original.is_file(), f"{name} has no counterpart under tests/data"
    assert filecmp.cmp(copy, original, shallow=False), f"notebooks/data/{name} differs"


@pytest.fixture(scope="module")
def lab_venv(tmp_path_factory):
    """A fresh venv with the running torch pinned and `pip install -e .[lab]` (no [test]
    extra), as scripts/setup.sh lab does; built once for the notebooks that run in it.
    Minutes: pip resolves JupyterLab and transformers (from the local package index where
    one is configured)."""
    import torch

    tmp_path = tmp_path_factory.mktemp("lab")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pin = tmp_path / "constraints.txt"
    pin.write_text(f"torch=={torch.__version__}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = [str(py), "-m", "pip", "install", "-q", "-c", str(pin)]
    # as scripts/setup.sh: torch first, from TORCH_INDEX_URL where one is given
    index = os.environ.get("TORCH_INDEX_URL")
    torch_from = ["--index-url", index] if index else []
    subprocess.run([*pip, *torch_from, f"torch=={torch.__version__}"], check=True, env=env,
                   timeout=1200)  # fmt: skip
    subprocess.run([*pip, "-e", f"{ROOT}[lab]"], check=True, env=env, timeout=1200)
    return venv, env


# One transformers notebook proves the environment: notebook 10 (about 35 s here). Notebook 9
# imports nothing more (test_start_sh_installs_what_every_notebook_but_the_kernel_lab_imports)
# and runs end to end in tests/test_notebook.py: running it here too cost CI 80 s.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["10_debug_your_model.ipynb"])
def test_a_transformers_notebook_runs_in_the_environment_start_sh_builds(name, lab_venv, tmp_path):
    """The notebook runs with jupyter nbconvert, which the [lab] extra brings, in the venv
    start.sh's set-up builds (``lab_venv``)."""
    venv, env = lab_venv
    # nbconvert runs a notebook in its own folder, next to recordings/ and data/
    run = subprocess.run(
        [str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=600", "--output-dir", str(tmp_path),
         str(ROOT / "notebooks" / name)],
        env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
