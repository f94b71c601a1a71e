// The GPT view's pictures (gpt.js draws a frame with them): the loss curve, the samples, the
// attention triangles and the characters' embeddings. Each builds plain SVG or HTML from a
// frame's numbers (gpt_frames.py says what they are), with the numbers on data attributes and in
// each mark's title, so that a reader, a screen reader and a test read the same.

import { fmt } from "../common.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs = {}, text = null) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== null) el.textContent = text;
  return el;
}

// The loss per step (a band from the lowest to the highest loss of each bucket: one line while a
// bucket is one step) and its running mean, on a log scale, in `svg` (its viewBox: 400 × 150).
export function drawGptCurve(svg, whole, means) {
  svg.replaceChildren();
  const W = 400, H = 150, L = 34, B = 16, T = 6;
  const curve = columns(whole, W - L);
  const xs = curve.steps.map((s) => s + 1).concat(means.map((m) => m[0]));
  const ys = curve.lows.concat(curve.highs, means.map((m) => m[1])).filter((y) => y > 0 && Number.isFinite(y));
  svg.append(svgEl("rect", { x: L, y: T, width: W - L - 2, height: H - T - B, class: "frame" }));
  if (!xs.length || !ys.length) return;
  const x1 = Math.max(...xs, 2), lo = Math.log(Math.min(...ys)), hi = Math.log(Math.max(...ys));
  const span = hi - lo || 1;
  const X = (s) => L + ((s - 1) / (x1 - 1)) * (W - L - 4);
  const Y = (y) => T + (1 - (Math.log(y) - lo) / span) * (H - T - B);
  const pts = (pairs) => pairs.filter(([, y]) => y > 0 && Number.isFinite(y)).map(([s, y]) => `${X(s).toFixed(1)},${Y(y).toFixed(1)}`).join(" ");
  const band = curve.steps.map((s, i) => [s + 1, curve.highs[i]]).concat(curve.steps.map((s, i) => [s + 1, curve.lows[i]]).reverse());
  svg.append(svgEl("polygon", { points: pts(band), class: "loss-band" }));
  svg.append(svgEl("polyline", { points: pts(curve.steps.map((s, i) => [s + 1, curve.lows[i]])), class: "loss-line" }));
  svg.append(svgEl("polyline", { points: pts(means), class: "mean-line" }));
  for (const y of [Math.exp(hi), Math.exp(lo)]) {
    svg.append(svgEl("text", { x: L - 3, y: Y(y) + 4, class: "tick", "text-anchor": "end" }, y.toFixed(2)));
  }
  svg.append(svgEl("text", { x: L, y: H - 3, class: "tick" }, "1"));
  svg.append(svgEl("text", { x: W - 2, y: H - 3, class: "tick", "text-anchor": "end" }, `step ${x1}`));
}

// The curve's buckets merged into at most n columns (each: its first step, the lowest and the
// highest loss): more points than the plot has pixels across only cost the browser its painting,
// which, thousands of points long, held the page to a few frames a second.
function columns(curve, n) {
  const k = Math.ceil(curve.steps.length / n);
  if (k <= 1) return curve;
  const out = { steps: [], lows: [], highs: [] };
  for (let i = 0; i < curve.steps.length; i += k) {
    const lows = curve.lows.slice(i, i + k), highs = curve.highs.slice(i, i + k);
    out.steps.push(curve.steps[i]);
    out.lows.push(Math.min(...lows));
    out.highs.push(Math.max(...highs));
  }
  return out;
}

// The samples, each a list item; a word not among those it learns is marked new.
export function drawGptSamples(list, samples, fresh) {
  list.replaceChildren(...samples.map((w, i) => {
    const li = document.createElement("li");
    li.dataset.sample = w;
    li.textContent = w || "(empty)";
    if (fresh[i]) {
      li.classList.add("new");
      li.title = "new: not one of the words it learns";
    }
    return li;
  }));
}

