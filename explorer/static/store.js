// @ts-check
// The store: the index, the selection, and the panes, fetched when first opened. In the
// notebook a pane comes from Python (a custom message answered with the pane's JSON);
// in the exported page from the gzip+base64 blob the page carries, decompressed by the
// browser's DecompressionStream. Either way each pane is fetched once.

const PANE_KEY_SEP = "\n"; // as explorer/export.py joins compile key and pane id

class Store {
  /** @param {Model} model */
  constructor(model) {
    this.model = model;
    this.standalone = Boolean(model.get("_standalone"));
    /** @type {Map<string, Promise<any>>} */
    this.panes = new Map();
    /** @type {Map<string, {resolve: (p: any) => void, reject: (e: Error) => void}>} */
    this.waiting = new Map();
    this.readIndex();
  }

  readIndex() {
    /** @type {Index} */
    this.index = this.model.get("index");
    this.panes.clear();
    /** @type {Map<string, number>} */
    this.palette = new Map((this.index ? this.index.src_keys : []).map((k, i) => [k, i % PALETTE]));
  }

  /** @param {string|null} compile @param {string} pane */
  key(compile, pane) {
    return (pane === "findings" ? "" : compile || "") + PANE_KEY_SEP + pane;
  }

  /**
   * The pane's data, built (or decompressed) on first use.
   * @param {string|null} compile @param {string} pane @returns {Promise<any>}
   */
  pane(compile, pane) {
    const key = this.key(compile, pane);
    let got = this.panes.get(key);
    if (!got) {
      got = this.standalone ? this.fromPage(key) : this.fromKernel(key, compile, pane);
      this.panes.set(key, got);
      got.catch(() => this.panes.delete(key));
    }
    return got;
  }

  /** @param {string} key @returns {Promise<any>} */
  async fromPage(key) {
    const blob = this.model.get("_blobs")[key];
    if (blob === undefined) throw new Error(`this page has no pane ${key.replace(PANE_KEY_SEP, " ")}`);
    const bytes = Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  /** @param {string} key @param {string|null} compile @param {string} pane @returns {Promise<any>} */
  fromKernel(key, compile, pane) {
    return new Promise((resolve, reject) => {
      this.waiting.set(key, { resolve, reject });
      this.model.send({ type: "pane", compile, pane });
    });
  }

  /** A reply from Python. @param {any} msg @returns {boolean} whether it was a pane */
  receive(msg) {
    if (!msg || msg.type !== "pane") return false;
    const key = this.key(msg.compile, msg.pane);
    const w = this.waiting.get(key);
    if (!w) return true;
    this.waiting.delete(key);
    if (msg.error) w.reject(new Error(msg.error));
    else w.resolve(msg.data);
    return true;
  }
}
