"""How long does opening a big graph pane take in headless Chromium?

Real graphs: the ``aot_joint_graph`` of GPT-2 training steps (``transformers`` config, tiny
widths, 5/15/26 layers: about 1k, 3k and 5k nodes), captured with ``backend="aot_eager"``
on the CPU, and the Dynamo graph of each (with the module stacks the capture recorded).
Each is opened in the graph canvas (explorer/static/graph*.js) in a static page;
"open" is from ``new GraphCanvas(...)`` to the next painted frame, the median of 5 opens
after one warm-up. Also timed: expanding one block, opening every group at once (the worst
case), and the same graph with its module stacks removed (a graph with no module
information, which the canvas splits into runs).
Printed against the 1 s budget of the issue. Module stacks come from
``tests/graph_fixtures.py`` (its TEST DATA derivation where the capture has none).

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

LAYERS = tuple(int(a) for a in sys.argv[1:]) or (5, 15, 26)
REPEATS = 5
BUDGET_MS = 1000.0


def _time_pane(page, pane: dict, folder: Path, name: str) -> tuple[float, float, float, int]:
    import graph_fixtures

    html = folder / f"{name}.html"
    html.write_text(graph_fixtures.harness_html(pane), encoding="utf-8")
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
    import graph_fixtures
    import torch
    from playwright.sync_api import sync_playwright

    print(f"torch {torch.__version__}, graphs captured on cpu, opened in {CHROMIUM} (headless)")
    panes = []
    for layers in LAYERS:
        t0 = time.perf_counter()
        exp = graph_fixtures.gpt2_training_step(layers)
        pane = graph_fixtures.graph_pane(exp, "aot_joint_graph")
        took = time.perf_counter() - t0
        print(f"captured GPT-2 {layers} layers: {len(pane['nodes'])} nodes in {took:.1f} s")
        panes.append((f"gpt2-{layers}L joint", pane))
        # The Dynamo graph carries the module stacks the capture itself recorded.
        panes.append(
            (f"gpt2-{layers}L dynamo", graph_fixtures.graph_pane(exp, "dynamo_output_graph"))
        )
    bare = json.loads(json.dumps(panes[-2][1]))
    for n in bare["nodes"]:
        n["module_stack"] = []
    panes.append(("gpt2-26L joint, no module stacks", bare))

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
                f"{name:34} {len(pane['nodes']):>8} {boxes:>8} {first:>6.0f}ms {open_ms:>6.0f}ms "
                f"{expand_ms:>6.0f}ms {all_ms:>6.0f}ms {open_ms / BUDGET_MS:>7.2f}x"
            )
        browser.close()


if __name__ == "__main__":
    main()
