"""The front-end assets shipped as package data (``explorer/static/``).

The JS sources are ES modules under ``explorer/static/``: the widgets' entry modules and
the shared helpers at its top, the pane renderers in ``panes/``, the graph canvas in
``graph/``. esbuild bundles each widget's entry module and what it imports into one file
under ``explorer/static/dist/`` (``npm run build``, ``js/build.mjs``), committed so that
users never need Node.
``tests/test_frontend.py`` rebuilds and compares, so the shipped bundle is never stale.
The widgets' ``_esm`` are these files: the live editor's is ``dist/editors.js``, which
also holds the kernel lab, so that one CodeMirror serves both. The exported page inlines
the explorer's bundle and ``dist/page.js`` (its stand-in for the anywidget model,
``static/page.js``) in one script (``page_script``): each piece of front-end code is in
the package once.
"""

from __future__ import annotations

import pathlib
import re
from functools import cache

__all__ = [
    "BUNDLES",
    "PAGE_MODULE",
    "STATIC_DIR",
    "WIDGET_MODULES",
    "css_text",
    "inline_module",
    "page_script",
    "static_path",
    "static_text",
    "widget_module",
    "widget_path",
]

# dist/<name>.js for each widget and for the exported page's entry (js/build.mjs ENTRIES
# names their entry modules); "editors" is the live editor's and the kernel lab's
WIDGET_MODULES = ("explorer", "editors", "diff", "compare")
PAGE_MODULE = "page"
BUNDLES = (*WIDGET_MODULES, PAGE_MODULE)
CSS_FILES = ("explorer.css", "graph.css")
# how esbuild ends an ES module bundle: one `export { local as name, ... };` statement
_EXPORTS = re.compile(r"export\s*\{(?P<names>[\w$,\s]*)\};?\s*\Z")


# The folder beside this module: the package is installed as files (the widgets hand
# anywidget a path), so ``importlib.resources`` would name the same folder, at 10 ms of
# imports (zipfile, tempfile) in every ``python -m explorer report``.
STATIC_DIR = pathlib.Path(__file__).resolve().with_name("static")


def static_path(name: str) -> pathlib.Path:
    """The path of one asset, e.g. ``static_path("explorer.css")``."""
    return STATIC_DIR / name


def static_text(name: str) -> str:
    """The text of one asset, e.g. ``static_text("explorer.css")``."""
    return static_path(name).read_text(encoding="utf-8")


def widget_path(name: str) -> pathlib.Path:
    """The built ES module of widget ``name`` (one of ``WIDGET_MODULES``), for its ``_esm``.

    Example:
        >>> widget_path("editors").name
        'editors.js'
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
    """Bundle ``name``'s built module as a statement of an inline ``<script type="module">``,
    its exports gathered in the constant ``binding`` (``binding.default.render``, and any
    named export) instead, so that code after it in the same script can use them: the
    exported page, the graph canvas's test page, the compare widget's. The module's own
    names stay inside a function, so two bundles can share one script.

    Example:
        >>> inline_module("explorer", "explorerModule").splitlines()[0]
        'const explorerModule = (() => {'
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
    body = text[: found.start()]
    return f"const {binding} = (() => {{\n{body}return {{ {', '.join(pairs)} }};\n}})();\n"


@cache  # a constant of the installed package, as ``inline_module``
def page_script() -> str:
    """The exported page's script: the explorer's widget bundle and the page's entry
    (its stand-in model), inlined, and the explorer mounted on the page's data.

    Example:
        >>> page_script().splitlines()[-1]
        'pageModule.mountPage(explorerModule.default);'
    """
    return (
        inline_module("explorer", "explorerModule")
        + inline_module(PAGE_MODULE, "pageModule")
        + "pageModule.mountPage(explorerModule.default);\n"
    )


@cache  # a constant of the installed package, as ``inline_module``
def css_text() -> str:
    """The explorer's CSS (its own and the graph canvas's)."""
    return "\n".join(static_text(name) for name in CSS_FILES)
