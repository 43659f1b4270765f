"""binder/ holds what Binder needs to run every notebook on a CPU."""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
# import name -> distribution name, where they differ
DISTRIBUTIONS = {"IPython": "ipython", "yaml": "pyyaml"}
OURS = {"compiler", "explorer"}


def _requirement_names(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[ ;]", line, maxsplit=1)[0].lower())
    return names


def _notebook_imports() -> dict[str, set[str]]:
    """Top-level modules each notebook imports (IPython magics and shell lines skipped)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            source = cell.source
            if source.startswith("%%"):
                source = source.split("\n", 1)[1] if "\n" in source else ""
            skip = ("%", "!")
            lines = [line for line in source.splitlines() if not line.lstrip().startswith(skip)]
            for node in ast.walk(ast.parse("\n".join(lines))):
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods = [node.module]
                else:
                    continue
                for mod in mods:
                    found.setdefault(mod.split(".")[0], set()).add(path.name)
    return found


def test_every_module_the_notebooks_import_is_installed_on_binder():
    requirements = _requirement_names((BINDER / "requirements.txt").read_text().splitlines())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    package_deps = _requirement_names(project["dependencies"])
    imports = _notebook_imports()
    assert {"torch", "compiler", "explorer"} <= set(imports), imports
    missing = {}
    for module, notebooks in imports.items():
        if module in sys.stdlib_module_names or module in OURS:
            continue
        dist = DISTRIBUTIONS.get(module, module).lower()
        if dist not in requirements:
            missing[module] = sorted(notebooks)
    assert not missing, f"binder/requirements.txt lacks what these notebooks import: {missing}"
    # postBuild installs the package with --no-deps: its dependencies must all be listed
    assert package_deps - {"torch"} <= requirements, package_deps - requirements


def test_binder_installs_the_cpu_build_of_torch_pinned_to_the_version_we_test():
    text = (BINDER / "requirements.txt").read_text()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in text
    import torch

    version = torch.__version__.split("+")[0]
    assert re.search(rf"^torch=={re.escape(version)}\+cpu$", text, re.MULTILINE), text


def test_binder_installs_this_package_and_every_dependency_it_declares():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    listed = {
        re.split(r"[<>=\[ ]", line.strip(), maxsplit=1)[0].lower()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "-"))
    }
    missing = [d for d in declared if re.split(r"[<>=\[ ]", d, maxsplit=1)[0].lower() not in listed]
    assert not missing, f"binder/requirements.txt lacks {missing}"
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "postBuild must be executable"
    lines = [line.strip() for line in post.read_text().splitlines()]
    assert "python -m pip install --no-cache-dir --no-deps ." in lines


def test_the_readme_links_binder_to_the_notebooks():
    readme = (ROOT / "README.md").read_text()
    link = re.search(r"https://mybinder\.org/v2/gh/[^)\s]+", readme)
    assert link, "README.md has no mybinder.org link"
    assert "labpath=notebooks" in link.group(0)
