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
    "_torch_files",
    "_compat",
    "model",
    "parse",
    "decompile",
    "gpu",
    "measure",
    "link",
    "store",
    "trace",
    "profile",
    "ranks",
    "costs",
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


# Torch's printed text is read in compiler/parse/ only. Elsewhere a regular expression
# reads text that is not torch's, each module named here with whose text it reads.
RE_ALLOWED = {
    "compiler/model/base.py": "CompileId's own string form (written by its __str__); the "
    "model sits below parse/",
    "compiler/_compat/versions.py": "torch's version number, at the private API it comes "
    "from, below parse/",
    "compiler/_compat/fusion_ir.py": "the `; del` suffixes of the code torch's own printer "
    "writes, at the private API they come from, below parse/",
    "compiler/link/user_code.py": "file paths (site-packages, the standard library), not "
    "printed text",
    "compiler/capture/recording.py": "the user's source lines (is a frame's first line a "
    "def, a decorator or a lambda)",
    "compiler/live/session.py": "tracebacks of the user's edited code, from our own worker",
    "compiler/live/worker.py": "tracebacks of the user's edited code, in our own worker",
    "compiler/advise/breaks/causes.py": "the user's source line at a graph break",
    "compiler/advise/findings.py": "the Markdown of the advisor's own findings",
    "explorer/_static.py": "the export statement of our own esbuild bundles",
    "explorer/markdown.py": "backticks in the Markdown the reports write",
    "compiler/_torch_files.py": "the `__version__ = ...` line of torch's version.py, read as a "
    "file so the trace path imports no torch; below parse/",
}

# strings that only torch's printed text holds: splitting on them outside parse/ is
# reading that text by hand (docstrings and comments may name them)
TORCH_TEXT_MARKERS = ("type='", "#loc", "extern_kernels.", "__builtins_dict")


def _imports_re(path: Path) -> bool:
    return any(module == "re" or module.startswith("re.") for module, _, _ in _imports(path))


def _code_strings(tree: ast.AST) -> list[tuple[str, int]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.value, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


def test_torchs_text_is_read_only_in_parse_or_by_a_named_exception():
    outside = [
        path for path in _python_modules()
        if path.relative_to(ROOT).parts[:2] != ("compiler", "parse")
    ]  # fmt: skip
    readers = {p.relative_to(ROOT).as_posix() for p in outside if _imports_re(p)}
    unlisted = sorted(readers - RE_ALLOWED.keys())
    assert not unlisted, (
        f"{unlisted} import re outside compiler/parse/: move the reading of torch's text "
        "into parse/, or name the module in RE_ALLOWED with whose text it reads"
    )
    stale = sorted(RE_ALLOWED.keys() - readers)
    assert not stale, f"{stale} no longer import re: take them off RE_ALLOWED"
    by_hand = [
        f"{p.relative_to(ROOT)}:{line} {marker!r}"
        for p in outside
        for text, line in _code_strings(ast.parse(p.read_text(encoding="utf-8")))
        for marker in TORCH_TEXT_MARKERS
        if marker in text
    ]
    assert not by_hand, "torch's text split by hand outside compiler/parse/:\n" + "\n".join(by_hand)


def _module_of(dotted: str) -> str | None:
    """The module of ours that a dotted import names: ``compiler.link.ids.key_of`` ->
    ``compiler.link.ids``; ``compiler.Compile`` -> ``compiler``; None outside ours."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        path = ROOT.joinpath(*parts[:n])
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return ".".join(parts[:n]).removesuffix(".__init__")
    return None


# What the explorer may import of the compiler: the package's API and these modules. A
# view reads the model and its derived values (``compiler/model/derived.py``); a module
# added here is one more place the explorer reaches into.
EXPLORER_SURFACE = frozenset({
    "compiler",
    "compiler.advise.breaks.registry",
    "compiler.advise.costs.time_phases",
    "compiler.advise.diagnose",
    "compiler.advise.findings",
    "compiler.capture.cell",
    "compiler.capture.progress",
    "compiler.capture.script",
    "compiler.capture.spec",
    "compiler.compare.comparison",
    "compiler.costs.caches",
    "compiler.costs.cudagraphs",
    "compiler.costs.memory",
    "compiler.diff.compiles",
    "compiler.errors",
    "compiler.gpu.lowered_lines",
    "compiler.lab",
    "compiler.link.ids",
    "compiler.link.subgraphs",
    "compiler.link.user_code",
    "compiler.live.session",
    "compiler.live.target",
    "compiler.measure.memory_peak",
    "compiler.model",
    "compiler.model.stages",
    "compiler.parse.words.cudagraphs",
    "compiler.profile.regions",  # calls per compile in words (tlparse #46), one wording
    "compiler.ranks.scan",
    "compiler.ranks.skew",
})  # fmt: skip


def test_the_explorer_imports_only_the_listed_surface_of_the_compiler():
    used: dict[str, list[str]] = {}
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        for dotted, line, _ in _imports(path):
            module = _module_of(dotted)
            if module is not None and module.split(".")[0] == "compiler":
                used.setdefault(module, []).append(f"{path.relative_to(ROOT)}:{line}")
    beyond = {m: places for m, places in used.items() if m not in EXPLORER_SURFACE}
    assert not beyond, f"the explorer reaches past EXPLORER_SURFACE: {beyond}"
    unused = sorted(EXPLORER_SURFACE - used.keys())
    assert not unused, f"{unused} are no longer imported by the explorer: take them off"
    # no parser but the one whose type (UserFrame) the CUDA-graph pane names
    parsers = [m for m in used if m.startswith("compiler.parse.")]
    assert parsers in ([], ["compiler.parse.words.cudagraphs"]), parsers


def test_the_explorer_has_no_import_loop_not_even_through_a_late_import():
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        here = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        targets = {_module_of(dotted) for dotted, _, _ in _imports(path)}
        graph[here] = {t for t in targets if t and t.startswith("explorer.") and t != here}
    # a package's __init__ hands its modules' names on: an arrow into it is not a loop
    packages = {m for m in graph if (ROOT.joinpath(*m.split(".")) / "__init__.py").is_file()}
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            loop = [*path[path.index(module) :], module]
            raise AssertionError("an import loop in explorer/: " + " -> ".join(loop))
        if module in done:
            return
        for target in sorted(graph.get(module, ()) - packages):
            walk(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
