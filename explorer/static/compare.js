// @ts-check
/**
 * The compare widget: one table row and one bar per configuration of
 * `compiler.compare`, eager first. Clicking a row (or its bar) selects it; the Python
 * side then shows that configuration's Exploration under the widget.
 *
 * `model.get("comparison")` is the dict of `explorer.compare_widget.comparison_data`.
 * Safety: all data reaches the DOM through `textContent` and `title` only.
 */

/**
 * @typedef {{name: string, describe: string, first_call_ms: number|null,
 *            median_ms: number|null, spread_ms: number[]|null, speedup: number|null,
 *            compiles: number, recompiles: number, graph_breaks: number,
 *            matches_eager: boolean|null, eager: boolean, error: string,
 *            explorable: boolean}} Row
 * @typedef {{target: string, environment: string, inputs: string[], steps: number,
 *            warmup: number, rows: Row[], notes: string[]}} ComparisonData
 */
/** @import { Model } from "./util.js" */

/** @param {number|null|undefined} ms */
function formatMs(ms) {
  if (ms === null || ms === undefined) return "-";
  return ms < 10 ? ms.toFixed(3) : ms.toFixed(1);
}

/**
 * @param {string} tag
 * @param {string} [text]
 * @param {string} [cls]
 */
function make(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

/** @param {Row} row */
function cells(row) {
  if (row.error) return [row.name, "failed: " + row.error, "", "", "", "", "", ""];
  const spread = row.spread_ms ? ` (${formatMs(row.spread_ms[0])}-${formatMs(row.spread_ms[1])})` : "";
  const match = row.matches_eager === null ? "-" : row.matches_eager ? "yes" : "NO";
  return [
    row.name,
    formatMs(row.first_call_ms),
    formatMs(row.median_ms) + spread,
    row.speedup === null ? "-" : row.speedup.toFixed(2) + "x",
    row.eager ? "-" : String(row.compiles),
    row.eager ? "-" : String(row.recompiles),
    row.eager ? "-" : String(row.graph_breaks),
    row.eager ? "-" : match,
  ];
}

const HEADERS = [
  "configuration", "first call (ms)", "steady state (ms): median (min-max)", "speedup",
  "compiles", "recompiles", "graph breaks", "matches eager",
];

/**
 * @param {HTMLElement} el
 * @param {ComparisonData} data
 * @param {"median_ms"|"first_call_ms"} metric
 * @param {string} selected
 * @param {(name: string) => void} pick
 */
function renderBars(el, data, metric, selected, pick) {
  const rows = data.rows.filter((r) => !r.error && r[metric] !== null);
  const top = Math.max(...rows.map((r) => /** @type {number} */ (r[metric])), 1e-9);
  for (const row of rows) {
    const value = /** @type {number} */ (row[metric]);
    const line = make("div", undefined, "cmp-bar-row" + (row.name === selected ? " cmp-selected" : ""));
    line.appendChild(make("span", row.name, "cmp-bar-label"));
    const track = make("span", undefined, "cmp-bar-track");
    const bar = make("span", undefined, "cmp-bar" + (row.eager ? " cmp-eager" : ""));
    bar.style.width = `${Math.max(0.5, (100 * value) / top)}%`;
    track.appendChild(bar);
    line.appendChild(track);
    const speed = metric === "median_ms" && row.speedup !== null ? ` · ${row.speedup.toFixed(2)}x` : "";
    line.appendChild(make("span", `${formatMs(value)} ms${speed}`, "cmp-bar-value"));
    line.title = row.describe;
    if (row.explorable) line.addEventListener("click", () => pick(row.name));
    el.appendChild(line);
  }
}

/** @param {{model: Model, el: HTMLElement}} ctx */
function render({ model, el }) {
  /** @type {"median_ms"|"first_call_ms"} */
  let metric = "median_ms";
  const root = make("div", undefined, "cmp-root");
  el.appendChild(root);

  const pick = (/** @type {string} */ name) => {
    model.set("selected", model.get("selected") === name ? "" : name);
    model.save_changes();
  };

  const draw = () => {
    /** @type {ComparisonData} */
    const data = model.get("comparison");
    const selected = model.get("selected") || "";
    root.replaceChildren();
    root.appendChild(make("div", `${data.target} on ${data.inputs.join(", ") || "its own inputs"}`, "cmp-title"));
    root.appendChild(make("div", `${data.environment} · ${data.warmup} warm-up + ${data.steps} timed calls per configuration`, "cmp-env"));

    const table = make("table", undefined, "cmp-table");
    const head = make("tr");
    for (const h of HEADERS) head.appendChild(make("th", h));
    table.appendChild(head);
    for (const row of data.rows) {
      const tr = make("tr", undefined, row.name === selected ? "cmp-selected" : "");
      for (const text of cells(row)) tr.appendChild(make("td", text));
      tr.title = row.describe + (row.explorable ? " (click to explore its compiles)" : "");
      if (row.explorable) {
        tr.classList.add("cmp-clickable");
        tr.addEventListener("click", () => pick(row.name));
      }
      table.appendChild(tr);
    }
    root.appendChild(table);

    const switcher = make("div", undefined, "cmp-switch");
    /** @type {["median_ms"|"first_call_ms", string][]} */
    const metrics = [["median_ms", "steady state per call"], ["first_call_ms", "first call (compile included)"]];
    for (const [key, label] of metrics) {
      const button = make("button", label, key === metric ? "cmp-on" : "");
      button.addEventListener("click", () => { metric = key; draw(); });
      switcher.appendChild(button);
    }
    root.appendChild(switcher);
    const bars = make("div", undefined, "cmp-bars");
    renderBars(bars, data, metric, selected, pick);
    root.appendChild(bars);
    for (const note of data.notes) root.appendChild(make("div", note, "cmp-note"));
    root.appendChild(make("div", selected ? `Exploring ${selected} below.` : "Click a compiled row to explore its compiles.", "cmp-note"));
  };

  draw();
  model.on("change:comparison", draw);
  model.on("change:selected", draw);
  return () => {
    model.off("change:comparison", draw);
    model.off("change:selected", draw);
  };
}

export default { render };
