"""One self-contained, offline HTML file for an Exploration.

The page inlines the same ``explorer.css`` and ``explorer.js`` the widget uses, the
view data as JSON inside a ``<script type="application/json">`` element (with ``<``,
``>`` and ``&`` escaped so no user string can end the element), and a small
bootstrap that gives ``render`` a stand-in for the widget model. No CDN, no network:
a Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any

import compiler

from ._static import static_text
from .view_model import build_view

__all__ = ["html_from_view", "to_html"]

VIEW_ELEMENT_ID = "tce-view"
MOUNT_ELEMENT_ID = "tce-app"

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)

# Runs after explorer.js inside the same module script, so `render` is in scope.
_BOOTSTRAP = """
// --- standalone bootstrap: a stand-in for the anywidget model ---
{
  const data = JSON.parse(document.getElementById("%(view)s").textContent);
  const state = { view: data, selection: data.default_selection, _standalone: true };
  const listeners = new Map();
  const model = {
    get: (key) => state[key],
    set: (key, value) => {
      state[key] = value;
      for (const cb of (listeners.get("change:" + key) || []).slice()) cb();
    },
    on: (event, cb) => {
      if (!listeners.has(event)) listeners.set(event, []);
      listeners.get(event).push(cb);
    },
    off: (event, cb) => {
      const list = listeners.get(event) || [];
      const i = list.indexOf(cb);
      if (i >= 0) list.splice(i, 1);
    },
    save_changes: () => {},
    send: () => {},
  };
  const mount = document.getElementById("%(mount)s");
  mount.replaceChildren();
  render({ model, el: mount });
}
"""


def _json_for_script(value: Any) -> str:
    """JSON that is inert inside a ``<script>`` element: ``<``, ``>``, ``&`` escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def html_from_view(view: dict[str, Any], *, title: str | None = None) -> str:
    """The standalone page for a view built by ``build_view``.

    Args:
        view: the dict from ``explorer.view_model.build_view``.
        title: the page title (default: the view's title).

    Returns:
        The HTML text.
    """
    js = static_text("explorer.js")
    css = static_text("explorer.css")
    # Our own assets; a closing tag inside them would end the inline element early.
    if "</script" in js.lower() or "</style" in css.lower():
        msg = "explorer.js/explorer.css contain a closing tag and cannot be inlined"
        raise RuntimeError(msg)
    bootstrap = _BOOTSTRAP % {"view": VIEW_ELEMENT_ID, "mount": MOUNT_ELEMENT_ID}
    page_title = html.escape(title if title is not None else str(view.get("title", "")))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{page_title}</title>\n"
        f"<style>\nbody {{ margin: 0; }}\n{css}</style>\n</head>\n<body>\n"
        f'<div id="{MOUNT_ELEMENT_ID}"></div>\n'
        f'<script type="application/json" id="{VIEW_ELEMENT_ID}">'
        f"{_json_for_script(view)}</script>\n"
        f'<script type="module">\n{js}\n{bootstrap}</script>\n'
        "</body>\n</html>\n"
    )


def to_html(
    exp: compiler.Exploration,
    path: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    graph_renderer: str = "auto",
) -> str:
    """Render ``exp`` as one offline HTML file; write it to ``path`` if given.

    Args:
        exp: the exploration to show.
        path: where to write the file; nothing is written when it is None.
        title: the page title (default: ``torch.compile explorer: <target>``).
        graph_renderer: passed to ``build_view`` (``auto``, ``dot`` or ``builtin``).

    Returns:
        The HTML text.

    Example:
        >>> import torch, compiler
        >>> from explorer.export import to_html
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> to_html(exp).startswith("<!DOCTYPE html>")
        True
    """
    page = html_from_view(build_view(exp, graph_renderer=graph_renderer), title=title)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page
