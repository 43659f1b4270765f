"""``ExplorationWidget``: one Exploration as linked views, in Jupyter.

The widget syncs two small traits with the front-end (the ES module esbuild bundles into
``explorer/static/dist/explorer.js``): ``index``, what ``explorer.panes.build_index`` makes
of the Exploration, and ``selection``, what the user looks at: ``compile``, ``stage``,
``src``, ``node`` and ``kernel``, each an id or None. A pane is built when the front-end
opens it, through anywidget's command API: the front-end invokes ``_pane`` with
``{compile, pane}`` and gets the pane's JSON data back, built once and cached here; the
Export button invokes ``_export_html``, which reuses that cache. ``update`` swaps the
Exploration and keeps the selection where it still exists, which is what a live recompile
needs (Python repairs the selection, ``explorer.panes.kept_selection``; the front-end shows
the selection it gets); a pane the front-end already holds from the version before is not
sent again when it did not change (the front-end names the digest it holds, ``have``; the
answer is then ``{unchanged: true}``), so a live edit re-sends only the panes it changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import anywidget
import anywidget.experimental
import traitlets

from compiler import Exploration
from compiler.link.ids import EXPLORATION_PANES

from ._static import css_text, widget_path
from .panes import (
    Index,
    PaneNotFound,
    build_index,
    build_pane,
    kept_selection,
    no_gc,
    pane_json,
)

SELECTION_KEYS = ("compile", "stage", "src", "node", "kernel")


class ExplorationWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """The explorer for one ``Exploration``: compiles, stages and their cross-links.

    Args:
        exploration: what ``compiler.explore``, ``compiler.load_trace`` or
            ``%%compile`` produced.

    Example:
        >>> import torch, compiler
        >>> w = ExplorationWidget(compiler.explore(torch.cos, torch.randn(3), backend="eager"))
        >>> w.selection["compile"]
        '0/0'
    """

    _esm = widget_path("explorer")
    _css = traitlets.Unicode(css_text()).tag(sync=True)

    index = traitlets.Dict().tag(sync=True)
    selection = traitlets.Dict().tag(sync=True)

    def __init__(self, exploration: Exploration, **kwargs: Any) -> None:
        if not isinstance(exploration, Exploration):
            msg = (
                f"ExplorationWidget shows a compiler.Exploration, not a "
                f"{type(exploration).__name__}; make one with compiler.explore(...) or "
                "compiler.load_trace(...)."
            )
            raise TypeError(msg)
        self._exploration = exploration
        self._panes: dict[tuple[str, str], Any] = {}
        self._digests: dict[tuple[str, str], str] = {}
        index = self._index(exploration)
        kwargs.setdefault("selection", pane_json(index.default_selection))
        with no_gc():
            data = pane_json(index)
        super().__init__(index=data, **kwargs)

    @property
    def exploration(self) -> Exploration:
        """The Exploration on show."""
        return self._exploration

    def pane(self, compile_key: str | None, pane_id: str) -> Any:
        """The JSON data of one pane, built on first use and cached.

        Example:
            >>> w.pane("0/0", "dynamo_output_graph")["kind"]  # doctest: +SKIP
            'graph'
        """
        key = ("", pane_id) if pane_id in EXPLORATION_PANES else (compile_key or "", pane_id)
        data = self._panes.get(key)
        if data is None:
            with no_gc():
                data = pane_json(build_pane(self._exploration, key[0], pane_id))
            self._panes[key] = data
        return data

    def select(self, stage: str, compile: str | None = None) -> ExplorationWidget:
        """Open pane ``stage`` (a pane id, e.g. ``"bytecode"``, ``"recompile_reasons"``,
        ``"forward/inductor_output_code"``) of compile ``compile`` (a ``Compile.key``;
        default: the compile on show, else the first that has the pane). Returns the
        widget, so a cell can end with ``explorer.view(exp).select("bytecode", "1/0")``.

        Raises:
            ValueError: no such compile, or the compile has no such pane; the message
                lists the ones there are.

        Example:
            >>> w.select("dynamo_cpp_guards_str").selection["stage"]  # doctest: +SKIP
            'dynamo_cpp_guards_str'
        """
        compiles = {c["key"]: [p["id"] for p in c["panes"]] for c in self.index["compiles"]}
        if compile is not None and compile not in compiles:
            raise ValueError(f"no compile {compile!r} here; the compiles are {list(compiles)}.")
        order = [compile] if compile else [self.selection.get("compile"), *compiles]
        key = next((k for k in order if k in compiles and stage in compiles[k]), None)
        if key is None:
            where = compile or self.selection.get("compile")
            panes = compiles.get(where, [])
            msg = f"compile {where!r} has no pane {stage!r}; its panes are {panes}."
            raise ValueError(msg)
        self.selection = {**dict.fromkeys(SELECTION_KEYS), "compile": key, "stage": stage}
        return self

    def update(self, exploration: Exploration) -> None:
        """Show ``exploration`` instead, in place, keeping the user's selection where the
        selected compile, stage, node, kernel and source line still exist (a recompile
        after an edit has the same compile keys); otherwise from the default selection.
        """
        index = self._index(exploration)
        old = dict(self.selection)
        self._exploration = exploration
        self._panes = {}
        self._digests = {}
        selection = kept_selection(index, old, self._has_node)
        with no_gc():
            data = pane_json(index)
        with self.hold_sync():
            self.index = data
            self.selection = pane_json(selection)

    def _has_node(self, compile_key: str, pane_id: str, node: str) -> bool:
        """Whether pane ``pane_id`` of compile ``compile_key`` draws a node named ``node``."""
        try:
            pane = self.pane(compile_key, pane_id)
        except PaneNotFound:
            return False
        return node in pane.get("nodes", {}).get("name", ())  # a graph's node columns

    def _index(self, exploration: Exploration) -> Index:
        """The index the front-end gets for ``exploration``."""
        return build_index(exploration)

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """The exploration as one self-contained HTML page (written to ``path`` if given),
        reusing the panes this widget already built.

        Example:
            >>> html = w.to_html("report.html")  # doctest: +SKIP
        """
        from .export import to_html

        return to_html(self._exploration, path, built=self._panes)

    def pane_digest(self, compile_key: str | None, pane_id: str) -> str:
        """A digest of one pane's data: equal digests, equal panes (across versions)."""
        key = ("", pane_id) if pane_id == "findings" else (compile_key or "", pane_id)
        found = self._digests.get(key)
        if found is None:
            text = json.dumps(self.pane(compile_key, pane_id), sort_keys=True, default=str)
            found = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
            self._digests[key] = found
        return found

    @anywidget.experimental.command  # type: ignore[misc]
    def _pane(self, msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """The front-end opens a pane: ``{compile, pane, have}`` -> ``{data, digest}``,
        ``{unchanged: true, digest}`` when ``have`` is its digest, or ``{error}``."""
        compile_key, pane_id = msg.get("compile"), str(msg.get("pane"))
        try:
            digest = self.pane_digest(compile_key, pane_id)
            if msg.get("have") == digest:
                return {"unchanged": True, "digest": digest}, []
            return {"data": self.pane(compile_key, pane_id), "digest": digest}, []
        except Exception as exc:  # report it in the pane; never kill the kernel's comm
            return {"error": f"could not build pane {pane_id} of compile {compile_key}: {exc}"}, []

    @anywidget.experimental.command  # type: ignore[misc]
    def _lab_module(self, _msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """The kernel lab opens: its ES module as ``{data}``, or ``{error}`` saying how to
        install Triton (``explorer/editing/lab.py``)."""
        from .editing.lab import lab_module

        try:
            return lab_module(), []
        except Exception as exc:
            return {"error": f"the kernel lab could not start: {exc}"}, []

    @anywidget.experimental.command  # type: ignore[misc]
    def _relower(self, msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """The kernel lab lowers an edit: ``{data}`` a LabResult or LabFailure pane."""
        from .editing.lab import relower_reply

        try:
            return relower_reply(self._exploration, msg), []
        except Exception as exc:  # never kill the kernel's comm
            return {"error": f"the kernel lab failed: {exc}"}, []

    @anywidget.experimental.command  # type: ignore[misc]
    def _export_html(self, _msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """The Export button: the page as ``{data}`` (its HTML) or ``{error}``."""
        try:
            return {"data": self.to_html()}, []
        except Exception as exc:
            return {"error": f"HTML export failed: {exc}"}, []

    def __repr__(self) -> str:
        return f"ExplorationWidget({getattr(self, '_exploration', None)!r})"
