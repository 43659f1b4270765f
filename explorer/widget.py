"""``ExplorationWidget``: one Exploration as linked views, in Jupyter.

The widget syncs two traits with the front-end (``explorer/static/explorer.js``):
``view``, the JSON that ``explorer.view_model.build_view`` makes of the Exploration,
and ``selection``, the small state of what the user is looking at: ``compile``, ``stage``,
``src``, ``node`` and ``kernel``, each an id from the view or None. ``update`` swaps
the Exploration and keeps the selection, which is what a live recompile needs.
"""

from __future__ import annotations

import os
from typing import Any

import anywidget
import traitlets

from compiler import Exploration

from ._static import static_path
from .view_model import build_view

SELECTION_KEYS = ("compile", "stage", "src", "node", "kernel")


def _default_selection(view: dict[str, Any]) -> dict[str, Any]:
    """The view's own default selection (first compile, its first stage), keys complete."""
    default = view.get("default_selection") or {}
    return {key: default.get(key) for key in SELECTION_KEYS}


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

    _esm = static_path("explorer.js")
    _css = static_path("explorer.css")

    view = traitlets.Dict().tag(sync=True)
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
        view = build_view(exploration)
        kwargs.setdefault("selection", _default_selection(view))
        super().__init__(view=view, **kwargs)
        self.on_msg(self._on_custom_msg)

    @property
    def exploration(self) -> Exploration:
        """The Exploration on show."""
        return self._exploration

    def update(self, exploration: Exploration) -> None:
        """Show ``exploration`` instead, in place, keeping the user's selection.

        The selection is kept while the new exploration still has the selected compile
        (a recompile after an edit has the same compile ids); otherwise the view starts
        from its default selection.
        """
        view = build_view(exploration)
        selection = dict(self.selection)
        if selection.get("compile") not in {c.get("id") for c in view.get("compiles", ())}:
            selection = _default_selection(view)
        self._exploration = exploration
        with self.hold_sync():
            self.view = view
            self.selection = selection

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """The exploration as one self-contained HTML page (written to ``path`` if given).

        Example:
            >>> html = w.to_html("report.html")  # doctest: +SKIP
        """
        from .export import to_html

        return to_html(self._exploration, path)

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "export_html":
            return
        try:
            reply = {"type": "export_html", "html": self.to_html()}
        except Exception as exc:  # report it in the page; never kill the kernel's comm
            reply = {"type": "export_html", "error": f"HTML export failed: {exc}"}
        self.send(reply)

    def __repr__(self) -> str:
        return f"ExplorationWidget({getattr(self, '_exploration', None)!r})"
