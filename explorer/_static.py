"""The front-end assets shipped as package data (``explorer/static/``).

The JS sources are ES modules under ``explorer/static/``: the widgets' entry modules and
the shared helpers at its top, the pane renderers in ``panes/``, the graph canvas in
``graph/``. esbuild bundles each widget's entry module and what it imports into one file
under ``explorer/static/dist/`` (``npm run build``, ``js/build.mjs``), committed so that
users never need Node.
``tests/test_frontend.py`` rebuilds and compares, so the shipped bundle is never stale.
The widgets' ``_esm`` are these files; the exported page inlines ``dist/page.js``, the
explorer with its stand-in for the anywidget model (``static/page.js``).
"""

from __future__ import annotations

import pathlib
import re
from functools import cache
from importlib import resources

__all__ = [
    "BUNDLES",
    "PAGE_MODULE",
    "STATIC_DIR",
    "WIDGET_MODULES",
    "css_text",
    "inline_module",
    "static_path",
    "static_text",
    "widget_module",
    "widget_path",
]

# dist/<name>.js for each widget and for the exported page (js/build.mjs ENTRIES names
# their entry modules)
WIDGET_MODULES = ("explorer", "live", "diff", "compare", "lab")
PAGE_MODULE = "page"
BUNDLES = (*WIDGET_MODULES, PAGE_MODULE)
CSS_FILES = ("explorer.css", "graph.css")
# how esbuild ends an ES module bundle: one `export { local as name, ... };` statement
_EXPORTS = re.compile(r"export\s*\{(?P<names>[\w$,\s]*)\};?\s*\Z")


def _static_dir() -> pathlib.Path:
    # ``files()`` of a regular (non-zipped) install is a real directory.
    return pathlib.Path(str(resources.files("explorer").joinpath("static")))


STATIC_DIR = _static_dir()


def static_path(name: str) -> pathlib.Path:
    """The path of one asset, e.g. ``static_path("explorer.css")``."""
    return STATIC_DIR / name


def static_text(name: str) -> str:
    """The text of one asset, read through ``importlib.resources``."""
    return resources.files("explorer").joinpath("static", name).read_text(encoding="utf-8")


def widget_path(name: str) -> pathlib.Path:
    """The built ES module of widget ``name`` (one of ``WIDGET_MODULES``), for its ``_esm``.

    Example:
        >>> widget_path("live").name
        'live.js'
    """
    return static_path(f"dist/{name}.js")


def widget_module(name: str) -> str:
    """The text of the built ES module ``name`` (one of ``BUNDLES``: a widget's or the
    exported page's), e.g. ``widget_module("explorer")``."""
    if name not in BUNDLES:
        msg = f"no built front-end module {name!r}; the bundles are {', '.join(BUNDLES)}"
        raise ValueError(msg)
    return _read(f"dist/{name}.js")


@cache
def _read(name: str) -> str:
    return static_text(name)


@cache  # a constant of the installed package: the exported page inlines it every time
def inline_module(name: str, binding: str) -> str:
    """Widget ``name``'s built module as the body of an inline ``<script type="module">``,
    its exports gathered in the constant ``binding`` (``binding.default.render``, and any
    named export) instead, so that code after it in the same script can use them: the
    graph canvas's test page, the compare widget's.

    Example:
        >>> "const explorerModule = {" in inline_module("explorer", "explorerModule")
        True
    """
    text = widget_module(name)
    found = _EXPORTS.search(text)
    if found is None:
        msg = (
            f"explorer/static/dist/{name}.js does not end with esbuild's export statement; "
            "rebuild it with `npm run build`"
        )
        raise RuntimeError(msg)
    pairs = []
    for item in found["names"].split(","):
        local, _, exported = item.strip().partition(" as ")
        if local:
            pairs.append(f"{exported or local}: {local}")
    return f"{text[: found.start()]}const {binding} = {{ {', '.join(pairs)} }};\n"


@cache  # a constant of the installed package, as ``inline_module``
def css_text() -> str:
    """The explorer's CSS (its own and the graph canvas's)."""
    return "\n".join(static_text(name) for name in CSS_FILES)
