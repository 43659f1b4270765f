"""What the GPU recording scripts (``scripts/record_*.py``) share: the repository on the
import path, and writing each recording, each failure and each summary into the output
folder. A script imports it first (``from gpu_recording import ROOT, ...``): Python puts a
script's own folder on the path, so it needs no package. Plain stdlib: it runs on the GPU
machine (torch 2.11, Python 3.12, no ipywidgets or depyf).
"""

from __future__ import annotations

import gzip
import json
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _path in (str(ROOT / "tests"), str(ROOT)):  # the repository first, then tests/programs
    if _path not in sys.path:
        sys.path.insert(0, _path)

__all__ = ["ROOT", "write_failure", "write_json", "write_recording"]


def write_recording(path: Path, exp: Any, *, level: int | None = None) -> Path:
    """Write Exploration ``exp`` to ``path`` as its JSON (``compact`` form), gzipped at
    ``level`` when given (a ``.gz`` path)."""
    text = exp.to_json()
    if level is None:
        path.write_text(text)
    else:
        path.write_bytes(gzip.compress(text.encode(), level))
    return path


def write_failure(out: Path, name: str, text: str | None = None) -> Path:
    """Write why job ``name`` failed to ``out/<name>.error.txt``: ``text``, else the
    traceback of the exception being handled."""
    path = out / f"{name}.error.txt"
    path.write_text(traceback.format_exc() if text is None else text)
    return path


def write_json(path: Path, value: Any) -> Path:
    """Write a summary or facts file: indented JSON, anything JSON cannot say as str."""
    path.write_text(json.dumps(value, indent=1, default=str))
    return path
