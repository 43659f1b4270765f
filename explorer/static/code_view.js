// @ts-check
// Code view: line numbers, highlighted text, per-line classes; virtualised when long.

import { LINE_H, VIRTUAL_MIN_LINES, h } from "./util.js";
import { appendHighlighted } from "./highlight.js";

class CodeView {
  /**
   * @param {string} text the text verbatim; its lines are `text.split("\n")`
   * @param {{language: string, languageOf?: (i: number) => string|null|undefined,
   *          lineClass: (i: number) => string, onLine?: (i: number) => void,
   *          firstLine?: number}} opts
   */
  constructor(text, opts) {
    this.lines = text.split("\n");
    this.opts = opts;
    this.n = this.lines.length;
    this.virtual = this.n > VIRTUAL_MIN_LINES;
    this.el = h("div", { cls: "tce-code" + (this.virtual ? " tce-virtual" : "") });
    this.rows = h("div", { cls: "tce-rows" });
    /** @type {Map<number, HTMLElement>} */
    this.rendered = new Map();
    this.digits = String(this.n + (opts.firstLine || 1)).length;
    this.el.style.setProperty("--tce-gutter", `${this.digits + 1}ch`);
    if (this.virtual) {
      const spacer = h("div", { cls: "tce-spacer" });
      spacer.style.height = `${this.n * LINE_H}px`;
      this.el.append(spacer, this.rows);
      this.pending = false;
      this.el.addEventListener("scroll", () => {
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
          this.pending = false;
          this.drawWindow();
        });
      });
      requestAnimationFrame(() => this.drawWindow());
      this.drawWindow(40);
    } else {
      for (let i = 0; i < this.n; i++) this.rows.append(this.row(i));
      this.el.append(this.rows);
    }
    this.el.addEventListener("click", (ev) => {
      const row = /** @type {HTMLElement|null} */ (
        /** @type {HTMLElement} */ (ev.target).closest(".tce-row")
      );
      if (row && opts.onLine) opts.onLine(Number(row.dataset.i));
    });
  }

  /** @param {number} i */
  row(i) {
    const row = h("div", { cls: "tce-row " + this.opts.lineClass(i), attrs: { "data-i": String(i) } });
    row.append(h("span", { cls: "tce-ln", text: String(i + (this.opts.firstLine || 1)) }));
    const code = h("span", { cls: "tce-src" });
    const language = (this.opts.languageOf && this.opts.languageOf(i)) || this.opts.language;
    appendHighlighted(this.lines[i], language, code);
    row.append(code);
    if (this.virtual) row.style.top = `${i * LINE_H}px`;
    this.rendered.set(i, row);
    return row;
  }

  /** @param {number} [minRows] */
  drawWindow(minRows = 0) {
    const top = this.el.scrollTop;
    const height = Math.max(this.el.clientHeight, minRows * LINE_H);
    const first = Math.max(0, Math.floor(top / LINE_H) - 20);
    const last = Math.min(this.n - 1, Math.ceil((top + height) / LINE_H) + 20);
    for (const [i, row] of this.rendered) {
      if (i < first || i > last) {
        row.remove();
        this.rendered.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (!this.rendered.has(i)) this.rows.append(this.row(i));
    }
  }

  refresh() {
    for (const [i, row] of this.rendered) row.className = "tce-row " + this.opts.lineClass(i);
  }

  /** @param {number} i 0-based line */
  scrollTo(i) {
    this.el.scrollTop = Math.max(0, i * LINE_H - this.el.clientHeight / 3);
    if (this.virtual) this.drawWindow();
  }
}

export { CodeView };