// One triangle per layer and head: row i is position i's weights over positions 0..i (they sum
// to 1), the characters on both axes; each cell carries its weight (data-w) and says it on hover.
export function drawGptAttention(box, attention, onHover) {
  const { labels, maps } = attention;
  const figures = [];
  maps.forEach((heads, layer) => heads.forEach((rows, head) => {
    const fig = document.createElement("figure");
    fig.className = "attn";
    const cap = document.createElement("figcaption");
    cap.textContent = maps.length > 1 ? `layer ${layer + 1}, head ${head + 1}` : `head ${head + 1}`;
    const table = document.createElement("table");
    Object.assign(table.dataset, { layer, head });
    table.setAttribute("aria-label", `attention of ${cap.textContent}: each row sums to 1`);
    const top = table.insertRow();
    top.append(document.createElement("th"), ...labels.map((ch) => headCell(ch, "col")));
    rows.forEach((row, i) => {
      const tr = table.insertRow();
      tr.dataset.row = i;
      tr.append(headCell(labels[i], "row"));
      labels.forEach((ch, j) => {
        const td = tr.insertCell();
        if (j > i) { td.className = "masked"; return; } // a later position: never attended to
        const w = row[j];
        td.dataset.w = w;
        td.style.background = `rgba(47, 111, 219, ${Math.min(1, w).toFixed(3)})`;
        td.title = `${labels[i]} (position ${i}) → ${ch} (position ${j}): ${fmt(w)}`;
        td.addEventListener("mouseenter", () => onHover(td.title));
      });
    });
    fig.append(cap, table);
    figures.push(fig);
  }));
  box.replaceChildren(...figures);
}

function headCell(ch, scope) {
  const th = document.createElement("th");
  th.scope = scope;
  th.textContent = ch;
  return th;
}

// Where each character's label goes on an `S` × `S` picture: each axis scaled to the points' own
// extent (a margin P around them: the points fill the picture, whatever their scale), then the
// labels' boxes (w × h, centred) pushed apart where they overlap, each pair along the axis it
// overlaps least, until none does (kept inside the picture): a cluster's letters readable, each
// with a line to its point. `at`: each point's own place; `pos`: its label's. Free of the page
// (no DOM): a test runs it in Node.
export function placeEmbedding(xy, S = 300, P = 18, w = 12, h = 18) { // (w, h: a 14px bold glyph's box)
  const extent = (v) => {
    const lo = Math.min(...v), hi = Math.max(...v);
    return [lo, hi - lo > 1e-12 ? hi - lo : 1];
  };
  const [x0, dx] = extent(xy.map((p) => p[0])), [y0, dy] = extent(xy.map((p) => p[1]));
  const at = xy.map(([x, y]) => [P + ((x - x0) / dx) * (S - 2 * P), S - P - ((y - y0) / dy) * (S - 2 * P)]);
  const pos = at.map((p) => [...p]);
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  for (let round = 0; round < 500; round++) {
    let moved = false;
    for (let i = 0; i < pos.length; i++) {
      for (let j = i + 1; j < pos.length; j++) {
        const a = pos[i], b = pos[j];
        const ox = w - Math.abs(a[0] - b[0]), oy = h - Math.abs(a[1] - b[1]);
        if (ox <= 0 || oy <= 0) continue;
        moved = true;
        const k = ox / w < oy / h ? 0 : 1, push = (k === 0 ? ox : oy) / 2 + 0.05;
        const side = a[k] < b[k] || (a[k] === b[k] && i < j) ? -1 : 1; // (the same place: by order)
        a[k] += side * push;
        b[k] -= side * push;
      }
    }
    for (const p of pos) {
      p[0] = clamp(p[0], w / 2, S - w / 2);
      p[1] = clamp(p[1], h / 2, S - h / 2);
    }
    if (!moved) break;
  }
  return { at, pos };
}

// The characters' embeddings on their first two principal components, in `svg` (viewBox 300 ×
// 300): each label where its point falls, or, where the others push it away, beside a dot there
// with a thin line to it; data-char, data-x, data-y (the point's two numbers) on each.
export function drawGptEmbedding(svg, embedding) {
  svg.replaceChildren();
  const S = 300;
  const { labels, xy } = embedding;
  svg.append(svgEl("rect", { x: 1, y: 1, width: S - 2, height: S - 2, class: "frame" }));
  if (!xy.length) return;
  const { at, pos } = placeEmbedding(xy, S);
  xy.forEach(([x, y], i) => {
    const cls = i === labels.length - 1 ? "char bos" : "char";
    const [ax, ay] = at[i], [px, py] = pos[i];
    if (Math.hypot(px - ax, py - ay) > 6) { // pushed from its point: a dot there, a line to it
      svg.append(svgEl("line", { x1: ax.toFixed(1), y1: ay.toFixed(1), x2: px.toFixed(1), y2: py.toFixed(1), class: "leader" }));
      svg.append(svgEl("circle", { cx: ax.toFixed(1), cy: ay.toFixed(1), r: 1.8, class: "dot" }));
    }
    const t = svgEl("text", { x: px.toFixed(1), y: py.toFixed(1), class: cls, "data-char": labels[i], "data-x": x, "data-y": y }, labels[i]);
    t.append(svgEl("title", {}, `${labels[i]}: (${fmt(x)}, ${fmt(y)})`));
    svg.append(t);
  });
}
