// The Health panel of the Train view and of the GPT view (one drawing for both: gpt.js mounts it
// with its own `ui`): makemore part 3's pictures of the run, drawn from what Python
// read (playground/train_health.py, micrograd.train.health and .diagnose): each layer's activation
// histogram with its saturated (tanh) or dead (ReLU) share, each weight matrix's update:data ratio
// over the steps with makemore's 10^-3 as a guide, and the diagnoses in words. This file only
// draws: every number and every sentence comes in the frame's `health` (only while the panel is
// open: the page tells Python with the `health` action, and the presets and "Fix it" go the same way).

const LINE_COLORS = ["#2563eb", "#c0392b", "#16a34a", "#9333ea", "#d97706", "#0891b2", "#db2777", "#65a30d", "#4b5563", "#0d9488"];
const SATURATED = 0.97; // tanh's |t| past which the panel shades the histogram (health.SATURATED)

// The panel's markup, the same in both views, written once: built into the view's <section>,
// around what the page says there in its own words (its hint, its subject: "network" or "GPT",
// and its histogram's caption and label, in the section's data-*).
const PANEL = `
  <h2 id="health-h">Health <span id="health-step" class="hint"></span></h2>
  <label class="health-toggle"><input type="checkbox" id="health-open"> Show the <span class="subject"></span>'s health: why isn't it learning?</label>
  <div id="health-body" hidden>
    <div class="health-presets">
      <label for="health-preset">Break it:</label>
      <select id="health-preset"><option value=""></option></select>
      <button type="button" id="health-fix" disabled>Fix it</button>
      <span id="health-fix-text" class="hint"></span>
    </div>
    <p id="health-note" class="note" role="status" hidden></p>
    <ul id="health-diagnoses" role="status" aria-label="Diagnoses"></ul>
    <div class="health-plots">
      <figure><canvas id="health-hist" role="img"></canvas><figcaption class="hint"></figcaption></figure>
      <figure><canvas id="health-ud" role="img" aria-label="update:data ratio of each weight matrix over the steps"></canvas>
        <figcaption class="hint">log10(update:data) of each weight matrix over the steps read: how far a step moves the weights against their spread.</figcaption></figure>
    </div>
  </div>`;

function buildPanel(section) {
  const hint = section.querySelector("p.hint"), { subject, hist, histLabel } = section.dataset;
  section.innerHTML = PANEL;
  section.querySelector("#health-body").prepend(hint);
  section.querySelector("label.health-toggle .subject").replaceWith(subject);
  section.querySelector("#health-preset option").textContent = `choose a broken ${subject}…`;
  section.querySelector("#health-hist").setAttribute("aria-label", histLabel);
  section.querySelector("#health-hist + figcaption").textContent = hist;
}

// `ui`: the view's shared parts (train.js's mountTrain, or what gpt.js gives it: $, view, post,
// showIn); returns what this part offers the others.
export function healthPart(ui) {
  const { $, view, showIn } = ui;
  buildPanel($("health-panel"));
  const open = $("health-open"), select = $("health-preset"), fix = $("health-fix");

  function send(body) {
    return ui.post("health", body).catch(showIn("train-error"));
  }
  // what the panel shows, by the step read and the preset: a frame brings the same health until
  // the next read, and is not drawn again (each frame's redraw cost a big GPT a fifth of its speed
  // on a 2-core machine, where the page's drawing and the worker's steps share the cores)
  let drawn = null;
  open.addEventListener("change", () => {
    drawn = null;
    $("health-body").hidden = !open.checked;
    send({ open: open.checked });
  });
  select.addEventListener("change", () => {
    if (select.value) send({ preset: select.value });
  });
  fix.addEventListener("click", () => send({ fix: true }));
  // a window resized (a phone turned): drawn again at the new width, paused or not
  window.addEventListener("resize", () => { drawn = null; if (open.checked) drawHealth(); });

  function fillPresets() {
    if (select.options.length > 1 || !view.options || !view.options.health_presets) return;
    for (const p of view.options.health_presets) {
      const o = document.createElement("option");
      o.value = p.name; o.textContent = p.title;
      select.append(o);
    }
  }

  function drawHealth() {
    fillPresets();
    const h = view.frame && view.frame.health;
    if (!open.checked || !h) return;
    const key = `${h.step} ${h.preset} ${h.fixed}`;
    if (key === drawn) return;
    drawn = key;
    select.value = h.preset || "";
    fix.disabled = !h.preset || h.fixed;
    $("health-fix-text").textContent = h.preset ? (h.fixed ? `fixed: ${h.fix}` : `the fix: ${h.fix}`) : "";
    const note = $("health-note");
    note.hidden = h.step !== null;
    note.textContent = "Press Step or Play: the health is read from the run's steps.";
    $("health-step").textContent = h.step === null ? "" : `(read at step ${h.step})`;
    const list = $("health-diagnoses");
    list.textContent = "";
    if (h.step !== null) {
      const items = h.diagnoses.length ? h.diagnoses : [{ cause: "healthy", message: "No problem found in the last steps read." }];
      for (const d of items) {
        const li = document.createElement("li");
        li.className = `diag ${d.cause}`;
        li.dataset.cause = d.cause;
        li.textContent = d.message;
        list.append(li);
      }
    }
    drawHistograms($("health-hist"), h.layers);
    drawLines($("health-ud"), h);
  }

  return { drawHealth };
}

