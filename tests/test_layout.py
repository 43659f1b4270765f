"""The layout shows the pipeline: small rooms, small modules, and imports that point one way.

These read our own source (its files and its import statements); the JS half of the
same rules is in ``test_frontend.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("compiler", "explorer")

# compiler/'s rooms, each importing only rooms before it: the model, what reads torch's
# texts into it, what links them, what builds and stores an Exploration, the tools on
# top, then the package's own API and the tools that drive it from outside.
ROOM_ORDER = (
    "errors",
    "_compat",
    "model",
    "parse",
    "decompile",
    "gpu",
    "link",
    "store",
    "trace",
    "profile",
    "ranks",
    "advise",
    "diff",
    "worker",
    "lab",
    "capture",
    "remedy",
    "compare",
    "numerics",
    "__init__",
    "live",
    "__main__",
)

# The one sanctioned way up: Exploration's public methods ``findings``, ``to_json`` and
# ``from_json`` (public API since schema 1.0) hand the model to the advisor and to the file
# form. They import when called, never when the model is imported.
FACADE = {("model", "advise"), ("model", "store")}


def _python_modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_folder_holds_more_than_12_modules_and_no_module_is_over_600_lines():
    folders: dict[Path, list[str]] = {}
    for path in _python_modules():
        folders.setdefault(path.parent, []).append(path.name)
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 600, f"{path.relative_to(ROOT)} has {lines} lines"
    for folder, names in folders.items():
        assert len(names) <= 12, f"{folder.relative_to(ROOT)} holds {len(names)} modules: {names}"


def _room(module: str) -> str | None:
    """``compiler.link.ids`` -> ``link``; ``compiler`` and a name of its API
    (``compiler.explore``) -> ``__init__``; None outside compiler/."""
    parts = module.split(".")
    if parts[0] != "compiler":
        return None
    rooms = {p.stem for p in (ROOT / "compiler").iterdir() if p.suffix == ".py" or p.is_dir()}
    return parts[1] if len(parts) > 1 and parts[1] in rooms else "__init__"


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for every import that runs, at module
    level or in a function; imports only for type checkers are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name == "__init__.py":
        package += ".__init__"
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno, in_function) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: -node.level] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.extend((f"{module}.{a.name}", node.lineno, in_function) for a in node.names)
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def test_compiler_rooms_import_only_rooms_before_them():
    rank = {room: i for i, room in enumerate(ROOM_ORDER)}
    wrong = []
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        rel = path.relative_to(ROOT / "compiler")
        here = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        assert here in rank, f"compiler/{rel}: room {here!r} is missing from ROOM_ORDER"
        for module, line, in_function in _imports(path):
            there = _room(module)
            if there is None or there == here:
                continue  # outside compiler/, or its own room
            if rank[there] < rank[here] or (in_function and (here, there) in FACADE):
                continue
            wrong.append(f"compiler/{rel}:{line} ({here}) imports {module} ({there})")
    assert not wrong, "imports that point up the pipeline:\n" + "\n".join(wrong)


def test_the_compiler_imports_nothing_of_the_explorer_or_jupyter():
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        for module, line, _ in _imports(path):
            top = module.split(".")[0]
            assert top not in {"explorer", "IPython", "ipywidgets", "anywidget", "traitlets"}, (
                f"compiler/{path.relative_to(ROOT / 'compiler')}:{line} imports {module}"
            )
