"""What torch ships as files, read without importing torch.

Reading a ``TORCH_TRACE`` log, the advisor over it, the offline page and the Markdown
report run where torch is not installed (a laptop with a log copied from a cluster), so
nothing on that path imports torch: ``importlib.util.find_spec("torch")`` locates the
installed package without running it (``find_spec("torch._dynamo")`` would import torch).

The graph-break registry is ``torch/_dynamo/graph_break_registry.json`` (torch 2.11 to
2.14.1). Where torch is absent, or its torch has no registry, the copy this package ships
is read: ``compiler/graph_break_registry.json``, written from the installed torch at build
time by ``scripts/ship_graph_break_registry.py`` (``tests/test_torch_files.py`` checks it
against the installed torch's). ``registry_source()`` says which one was read.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from compiler.errors import ExploreError

# torch._dynamo.exc.get_gbid_documentation_link's site (torch 2.11 to 2.14.1)
GRAPH_BREAK_SITE_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"
SHIPPED_REGISTRY = Path(__file__).resolve().parent / "graph_break_registry.json"

Registry = dict[str, tuple[dict[str, Any], ...]]


def torch_dir() -> Path | None:
    """The installed torch package's folder, found without importing torch; None where
    torch is not installed.

    Example:
        >>> (torch_dir() / "_dynamo").is_dir()
        True
    """
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):  # a broken torch, or a `torch` module without a spec
        return None
    places = list(spec.submodule_search_locations or ()) if spec else []
    return Path(places[0]) if places else None


def installed_torch_version() -> str | None:
    """The installed torch's version, read from its ``torch/version.py`` (no import, and
    not ``importlib.metadata``, whose import costs more than reading the file); None where
    torch is not installed or the file names none.

    Example:
        >>> installed_torch_version().startswith("2.")
        True
    """
    where = torch_dir()
    try:
        text = (where / "version.py").read_text(encoding="utf-8") if where else ""
    except OSError:
        return None
    found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return found.group(1) if found else None


def gb_page(gb_id: str) -> str:
    """The documentation page of a registry id, built as torch's
    ``get_gbid_documentation_link`` builds it.

    Example:
        >>> gb_page("GB0025")
        'https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html'
    """
    return f"{GRAPH_BREAK_SITE_URL}gb{gb_id.lstrip('GB')}.html"


def with_links(raw: dict[str, Any]) -> Registry:
    """A registry file's content -> id -> its entries (current first), each with
    ``Link``: the page torch links for the current wording's type. torch maps every type
    an id ever had to that id, a later id winning, so a type two ids shared links the
    later one's page, as ``get_gbid_documentation_link`` does.

    Example:
        >>> reg = with_links({"GB0001": [{"Gb_type": "a"}], "GB0002": [{"Gb_type": "b"}]})
        >>> reg["GB0002"][0]["Link"]
        'https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0002.html'
    """
    id_of_type: dict[str, str] = {}
    for gb_id, entries in raw.items():
        for e in entries if isinstance(entries, list) else ():
            if isinstance(e, dict):
                id_of_type[str(e.get("Gb_type"))] = str(gb_id)
    out: Registry = {}
    for gb_id, entries in raw.items():
        if not isinstance(entries, list):
            continue
        kept = [e for e in entries if isinstance(e, dict)]
        owner = id_of_type.get(str(kept[0].get("Gb_type"))) if kept else None
        link = gb_page(owner) if owner else ""
        out[str(gb_id)] = tuple({**e, "Link": link} for e in kept)
    return out


def _read(path: Path) -> dict[str, Any] | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


@functools.cache
def _load() -> tuple[Registry, str]:
    where = torch_dir()
    raw = _read(where / "_dynamo" / "graph_break_registry.json") if where else None
    if raw is not None:
        version = installed_torch_version() or "?"
        return with_links(raw), f"the installed torch {version}'s graph-break registry"
    shipped = _read(SHIPPED_REGISTRY) or {}
    version = str(shipped.get("torch", "?"))
    registry = shipped.get("registry")
    if not isinstance(registry, dict):
        return {}, "no graph-break registry (no torch here, and this package ships none)"
    shipped_from = f"the graph-break registry shipped with torch-compile-explorer (torch {version})"
    return with_links(registry), shipped_from


def graph_break_registry() -> Registry:
    """torch's graph-break registry: id (``GB0025``) -> its entries, the current one
    first, then the wordings it had before (``Gb_type``, ``Context``, ``Explanation``,
    ``Hints``), each with ``Link``, its page. The installed torch's where there is one,
    else the shipped copy; read once per process (the files do not change while it runs).

    Example:
        >>> graph_break_registry()["GB0025"][0]["Gb_type"]
        'Call to `torch._dynamo.graph_break()`'
    """
    return _load()[0]


def registry_source() -> str:
    """Which registry ``graph_break_registry`` read, as a phrase.

    Example:
        >>> registry_source().endswith(("graph-break registry", ")"))
        True
    """
    return _load()[1]


def torch_needed(what: str, exc: ImportError) -> ExploreError:
    """The error for a command that needs torch where importing torch failed.

    Example:
        >>> str(torch_needed("running train.py", ImportError("no torch")))[:50]
        'running train.py needs torch, and importing it fai'
    """
    return ExploreError(
        f"{what} needs torch, and importing it failed ({exc}). Install torch "
        "(pip install torch-compile-explorer brings it). Reading a TORCH_TRACE log or an "
        "Exploration .json needs no torch."
    )
