"""The diff view: pick two versions, see ``compiler.diff`` of them side by side.

``DiffWidget`` syncs the version labels and the chosen pair with
``explorer/static/diff.js`` and sends the projection of the ``Diff``: the summary, and
per stage both texts as lines, the line operations and the lines of the nodes that
were added, removed or changed.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from compiler import Exploration
from compiler.diff.compiles import Diff, diff

from .._static import widget_path


def diff_view(d: Diff) -> dict[str, Any]:
    """The JSON the diff view draws: summary, then every stage, changed ones first."""
    stages = []
    for s in d.stages:
        marks_a: dict[int, str] = {}
        marks_b: dict[int, str] = {}
        for n in s.nodes:
            if n.a_line:
                marks_a[n.a_line] = n.status
            if n.b_line:
                marks_b[n.b_line] = n.status
        stages.append({
            "compile": s.compile,
            "stage": s.stage,
            "kind": s.kind,
            "changed": s.changed,
            "presence": s.presence,
            "a_lines": s.a_text.splitlines(),
            "b_lines": s.b_text.splitlines(),
            "ops": [[op.tag, op.a_start, op.a_end, op.b_start, op.b_end] for op in s.lines],
            "nodes": [{"status": n.status, "name": n.name, "detail": n.detail} for n in s.nodes],
            "a_marks": {str(k): v for k, v in marks_a.items()},
            "b_marks": {str(k): v for k, v in marks_b.items()},
        })  # fmt: skip
    stages.sort(key=lambda st: not st["changed"])
    return {"summary": d.summary, "a": d.a_label, "b": d.b_label, "stages": stages}


class DiffWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """Two of a list of Explorations compared (``compiler.diff``), side by side.

    Example:
        >>> from pathlib import Path
        >>> from compiler import Exploration
        >>> exp1, exp2 = (Exploration.from_json(Path(f"notebooks/recordings/{n}.json").read_text())
        ...               for n in ("pointwise", "graph_break"))
        >>> w = DiffWidget()
        >>> w.set_versions([("v1", exp1), ("v2", exp2)])
        >>> w.pick
        {'a': 'v1', 'b': 'v2'}
    """

    _esm = widget_path("diff")

    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    pick = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._versions: list[tuple[str, Exploration]] = []
        self.observe(self._on_pick, names="pick")

    def set_versions(self, versions: list[tuple[str, Exploration]]) -> None:
        """Offer these (label, exploration) pairs; the pick defaults to the last two."""
        self._versions = list(versions)
        labels = [label for label, _ in versions]
        a, b = self.pick.get("a"), self.pick.get("b")
        keep = a in labels and b in labels and labels[-1] == b
        with self.hold_sync():
            self.labels = labels
            if not keep and len(labels) >= 2:
                self.pick = {"a": labels[-2], "b": labels[-1]}
            elif len(labels) < 2:
                self.view = {}
        if keep:
            self._refresh()

    def _on_pick(self, _change: Any) -> None:
        self._refresh()

    def _refresh(self) -> None:
        found = dict(self._versions)
        a, b = found.get(self.pick.get("a", "")), found.get(self.pick.get("b", ""))
        if a is None or b is None:
            self.view = {}
            return
        d = diff(a, b)
        view = diff_view(d)
        view["a"], view["b"] = self.pick["a"], self.pick["b"]
        self.view = view

    def __repr__(self) -> str:
        return f"DiffWidget({len(self._versions)} versions, pick={self.pick!r})"
