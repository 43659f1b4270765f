"""The docstring examples of ``compiler/`` and ``explorer/`` run as tests, beside ``tests/``.

``python -m pytest compiler explorer`` runs the examples alone (one item per docstring); both
tiers of ``scripts/test.sh`` run them with the tests. pytest's ``--doctest-modules`` would also
import every helper script under ``tests/`` (the advisor corpus runs its programs at import),
so the examples are collected here, from the two packages only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent
PACKAGES = ("compiler", "explorer")

# Examples that run for real but take far more than a second on a CPU: an AOTInductor C++
# build, a worker process that imports torch. Marked slow: the full tier runs them.
SLOW_EXAMPLES = {
    "compiler.capture.exported.explore_aoti",
    "compiler.live.session",
}


def pytest_collect_file(file_path: Path, parent: Any) -> Any:
    if file_path.suffix != ".py" or parent.config.option.doctestmodules:
        return None  # with --doctest-modules, pytest's own plugin collects them
    try:
        parts = file_path.relative_to(ROOT).parts
    except ValueError:
        return None
    # __main__.py runs a command line when imported; static/ holds the front end's files
    if parts[0] not in PACKAGES or "static" in parts or file_path.name == "__main__.py":
        return None
    from _pytest.doctest import DoctestModule

    return DoctestModule.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    from _pytest.doctest import DoctestItem

    for item in items:
        if isinstance(item, DoctestItem) and item.name in SLOW_EXAMPLES:
            item.add_marker(pytest.mark.slow)


class _ExampleNamespace(dict):  # type: ignore[type-arg]
    """A docstring example's globals. doctest clears them when the example ends, and the
    reset after it then lets go of the code Dynamo compiled there, whose removal of the
    globals it installed here (``__builtins_dict___N``) found them gone and printed
    ``KeyError`` (``compiler/_compat/dynamo_globals.py``): they are removed first."""

    def clear(self) -> None:
        from compiler._compat.dynamo_globals import remove_installed_globals

        remove_installed_globals(self)
        super().clear()


@pytest.fixture(autouse=True)
def _doctest_setting(request: Any) -> Any:
    """Each example starts from a fresh Dynamo, as each test does (tests/conftest.py), and in
    the clone's root, where its relative paths (``tests/data/...``) point."""
    from _pytest.doctest import DoctestItem

    if not isinstance(request.node, DoctestItem):
        yield
        return
    import torch

    monkeypatch = request.getfixturevalue("monkeypatch")
    monkeypatch.chdir(ROOT)
    request.node.dtest.globs = _ExampleNamespace(request.node.dtest.globs)
    torch.compiler.reset()
    yield
    torch.compiler.reset()
