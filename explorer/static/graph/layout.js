// @ts-check
// Layered (Sugiyama-style) layout for the graph canvas: cycle breaking, layering, dummy
// nodes on long edges, barycentric crossing reduction, x placement by isotonic regression,
// and edges routed through their dummy nodes. Pure functions, no DOM: canvas.js lays out
// one expanded group at a time with it, so the graphs it sees are the visible units of one
// level (tens to a few hundred), never the whole 5,000-node graph.

/**
 * @typedef {{w: number, h: number}} LayoutUnit  a box to place; units come in graph order
 * @typedef {{x: number, y: number}} Point
 * @typedef {{
 *   width: number, height: number,
 *   pos: Point[],            // centre of each unit
 *   routes: Point[][],       // per edge: points from the source's border to the target's
 * }} LayeredLayout
 */

const GC_LAYOUT_GAP_X = 18; // between neighbouring boxes in one layer
const GC_LAYOUT_GAP_DUMMY = 6; // around the bend points of long edges
const GC_LAYOUT_GAP_Y = 34; // between layers
const GC_LAYOUT_SWEEPS = 8; // crossing-reduction passes (down and up alternate)
const GC_LAYOUT_PLACE_SWEEPS = 6; // x-placement passes

/**
 * Lay out a directed graph in layers, top to bottom.
 *
 * Edges that go against graph order (e.g. a joint graph's backward pass feeding a block
 * that appears earlier) are reversed for layering and routed back up, so any graph lays
 * out, cyclic or not, once its units are lifted to one level.
 *
 * Example: `gcLayeredLayout([{w: 40, h: 20}, {w: 40, h: 20}], [[0, 1]])` puts unit 1
 * under unit 0 and routes one edge between them.
 *
 * @param {LayoutUnit[]} units
 * @param {[number, number][]} edges  unit indices, no self loops
 * @returns {LayeredLayout}
 */
