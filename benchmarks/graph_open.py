"""How long does opening a big graph pane take in headless Chromium?

Real graphs: the ``aot_joint_graph`` of GPT-2 training steps (``transformers`` config, tiny
widths, 5/15/26 layers: about 1k, 3k and 5k nodes), captured with ``backend="aot_eager"``
on the CPU, and the Dynamo graph of each (with the module stacks the capture recorded).
Each graph's pane is built as the explorer builds it (``explorer.panes.build_pane``) and
opened in the graph canvas in a static page holding the explorer's own bundle
(``explorer._static.inline_module``) and a stand-in for the shell's ctx; "open" is from
``new GraphCanvas(...)`` to the next painted frame (the pane already expanded by the
store's ``graphView``, as the shell does once when a pane arrives), the median of 5 opens
after one warm-up. Also timed: expanding one block, opening every group at once (the worst
case), and the same graph with its module stacks removed (a graph with no module
information, which the canvas splits into runs).
Printed against the 1 s budget of the issue. Module stacks are the capture's own.

Run: ``python benchmarks/graph_open.py`` (about a minute of capture on a 2-core CPU).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the flags the browser tests use)

# Runs after the bundle in the same module script, which gathers its exports in
# ``explorerModule`` (GraphCanvas, graphView). The ctx records what the canvas asks for and
# feeds the merged selection back through update(), as the shell's store does.
_HARNESS = """<!doctype html>
<html><head><meta charset="utf-8"><title>graph canvas</title><style>{css}
body {{ margin: 8px; }} #host {{ width: 1180px; }}
</style></head>
<body><div id="host"></div>
<script type="application/json" id="pane">{pane}</script>
<script type="module">
{js}
const selection = {{ compile: null, stage: null, src: null, node: null, kernel: null }};
const ctx = {{
  selection,
  select(change) {{
    Object.assign(selection, change);
    if (window.canvas) window.canvas.update({{ ...selection }});
  }},
  srcClass(src) {{ return src ? "hl-1" : ""; }},
}};
window.openPane = async () => {{
  const pane = explorerModule.graphView(JSON.parse(document.getElementById("pane").textContent));
  const host = document.getElementById("host");
  if (window.canvas) window.canvas.destroy();
  const t0 = performance.now();
  window.canvas = new explorerModule.GraphCanvas(host, pane, ctx);
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return {{ painted: performance.now() - t0, boxes: window.canvas.stats.units }};
}};
window.harnessReady = true;
</script></body></html>
"""


def harness_html(pane: dict) -> str:
    """A page holding the explorer's bundle and one graph pane (as JSON data);
    ``window.openPane()`` opens it on a fresh canvas."""
    from explorer._static import css_text, inline_module

    data = json.dumps(pane).replace("</", "<\\/")
    js = inline_module("explorer", "explorerModule")
    return _HARNESS.format(css=css_text(), js=js, pane=data)


def graph_pane(exp, stage: str) -> dict:
    """The pane of the largest ``stage`` graph in ``exp``, as the explorer builds it."""
    from explorer.panes import build_pane, pane_json

    c = max(
        (c for c in exp.compiles if stage in c.graphs), key=lambda c: len(c.graphs[stage].nodes)
    )
    return pane_json(build_pane(exp, c.key, stage))


LAYERS = tuple(int(a) for a in sys.argv[1:]) or (5, 15, 26)
REPEATS = 5
BUDGET_MS = 1000.0


def _time_pane(page, pane: dict, folder: Path, name: str) -> tuple[float, float, float, int]:
    html = folder / f"{name}.html"
    html.write_text(harness_html(pane), encoding="utf-8")
    page.goto(html.as_uri())
    page.wait_for_function("window.harnessReady === true")
    first = page.evaluate("openPane()")["painted"]
    runs = [page.evaluate("openPane()") for _ in range(REPEATS)]
    open_ms = statistics.median(r["painted"] for r in runs)
    # Expand the largest collapsed box, as a user opening a block does.
    expand_ms = page.evaluate(
        """async () => {
          const boxes = [...document.querySelectorAll('.gc-group')];
          const sizes = boxes.map((b) => canvas.findGroup(b.dataset.group).members.length);
          const box = boxes[sizes.indexOf(Math.max(...sizes))];
          const t0 = performance.now();
          box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          return performance.now() - t0;
        }"""
    )
    # Everything open at once: the worst a user can ask for (every group laid out).
    all_ms = page.evaluate(
        """async () => {
          const t0 = performance.now();
          const walk = (g) => {
            canvas.expanded.add(g);
            g.kids.forEach((k) => typeof k !== 'number' && walk(k));
          };
          walk(canvas.root);
          canvas.clearLayouts(canvas.root);
          canvas.render();
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          return performance.now() - t0;
        }"""
    )
    return first, open_ms, expand_ms, all_ms, runs[0]["boxes"]


def main() -> None:
    import programs
    import torch
    from playwright.sync_api import sync_playwright

    import compiler

    print(f"torch {torch.__version__}, graphs captured on cpu, opened in {CHROMIUM} (headless)")
    panes = []
    for layers in LAYERS:
        t0 = time.perf_counter()
        exp = compiler.explore(*programs.gpt2_training_step(layers), backend="aot_eager")
        pane = graph_pane(exp, "aot_joint_graph")
        took = time.perf_counter() - t0
        print(f"captured GPT-2 {layers} layers: {_count(pane)} nodes in {took:.1f} s")
        panes.append((f"gpt2-{layers}L joint", pane))
        panes.append((f"gpt2-{layers}L dynamo", graph_pane(exp, "dynamo_output_graph")))
    bare = json.loads(json.dumps(panes[-2][1]))
    bare["stacks"] = [[]]
    bare["nodes"]["module_stack"] = [0] * _count(bare)
    panes.append((f"gpt2-{LAYERS[-1]}L joint, no module stacks", bare))

    head = ("graph", "nodes", "boxes", "first", "open", "expand", "all open", "open/1s")
    print(f"{head[0]:34} " + " ".join(f"{h:>8}" for h in head[1:]))
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 720})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for k, (name, pane) in enumerate(panes):
            first, open_ms, expand_ms, all_ms, boxes = _time_pane(page, pane, Path(tmp), f"g{k}")
            if errors:
                raise SystemExit(f"the page raised: {errors}")
            print(
                f"{name:34} {_count(pane):>8} {boxes:>8} {first:>6.0f}ms {open_ms:>6.0f}ms "
                f"{expand_ms:>6.0f}ms {all_ms:>6.0f}ms {open_ms / BUDGET_MS:>7.2f}x"
            )
        browser.close()


def _count(pane: dict) -> int:
    return len(pane["nodes"]["name"])


if __name__ == "__main__":
    main()