// A canvas at its laid-out width (and `height`), in device pixels: its 2-D context, scaled.
function sized(canvas, height) {
  const w = Math.max(200, canvas.parentElement.clientWidth || 400), dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(height * dpr);
    canvas.style.width = `${w}px`; canvas.style.height = `${height}px`;
  }
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, height);
  g.font = "11px system-ui, sans-serif";
  return [g, w];
}

function pct(x) {
  return `${Math.round(100 * x)}%`;
}

// One histogram per layer, side by side (stacked when narrow): counts over the layer's range,
// tanh's saturated tails shaded, and the layer's share saturated or dead in its title.
function drawHistograms(canvas, layers) {
  const n = Math.max(1, layers.length);
  const across = (canvas.parentElement.clientWidth || 400) < 520 ? 1 : n;
  const rows = Math.ceil(n / across), cellH = 110;
  const [g, W] = sized(canvas, rows * cellH);
  const cw = W / across;
  layers.forEach((lay, i) => {
    const x0 = (i % across) * cw + 6, y0 = Math.floor(i / across) * cellH, w = cw - 12;
    const top = y0 + 18, bottom = y0 + cellH - 16, hgt = bottom - top;
    let title = `${lay.name} (${lay.activation})`;
    if (lay.saturated != null) title += `: ${pct(lay.saturated)} saturated`;
    if (lay.dead != null) title += `: ${pct(lay.dead)} dead`;
    g.fillStyle = "#1d2430";
    g.fillText(title, x0, y0 + 12);
    if (!lay.recorded || !lay.counts.length) {
      g.fillStyle = "#6b7280"; g.fillText("not read", x0, top + 20);
      return;
    }
    const { lo, hi, counts } = lay, span = hi - lo || 1;
    const xAt = (v) => x0 + ((v - lo) / span) * w;
    if (lay.activation === "tanh") { // the saturated tails, shaded
      g.fillStyle = "rgba(192, 57, 43, 0.12)";
      if (hi > SATURATED) g.fillRect(xAt(Math.max(lo, SATURATED)), top, xAt(hi) - xAt(Math.max(lo, SATURATED)), hgt);
      if (lo < -SATURATED) g.fillRect(xAt(lo), top, xAt(Math.min(hi, -SATURATED)) - xAt(lo), hgt);
    }
    const most = Math.max(...counts, 1), bw = w / counts.length;
    g.fillStyle = "#2563eb";
    counts.forEach((c, k) => {
      const bh = (c / most) * hgt;
      g.fillRect(x0 + k * bw, bottom - bh, Math.max(1, bw - 1), bh);
    });
    g.strokeStyle = "#9aa3af"; g.beginPath(); g.moveTo(x0, bottom + 0.5); g.lineTo(x0 + w, bottom + 0.5); g.stroke();
    g.fillStyle = "#4b5563";
    g.fillText(fmtNum(lo), x0, bottom + 12);
    const hiText = fmtNum(hi);
    g.fillText(hiText, x0 + w - g.measureText(hiText).width, bottom + 12);
  });
}

