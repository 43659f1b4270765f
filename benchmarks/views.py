"""How fast the explorer opens real models: first paint, graph panes, page size, export.

On each TORCH_TRACE log of a real model (``benchmarks/model_traces.py`` makes them in
``--traces``, default ``../traces``, when missing), measured in one run:

(a) first paint: from an Exploration in hand (the end of a capture) to the explorer drawn
    in headless Chromium: ``build_index`` and the default pane built and encoded in Python,
    plus the page opening on them (bundle parse, pane decompressed and drawn).
(b) graph open: the largest graph pane of the trace, built and encoded in Python, then
    opened in the page (decompressed, parsed, drawn by the graph canvas).
(c) page size over the Exploration's plain JSON size (``to_json(compact=False)``).
(d) ``load_trace`` + ``to_html`` over ``tlparse LOG -o DIR`` on the same log (runs
    interleaved, median of ``--repeat``).

Targets: (a) < 1 s, (b) < 1 s up to 5,000 nodes, (c) <= 0.5, (d) <= 1.0 (must <= 2.0).

Run: ``python benchmarks/views.py [--traces DIR] [--repeat N] [--only NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from against_tlparse import tlparse_exe, tlparse_seconds  # noqa: E402

import compiler  # noqa: E402
from explorer.export import PANE_KEY_SEP, html_page, pane_blob, to_html  # noqa: E402
from explorer.panes import build_index, build_pane, no_gc, pane_json  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
MODELS = ("gpt2_train", "bert_infer", "resnet_infer")


def ensure_traces(traces: Path, names: list[str]) -> None:
    missing = [n for n in names if not any((traces / n).glob("*.log"))]
    if missing:
        print(f"making traces {missing} with benchmarks/model_traces.py (minutes)", flush=True)
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "model_traces.py"), "--out", str(traces),
             "--only", *missing],
            check=True,
        )  # fmt: skip


def log_of(trace: Path) -> Path:
    return max(trace.glob("*.log"), key=lambda p: p.stat().st_size)


def ours_s(trace: Path) -> tuple[float, float, str]:
    """(load_trace s, to_html s, page) in this process."""
    t = time.perf_counter()
    exp = compiler.load_trace(trace)
    t1 = time.perf_counter()
    page = to_html(exp)
    return t1 - t, time.perf_counter() - t1, page


def open_in_browser(browser, page_text: str, compile_key: str, stage: str) -> tuple[float, float]:
    """(ms to first paint, ms to open pane ``stage`` of ``compile_key`` after it)."""
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as f:
        f.write(page_text)
        path = Path(f.name)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(path.as_uri())
        page.locator(".tce-root[data-shown]").wait_for(state="attached", timeout=60_000)
        first = page.evaluate("window.__explorerFirstPaint")
        page.locator(f'.tce-compile[data-compile="{compile_key}"]').click()
        page.wait_for_timeout(300)
        opened = page.evaluate(
            """async (stage) => {
              const shown = window.__explorerPanesShown || 0;
              const t0 = performance.now();
              document.querySelector(`.tce-tab[data-stage="${stage}"]`).click();
              while ((window.__explorerPanesShown || 0) === shown) {
                await new Promise((r) => setTimeout(r, 5));
              }
              return performance.now() - t0;
            }""",
            stage,
        )
        return first, opened
    finally:
        page.close()
        path.unlink()


def largest_graph(exp: compiler.Exploration, index) -> tuple[str, str]:
    """(compile key, pane id) of the graph pane with the longest text."""
    sizes = []
    for c, entry in zip(exp.compiles, index.compiles, strict=True):
        for ref in entry.panes:
            if ref.kind != "graph":
                continue
            key, _, stage = ref.id.rpartition("/")
            oc = next((o for o in c.output_code if o.key == key), None)
            graph = oc.graphs[stage] if oc is not None else c.graphs[stage]
            sizes.append((len(graph.text), c.key, ref.id))
    _, ckey, pid = max(sizes)
    return ckey, pid


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=ROOT.parent / "traces")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=MODELS, default=list(MODELS))
    args = parser.parse_args(argv)
    ensure_traces(args.traces, args.only)
    import torch
    from playwright.sync_api import sync_playwright

    exe = tlparse_exe("views.py")
    print(f"torch {torch.__version__}, CPU; headless {CHROMIUM}")
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name in args.only:
            trace = args.traces / name
            log = log_of(trace)
            # (d) interleaved runs, medians; the first of each is the warm-up
            tl, load, html_s, page = [], [], [], ""
            for _ in range(args.repeat + 1):
                tl.append(tlparse_seconds(log, exe=exe))
                a, b, page = ours_s(trace)
                load.append(a)
                html_s.append(b)
            tl_m = statistics.median(tl[1:])
            ours = statistics.median(x + y for x, y in zip(load[1:], html_s[1:], strict=True))
            exp = compiler.load_trace(trace)
            # the plain form (schema 2.0's): the target predates the compact one
            json_size = len(exp.to_json(compact=False).encode("utf-8"))
            # (a) index + default pane, Python then the page
            exp = compiler.load_trace(trace)
            # (the collector paused as the widget builds panes: explorer/widget.py)
            t = time.perf_counter()
            index = build_index(exp)
            index_data = pane_json(index)
            sel = index.default_selection
            with no_gc():
                first_data = pane_json(build_pane(exp, sel.compile, sel.stage))
            json.dumps(index_data)
            blobs = {PANE_KEY_SEP.join(("" if sel.stage == "findings" else sel.compile, sel.stage)):
                     pane_blob(first_data)}  # fmt: skip
            py_first = time.perf_counter() - t
            # (b) the largest graph pane
            ckey, pid = largest_graph(exp, index)
            t = time.perf_counter()
            with no_gc():
                graph = build_pane(exp, ckey, pid)
                data = pane_json(graph)
            blobs[PANE_KEY_SEP.join((ckey, pid))] = pane_blob(data)
            py_graph = time.perf_counter() - t
            js_first, js_graph = open_in_browser(browser, html_page(index_data, blobs), ckey, pid)
            rows.append((name, log, py_first, js_first, pid, len(graph.nodes.name), py_graph,
                         js_graph, len(page.encode()), json_size, ours, tl_m,
                         statistics.median(load[1:])))  # fmt: skip
        browser.close()
    for (name, log, py_first, js_first, pid, nodes, py_graph, js_graph, page_size, json_size,
         ours, tl_m, load_m) in rows:  # fmt: skip
        mb = log.stat().st_size / 1e6
        print(f"\n{name}: {log.name} {mb:.1f} MB")
        first = py_first + js_first / 1000
        print(f"  (a) first paint          {first:7.3f} s  (python {py_first:.3f} s + page "
              f"{js_first / 1000:.3f} s)  target < 1 s: {first / 1.0:.2f}x of it")  # fmt: skip
        opened = py_graph + js_graph / 1000
        print(f"  (b) open {pid} ({nodes:,} nodes)  {opened:7.3f} s  (python {py_graph:.3f} s + "
              f"page {js_graph / 1000:.3f} s)")  # fmt: skip
        print(f"  (c) page / JSON          {page_size / 1e6:.2f} MB / {json_size / 1e6:.2f} MB"
              f" = {page_size / json_size:.2f}x  (target <= 0.5)")  # fmt: skip
        print(f"  (d) load+to_html / tlparse  {ours:.2f} s (load {load_m:.2f} s) / {tl_m:.2f} s"
              f" = {ours / tl_m:.2f}x  (target <= 1.0, must <= 2.0)")  # fmt: skip


if __name__ == "__main__":
    main()
