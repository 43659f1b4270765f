"""The compare view: ``compiler.compare``'s table and bar chart, each row linked to the
explorer of its compiles.

``CompareWidget`` is one anywidget (``explorer/static/compare.js``) syncing the
comparison as plain data and the selected row's name. ``CompareView`` stacks it over an
output area where the selected row's ``ExplorationWidget`` appears.
"""

from __future__ import annotations

from typing import Any

import anywidget
import ipywidgets
import traitlets
from IPython.display import display

from compiler import Comparison

from ._static import static_path, widget_path

__all__ = ["CompareView", "CompareWidget", "comparison_data"]


def comparison_data(comparison: Comparison) -> dict[str, Any]:
    """The comparison as the JSON the front-end draws (numbers in milliseconds)."""
    env = comparison.environment
    return {
        "target": comparison.target,
        "environment": f"torch {env.torch} · {env.device} · {comparison.threads} threads",
        "inputs": list(comparison.inputs),
        "steps": comparison.steps,
        "warmup": comparison.warmup,
        "notes": list(comparison.notes),
        "rows": [
            {
                "name": r.name,
                "describe": r.config.describe(),
                "first_call_ms": r.first_call_ms,
                "median_ms": r.median_ms,
                "spread_ms": list(r.spread_ms) if r.spread_ms else None,
                "speedup": r.speedup,
                "compiles": r.compiles,
                "recompiles": r.recompiles,
                "graph_breaks": r.graph_breaks,
                "matches_eager": r.matches_eager,
                "eager": r.config.spec.backend is None,
                "error": r.error,
                "explorable": bool(r.exploration is not None and r.exploration.compiles),
            }
            for r in comparison.rows
        ],
    }


class CompareWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """Table and bar chart of one ``Comparison``; ``selected`` is the clicked row's name."""

    _esm = widget_path("compare")
    _css = static_path("compare.css")

    comparison = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)

    def __repr__(self) -> str:
        return f"CompareWidget({self.comparison.get('target', '')!r})"


class CompareView(ipywidgets.VBox):  # type: ignore[misc]
    """A ``Comparison`` with its table and chart, and the explorer of the selected row.

    Example:
        >>> import torch, compiler, explorer
        >>> c = compiler.compare(torch.nn.Linear(4, 4), torch.randn(2, 4), configs=["aot_eager"])
        >>> view = explorer.view_comparison(c)
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()):  # outside Jupyter: printed as text
        ...     view = view.select("aot_eager")
        >>> view.selected
        'aot_eager'
    """

    def __init__(self, comparison: Comparison, **kwargs: Any) -> None:
        if not isinstance(comparison, Comparison):
            msg = (
                f"CompareView shows a compiler.Comparison, not a {type(comparison).__name__}; "
                "make one with compiler.compare(target, *inputs)."
            )
            raise TypeError(msg)
        self._comparison = comparison
        self.table = CompareWidget(comparison=comparison_data(comparison))
        self.output = ipywidgets.Output()
        super().__init__(children=[self.table, self.output], **kwargs)
        self.table.observe(self._show_selected, names="selected")

    @property
    def comparison(self) -> Comparison:
        """The Comparison on show."""
        return self._comparison

    @property
    def selected(self) -> str:
        """The name of the row whose explorer shows below the table ("" for none)."""
        return str(self.table.selected)

    def select(self, name: str) -> CompareView:
        """Show the explorer of row ``name`` (``""`` hides it); returns the view."""
        if name:
            row = self._comparison.row(name)
            if row.exploration is None:
                raise ValueError(f"{name!r} has no recorded compiles to explore.")
        self.table.selected = name
        return self

    def _show_selected(self, change: dict[str, Any]) -> None:
        from .widget import ExplorationWidget

        self.output.clear_output(wait=True)
        name = change["new"]
        if not name:
            return
        exploration = self._comparison.row(name).exploration
        if exploration is not None:
            with self.output:
                display(ExplorationWidget(exploration))

    def __repr__(self) -> str:
        return f"CompareView({self._comparison!r})"