function gcLayeredLayout(units, edges) {
  const n = units.length;
  if (n === 0) return { width: 0, height: 0, pos: [], routes: [] };
  // 1. Cycle breaking by graph order: every edge points from a lower to a higher index.
  const fwd = edges.map(([a, b]) => (a < b ? [a, b] : [b, a]));
  const succ = Array.from({ length: n }, () => /** @type {number[]} */ ([]));
  const pred = Array.from({ length: n }, () => /** @type {number[]} */ ([]));
  fwd.forEach(([a, b]) => {
    succ[a].push(b);
    pred[b].push(a);
  });
  // 2. Layering: longest path from the sources (index order is a topological order),
  // then sources move down next to their first user, so parameters and inputs sit
  // beside the op that reads them instead of in one crowded top row.
  const layer = new Int32Array(n);
  for (let b = 0; b < n; b++) for (const a of pred[b]) layer[b] = Math.max(layer[b], layer[a] + 1);
  for (let a = n - 1; a >= 0; a--) {
    if (pred[a].length || !succ[a].length) continue;
    let low = Infinity;
    for (const b of succ[a]) low = Math.min(low, layer[b]);
    layer[a] = low - 1;
  }
  let depth = 0;
  for (let i = 0; i < n; i++) depth = Math.max(depth, layer[i] + 1);
  // 3. Dummy vertices: one per layer an edge skips; vertex v < n is a unit.
  const vw = Array.from(units, (u) => u.w);
  const vlayer = Array.from(layer);
  const up = Array.from({ length: n }, () => /** @type {number[]} */ ([])); // neighbours one layer above
  const down = Array.from({ length: n }, () => /** @type {number[]} */ ([]));
  const chains = fwd.map(([a, b]) => {
    const chain = [a];
    let prev = a;
    for (let l = layer[a] + 1; l < layer[b]; l++) {
      const d = vw.length;
      vw.push(0);
      vlayer.push(l);
      up.push([]);
      down.push([]);
      down[prev].push(d);
      up[d].push(prev);
      chain.push(d);
      prev = d;
    }
    down[prev].push(b);
    up[b].push(prev);
    chain.push(b);
    return chain;
  });
  const nv = vw.length;
  const rows = Array.from({ length: depth }, () => /** @type {number[]} */ ([]));
  for (let v = 0; v < nv; v++) rows[vlayer[v]].push(v);
  // 4. Crossing reduction: barycentre sweeps, keeping the best order seen.
  const rank = new Float64Array(nv);
  const setRanks = () => rows.forEach((row) => row.forEach((v, i) => (rank[v] = i)));
  setRanks();
  let best = rows.map((r) => r.slice());
  let bestCross = gcCountCrossings(rows, down, rank);
  for (let s = 0; s < GC_LAYOUT_SWEEPS && bestCross > 0; s++) {
    const goingDown = s % 2 === 0;
    const order = goingDown ? rows.keys() : [...rows.keys()].reverse();
    for (const l of order) {
      const row = rows[l];
      const key = new Float64Array(nv);
      for (const v of row) {
        const nb = goingDown ? up[v] : down[v];
        if (!nb.length) {
          key[v] = rank[v];
          continue;
        }
        let sum = 0;
        for (const u of nb) sum += rank[u];
        key[v] = sum / nb.length;
      }
      row.sort((p, q) => key[p] - key[q] || rank[p] - rank[q]);
      row.forEach((v, i) => (rank[v] = i));
    }
    const cross = gcCountCrossings(rows, down, rank);
    if (cross < bestCross) {
      bestCross = cross;
      best = rows.map((r) => r.slice());
    }
  }
  best.forEach((row, l) => (rows[l] = row));
  setRanks();
  // 5. x placement: each vertex wants the mean x of its neighbours; the order and the
  // gaps within a layer are constraints; solved per layer exactly (isotonic regression).
  const x = new Float64Array(nv);
  const gap = (/** @type {number} */ a, /** @type {number} */ b) => (vw[a] + vw[b]) / 2 + (a < n && b < n ? GC_LAYOUT_GAP_X : GC_LAYOUT_GAP_DUMMY);
  for (const row of rows) {
    let at = 0;
    row.forEach((v, i) => {
      if (i) at += gap(row[i - 1], v);
      x[v] = at;
    });
  }
  for (let s = 0; s < GC_LAYOUT_PLACE_SWEEPS; s++) {
    const goingDown = s % 2 === 0;
    const order = goingDown ? [...rows.keys()] : [...rows.keys()].reverse();
    for (const l of order) {
      const row = rows[l];
      const want = row.map((v) => {
        const nb = s < 2 ? (goingDown ? up[v] : down[v]) : up[v].concat(down[v]);
        if (!nb.length) return x[v];
        // Bend points pull harder, so long edges run straight.
        let sum = 0;
        let weight = 0;
        for (const u of nb) {
          const wgt = v >= n && u >= n ? 4 : v >= n || u >= n ? 2 : 1;
          sum += x[u] * wgt;
          weight += wgt;
        }
        return sum / weight;
      });
      gcPlaceRow(row, want, gap, x);
    }
  }
  // 6. y per layer, then normalise to start at 0 and build the routes.
  const layerH = new Float64Array(depth);
  for (let i = 0; i < n; i++) layerH[layer[i]] = Math.max(layerH[layer[i]], units[i].h);
  const layerY = new Float64Array(depth);
  let y = 0;
  for (let l = 0; l < depth; l++) {
    layerY[l] = y + layerH[l] / 2;
    y += layerH[l] + GC_LAYOUT_GAP_Y;
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (let v = 0; v < nv; v++) {
    minX = Math.min(minX, x[v] - vw[v] / 2);
    maxX = Math.max(maxX, x[v] + vw[v] / 2);
  }
  /** @type {Point[]} */
  const pos = [];
  for (let i = 0; i < n; i++) pos.push({ x: x[i] - minX, y: layerY[layer[i]] });
  const routes = chains.map((chain, e) => {
    const pts = chain.map((v, k) => {
      const py = layerY[vlayer[v]];
      if (k === 0) return { x: x[v] - minX, y: py + units[v].h / 2 };
      if (k === chain.length - 1) return { x: x[v] - minX, y: py - units[v].h / 2 };
      return { x: x[v] - minX, y: py };
    });
    return edges[e][0] < edges[e][1] ? pts : pts.reverse();
  });
  return { width: maxX - minX, height: Math.max(0, y - GC_LAYOUT_GAP_Y), pos, routes };
}

/**
 * Place one layer: as close to `want` as the order and the gaps allow (least squares).
 * @param {number[]} row @param {number[]} want @param {(a: number, b: number) => number} gap
 * @param {Float64Array} x
 */
function gcPlaceRow(row, want, gap, x) {
  // With offsets c_i (the cumulative minimum gaps), x_i = y_i + c_i and the gap
  // constraints become y non-decreasing: pool adjacent violators solves it in O(n).
  const m = row.length;
  const c = new Float64Array(m);
  for (let i = 1; i < m; i++) c[i] = c[i - 1] + gap(row[i - 1], row[i]);
  /** @type {number[]} */
  const blockSum = [];
  /** @type {number[]} */
  const blockLen = [];
  for (let i = 0; i < m; i++) {
    blockSum.push(want[i] - c[i]);
    blockLen.push(1);
    while (blockSum.length > 1) {
      const k = blockSum.length - 1;
      if (blockSum[k - 1] / blockLen[k - 1] <= blockSum[k] / blockLen[k]) break;
      blockSum[k - 1] += blockSum[k];
      blockLen[k - 1] += blockLen[k];
      blockSum.pop();
      blockLen.pop();
    }
  }
  let i = 0;
  blockSum.forEach((sum, k) => {
    const mean = sum / blockLen[k];
    for (let j = 0; j < blockLen[k]; j++, i++) x[row[i]] = mean + c[i];
  });
}

/**
 * Edge crossings between consecutive layers (insertion count over the lower ends).
 * @param {number[][]} rows @param {number[][]} down @param {Float64Array} rank
 */
function gcCountCrossings(rows, down, rank) {
  let total = 0;
  for (let l = 0; l + 1 < rows.length; l++) {
    /** @type {number[]} */
    const ends = [];
    for (const v of rows[l]) {
      const below = down[v].map((u) => rank[u]).sort((a, b) => a - b);
      for (const r of below) ends.push(r);
    }
    total += gcInversions(ends);
  }
  return total;
}

/** Number of pairs i < j with a[i] > a[j], by merge sort. @param {number[]} a */
function gcInversions(a) {
  if (a.length < 2) return 0;
  let count = 0;
  let src = Float64Array.from(a);
  let dst = new Float64Array(a.length);
  for (let width = 1; width < src.length; width *= 2) {
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = Math.min(lo + width, src.length);
      const hi = Math.min(lo + 2 * width, src.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if (src[j] < src[i]) {
          count += mid - i;
          dst[k++] = src[j++];
        } else dst[k++] = src[i++];
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    [src, dst] = [dst, src];
  }
  return count;
}

export { gcLayeredLayout };
