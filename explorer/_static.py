"""The front-end assets shipped as package data (``explorer/static/*``).

The widget must be one ES module for anywidget, so the JS files are concatenated in
``BUNDLE_ORDER`` (typedefs, helpers, the graph canvas, renderers, store, shell last with
the module's ``export default``) into ``bundle_text()``, which both the widget's
``_esm`` and the exported page use.
"""

from __future__ import annotations

import pathlib
from functools import cache
from importlib import resources

__all__ = ["BUNDLE_ORDER", "STATIC_DIR", "bundle_text", "static_path", "static_text"]

BUNDLE_ORDER = (
    "panes.typedefs.js",
    "util.js",
    "highlight.js",
    "code_view.js",
    "graph_tree.js",
    "graph_layout.js",
    "graph_panel.js",
    "graph.js",
    "render_frame.js",
    "render_inductor.js",
    "render_runtime.js",
    "store.js",
    "shell.js",
)
CSS_FILES = ("explorer.css", "graph.css")


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


def bundle_text() -> str:
    """The explorer's one ES module: every JS file of ``BUNDLE_ORDER``, in order."""
    return _bundle(tuple(static_text(name) for name in BUNDLE_ORDER))


@cache
def _bundle(parts: tuple[str, ...]) -> str:
    return "\n".join(
        f"// ---- {name} ----\n{text}" for name, text in zip(BUNDLE_ORDER, parts, strict=True)
    )


def css_text() -> str:
    """The explorer's CSS (its own and the graph canvas's)."""
    return "\n".join(static_text(name) for name in CSS_FILES)
