"""The front-end assets shipped as package data (``explorer/static/*``)."""

from __future__ import annotations

import pathlib
from importlib import resources

__all__ = ["STATIC_DIR", "static_path", "static_text"]


def _static_dir() -> pathlib.Path:
    # ``files()`` of a regular (non-zipped) install is a real directory, which is what
    # anywidget's ``_esm``/``_css`` accept as a ``pathlib.Path``.
    return pathlib.Path(str(resources.files("explorer").joinpath("static")))


STATIC_DIR = _static_dir()


def static_path(name: str) -> pathlib.Path:
    """The path of one asset, e.g. ``static_path("explorer.js")``."""
    return STATIC_DIR / name


def static_text(name: str) -> str:
    """The text of one asset, read through ``importlib.resources``."""
    return resources.files("explorer").joinpath("static", name).read_text(encoding="utf-8")