function fmtNum(x) {
  return Math.abs(x) >= 100 || (Math.abs(x) < 0.01 && x !== 0) ? x.toExponential(1) : x.toFixed(2);
}

// Each weight matrix's log10(update:data) over the steps read; makemore's 10^-3 drawn as a guide
// (dashed, labelled so), and the line the diagnosis reads (dotted). The legend under the plot
// takes as many rows as the matrices' names need at the canvas's width (a GPT has 9 or 15).
function drawLines(canvas, h) {
  const W0 = Math.max(200, canvas.parentElement.clientWidth || 400);
  const left = 34, right = W0 - 8, top = 8, bottom = 150;
  const legend = legendRows(canvas, h.weights, left, right);
  const [g] = sized(canvas, bottom + 24 + 14 * Math.max(0, legend.length - 1));
  const pts = h.lines;
  const ys = [h.guide - 0.5, h.limit + 0.3];
  for (const [, v] of pts) for (const y of v) if (y !== null) ys.push(y);
  const ylo = Math.floor(Math.min(...ys)), yhi = Math.ceil(Math.max(...ys));
  const s0 = pts.length ? pts[0][0] : 0, s1 = pts.length ? Math.max(pts[pts.length - 1][0], s0 + 1) : 1;
  const X = (s) => left + ((s - s0) / (s1 - s0)) * (right - left);
  const Y = (y) => bottom - ((y - ylo) / (yhi - ylo || 1)) * (bottom - top);
  g.strokeStyle = "#e5e7eb"; g.fillStyle = "#4b5563";
  for (let y = ylo; y <= yhi; y += 1) {
    g.beginPath(); g.moveTo(left, Y(y) + 0.5); g.lineTo(right, Y(y) + 0.5); g.stroke();
    g.fillText(`${y}`, 4, Y(y) + 4);
  }
  const level = (y, dash, color, label) => {
    g.save(); g.setLineDash(dash); g.strokeStyle = color;
    g.beginPath(); g.moveTo(left, Y(y)); g.lineTo(right, Y(y)); g.stroke(); g.restore();
    g.fillStyle = color; g.fillText(label, left + 4, Y(y) - 3);
  };
  level(h.guide, [6, 4], "#6b7280", "guide 10^-3 (makemore's; not the rule)");
  level(h.limit, [2, 3], "#c0392b", `diagnosed above 10^${h.limit}`);
  h.weights.forEach((name, m) => {
    g.strokeStyle = LINE_COLORS[m % LINE_COLORS.length]; g.lineWidth = 1.5;
    g.setLineDash(m >= LINE_COLORS.length ? [4, 2] : []); // (a colour again: dashed)
    g.beginPath();
    let pen = false;
    for (const [s, v] of pts) {
      const y = v[m];
      if (y === null || y === undefined) { pen = false; continue; }
      if (pen) g.lineTo(X(s), Y(y)); else g.moveTo(X(s), Y(y));
      pen = true;
    }
    g.stroke(); g.lineWidth = 1; g.setLineDash([]);
  });
  g.fillStyle = "#4b5563";
  const span = `step ${s0 + 1}…${s1 + 1}`;
  g.fillText(span, right - g.measureText(span).width, bottom + 12);
  legend.forEach((row, r) => { // the legend, under the plot
    for (const [m, x] of row) {
      const y = bottom + 12 + 14 * r;
      g.fillStyle = LINE_COLORS[m % LINE_COLORS.length];
      g.fillRect(x, y - 5, 10, 3);
      g.fillText(h.weights[m], x + 13, y);
    }
  });
}

// The legend's rows: [matrix index, x] each, wrapped within left…right (the first row leaves
// room for the step span at its right).
function legendRows(canvas, names, left, right) {
  const g = canvas.getContext("2d");
  g.font = "11px system-ui, sans-serif";
  const rows = [[]];
  let x = left, end = right - 90;
  names.forEach((name, m) => {
    const w = 20 + g.measureText(name).width;
    if (x + w > end && rows[rows.length - 1].length) { rows.push([]); x = left; end = right; }
    rows[rows.length - 1].push([m, x]);
    x += w;
  });
  return rows;
}
