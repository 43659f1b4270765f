"""The kernel lab inside the explorer: the Triton lowering pane's "Edit in kernel lab".

The lab's front-end (``explorer/static/lab.js``) shares the editors' bundle,
``dist/editors.js``, with the live editor, so that one CodeMirror serves both; it is sent
to the browser when the user first opens the lab: the explorer's own bundle stays small,
and an exported page, which has no kernel to lower with, never carries the editor. Lowering is
``compiler.relower`` in its warm worker process.
"""

from __future__ import annotations

from typing import Any

import compiler
from compiler.lab import LabError, shared_lab, triton_available

from .._static import widget_module
from ..panes import pane_json
from ..panes.frame import find_compile
from ..panes.kernels.lowering import LabFailure, build_lab_result


def lab_module() -> dict[str, Any]:
    """The lab's ES module text, and the worker started so that it is warm by the time
    the user's first request arrives (``{data}``), or why the lab cannot run."""
    if not triton_available():
        return {"error": str(compiler.TritonMissingError())}
    shared_lab().start()
    return {"data": widget_module("editors")}


def relower_reply(exploration: compiler.Exploration, msg: Any) -> dict[str, Any]:
    """``{compile, kernel, source, config, target, sass}`` -> ``{data: LabResult}`` or
    ``{data: LabFailure}`` (an edit that does not lower is the user's to fix, shown at its
    line), or ``{error}`` for a request that names no Triton kernel."""
    if not isinstance(msg, dict):
        return {"error": "the kernel lab sent a malformed request"}
    try:
        c = find_compile(exploration, msg.get("compile"))
    except Exception as exc:
        return {"error": str(exc)}
    kernel = next((k for k in c.kernels() if k.id == msg.get("kernel")), None)
    if kernel is None:
        return {"error": f"compile {c.key} has no kernel {msg.get('kernel')!r}"}
    source = msg.get("source")
    config = msg.get("config")
    target = msg.get("target")
    try:
        variant = compiler.relower(
            kernel,
            source if isinstance(source, str) else None,
            config if isinstance(config, dict) else None,
            target if isinstance(target, (str, int)) else None,
            sass=bool(msg.get("sass")),
        )
    except LabError as exc:
        return {"data": pane_json(LabFailure(kind=exc.kind, message=exc.message, line=exc.line))}
    return {"data": pane_json(build_lab_result(variant))}
