"""One self-contained, offline HTML file for an Exploration.

The page inlines the explorer's built ES module (the widget's own, ``dist/explorer.js``)
and the page's entry (``dist/page.js``: its stand-in for the anywidget model,
``explorer/static/page.js``) in one script (``explorer._static.page_script``), the
index as JSON, and every pane's data, each gzip-compressed and base64-encoded, built by
the same pure functions the widget uses (``explorer.panes``). The page decompresses a
pane with the browser's ``DecompressionStream`` only when the user opens it. JSON sits
inside ``<script type="application/json">`` elements with ``<``, ``>`` and ``&``
escaped, so no user string can end the element. No CDN, no network: a
Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

# Every page lists the advisor's findings (``Exploration.findings``, which imports the
# advisor on first use): its modules load with this one, as the panes' builders do, and
# not inside the first page, where they were a tenth of a 1 MB trace's page (issue 32).
import compiler.advise.diagnose
from compiler.link.ids import EXPLORATION_PANES

from ._static import css_text, page_script
from .panes import build_index, build_pane, no_gc, pane_json

__all__ = ["html_page", "pane_blob", "to_html"]

# the elements the page's module reads (their ids are written in explorer/static/page.js too)
INDEX_ELEMENT_ID = "tce-index"
PANES_ELEMENT_ID = "tce-panes"
MOUNT_ELEMENT_ID = "tce-app"
PANE_KEY_SEP = "\n"  # between compile key and pane id in the page's pane table

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)

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


def pane_blob(data: Any) -> str:
    """A pane's JSON data, gzip-compressed and base64-encoded, as the page embeds it."""
    return _compressed(_pane_bytes(data))


def _pane_bytes(data: Any) -> bytes:
    # pane data is a fresh tree of plain values: no cycles to check for; ASCII with
    # escapes encodes faster than UTF-8 (35 against 41 ms on T5's panes) and its rare
    # escapes cost nothing once compressed
    text = json.dumps(data, separators=(",", ":"), check_circular=False)
    return text.encode("ascii")


def _compressed(raw: bytes) -> str:
    # level 6: since graph panes travel as columns over tables, gzip is 0.2 s of a
    # 12-layer GPT-2 trace's page at this level, and it makes a GPU exploration's page
    # (mostly Triton stage texts) about a fifth smaller than level 1, no larger than
    # its compact JSON
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def all_pane_data(
    exp: compiler.Exploration, index: Any, built: Mapping[tuple[str, str], Any] | None = None
) -> Iterator[tuple[tuple[str, str], Any]]:
    """((compile key, pane id), pane JSON data) for every pane of the index.

    ``built`` holds panes already built (the widget's cache); the rest are built here.
    """
    built = built or {}
    done: set[str] = set()  # the exploration's own panes, listed by every compile
    for c in index.compiles:
        for ref in c.panes:
            shared = ref.id in EXPLORATION_PANES
            key = ("", ref.id) if shared else (c.key, ref.id)
            if shared:
                if ref.id in done:
                    continue
                done.add(ref.id)
            data = built.get(key)
            if data is None:
                data = pane_json(build_pane(exp, c.key, ref.id))
            yield key, data


@cache  # constants of the installed package, checked once per process
def _assets() -> tuple[str, str]:
    js = page_script()
    css = css_text()
    # Our own assets; a closing tag inside them would end the inline element early.
    if "</script" in js.lower() or "</style" in css.lower():
        msg = "the explorer's JS/CSS contain a closing tag and cannot be inlined"
        raise RuntimeError(msg)
    return js, css


def html_page(index_data: Any, blobs: Mapping[str, str], *, title: str | None = None) -> str:
    """The standalone page for an index (as JSON data) and its panes' blobs."""
    js, css = _assets()
    page_title = html.escape(title if title is not None else str(index_data.get("title", "")))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{page_title}</title>\n"
        f"<style>\nbody {{ margin: 0; }}\n{css}</style>\n</head>\n<body>\n"
        f'<div id="{MOUNT_ELEMENT_ID}"></div>\n'
        f'<script type="application/json" id="{INDEX_ELEMENT_ID}">'
        f"{_json_for_script(index_data)}</script>\n"
        f'<script type="application/json" id="{PANES_ELEMENT_ID}">'
        f"{_json_for_script(dict(blobs))}</script>\n"
        f'<script type="module">\n{js}</script>\n'
        "</body>\n</html>\n"
    )


def to_html(
    exp: compiler.Exploration,
    path: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    built: Mapping[tuple[str, str], Any] | None = None,
) -> str:
    """Render ``exp`` as one offline HTML file; write it to ``path`` if given.

    Args:
        exp: the exploration to show.
        path: where to write the file; nothing is written when it is None.
        title: the page title (default: ``torch.compile explorer: <target>``).
        built: panes already built, as JSON data keyed by (compile key, pane id).

    Returns:
        The HTML text.

    Example:
        >>> import torch, compiler
        >>> from explorer.export import to_html
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> to_html(exp).startswith("<!DOCTYPE html>")
        True
    """
    # zlib lets go of the GIL: one thread compresses each pane while the next is built
    with no_gc(), ThreadPoolExecutor(max_workers=1) as pool:
        index = build_index(exp)
        pending = {
            PANE_KEY_SEP.join(key): pool.submit(_compressed, _pane_bytes(data))
            for key, data in all_pane_data(exp, index, built)
        }
        blobs = {key: job.result() for key, job in pending.items()}
        page = html_page(pane_json(index), blobs, title=title)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page
