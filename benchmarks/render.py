"""How long from a finished capture to the explorer drawn, for graphs of 100 to 10,000 nodes?

Compiles a real chain of N elementwise ops (``x = x * 1.0001 + 0.1`` in a loop) with the
``eager`` backend, so the Dynamo graph has about N nodes, then times:

- ``build_view``: Exploration -> view data (pygments tokens, graph data, Graphviz for
  graphs of up to 400 nodes);
- ``to_html``: view data -> the standalone page;
- first paint: headless Chromium opens the page from a file:// URL and draws the
  Dynamo graph pane (``window.__explorerFirstPaint``, ms since navigation start);
- expand all: the built-in renderer's "Expand all" (every node drawn as its own box).

Targets: first paint of a 1,000-node graph under 0.5 s, of 10,000 nodes under 2 s.

Run: ``python benchmarks/render.py [--sizes 100 1000 10000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TARGETS = {1000: 0.5, 10000: 2.0}

_AFTER_PAINT = """() => new Promise((resolve) => {
  const t0 = performance.now();
  const button = [...document.querySelectorAll("button")]
    .find((b) => b.textContent === "Expand all");
  if (!button) { resolve(null); return; }
  button.click();
  requestAnimationFrame(() => setTimeout(() => resolve({ms: performance.now() - t0,
    units: document.querySelectorAll(".tce-pane g.tce-gunit").length}), 0));
})"""


def chain_exploration(nodes: int):
    import torch

    import compiler

    iterations = max(1, (nodes - 3) // 2)

    def chain(x):
        for _ in range(iterations):
            x = x * 1.0001 + 0.1
        return x

    torch.compiler.reset()
    start = time.perf_counter()
    exp = compiler.explore(chain, torch.randn(16), backend="eager")
    return exp, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import torch

    from explorer.export import html_from_view
    from explorer.view_model import build_view

    print(f"torch {torch.__version__}, device cpu, browser {CHROMIUM}")
    if not CHROMIUM.exists():
        print(f"skipped: {CHROMIUM} is missing (the first-paint half needs Chromium)")
        return
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for size in args.sizes:
            exp, capture_s = chain_exploration(size)
            count = len(exp.compiles[0].graphs["dynamo_output_graph"].nodes)
            view = build_view(exp)  # warm-up, and the output check
            pane = next(q for q in view["compiles"][0]["panes"] if q["id"] == "dynamo_output_graph")
            assert len(pane["graph"]["nodes"]) == count, "the view lost nodes"
            build_s, html_s, paint_s, expand_s = [], [], [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                view = build_view(exp)
                build_s.append(time.perf_counter() - t)
                t = time.perf_counter()
                page_text = html_from_view(view)
                html_s.append(time.perf_counter() - t)
            path = Path(tmp) / f"chain_{size}.html"
            path.write_text(page_text, encoding="utf-8")
            for _ in range(args.repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 820})
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.goto(path.as_uri())
                page.wait_for_function("window.__explorerFirstPaint !== undefined", timeout=60_000)
                paint_s.append(page.evaluate("window.__explorerFirstPaint") / 1000)
                drawn = page.locator(".tce-pane svg.tce-dot g.node, .tce-pane g.tce-gunit").count()
                assert drawn > 0 and not errors, f"nothing drawn for {size} nodes: {errors}"
                expanded = page.evaluate(_AFTER_PAINT)
                if expanded is not None:
                    expand_s.append(expanded["ms"] / 1000)
                page.close()
            rows.append(
                (
                    count,
                    capture_s,
                    statistics.median(build_s),
                    statistics.median(html_s),
                    statistics.median(paint_s),
                    statistics.median(expand_s) if expand_s else None,
                    pane["graph"]["renderer_note"],
                    len(page_text),
                )
            )
        browser.close()

    print(
        f"{'nodes':>7}  {'capture_s':>9}  {'build_view_s':>12}  {'to_html_s':>9}  "
        f"{'first_paint_s':>13}  {'total_s':>7}  {'expand_all_s':>12}  {'html_MB':>7}  renderer"
    )
    for count, cap, build, html, paint, expand, note, size in rows:
        total = build + html + paint
        exp_text = f"{expand:12.3f}" if expand is not None else f"{'-':>12}"
        print(
            f"{count:7,}  {cap:9.2f}  {build:12.3f}  {html:9.3f}  {paint:13.3f}  {total:7.3f}  "
            f"{exp_text}  {size / 1e6:7.2f}  {note}"
        )
    for count, *_rest in rows:
        for target_nodes, limit in TARGETS.items():
            if abs(count - target_nodes) <= target_nodes * 0.05:
                paint = _rest[3]
                verdict = "meets" if paint < limit else "MISSES"
                print(
                    f"target: {target_nodes:,} nodes first paint under {limit} s: "
                    f"{paint:.3f} s, {verdict} it"
                )


if __name__ == "__main__":
    main()
