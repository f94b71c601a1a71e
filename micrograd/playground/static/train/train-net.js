// The Train view's network: each neuron's square (its heat map: its output over the plane), the
// links (each weight, or its gradient, as colour and width) and the bias squares, with their
// legends. Hovering a neuron shows it on the big plot; train-weights.js reads and sets a link.

import { COLORS, GRAD_COLORS, HEAT_STRENGTH, decode, heatImage, mix, signColor, setLegend, tick } from "./train-heat.js";

export const BIAS = 7; // a bias's square, in pixels, at the bottom left of its neuron

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function netPart(ui) {
  const { $, view } = ui;

  function netGeometry(sizes) {
    const W = $("net").clientWidth || 420;
    const tallest = Math.max(...sizes);
    // a neuron's square (its heat map has as many cells a side: train_frames.neuron_box)
    const box = view.meta.box;
    const H = Math.max(tallest * (box + 6) + 10, 120);
    const cols = sizes.length;
    const xs = sizes.map((_, i) => 12 + i * (W - 24 - box) / Math.max(cols - 1, 1));
    const pos = sizes.map((n, i) => Array.from({ length: n }, (_, j) => [xs[i], (H - n * (box + 6)) / 2 + j * (box + 6) + 3]));
    return { W, H, box, pos };
  }

  function buildNet(sizes) {
    const net = $("net");
    for (const el of net.querySelectorAll("canvas:not(#net-links), .nlabel")) el.remove();
    const g = netGeometry(sizes);
    view.net = g;
    net.style.height = `${g.H}px`;
    // The links are drawn on one canvas: thousands of SVG lines restyled every frame took the page
    // to 10 frames a second at 6 layers of 32; a canvas of them draws in a few milliseconds.
    const links = $("net-links");
    links.className = "links";
    const dpr = window.devicePixelRatio || 1;
    links.width = Math.round(g.W * dpr); links.height = Math.round(g.H * dpr);
    Object.assign(links.style, { width: `${g.W}px`, height: `${g.H}px` });
    view.links = []; // [layer][neuron][input] = [x1, y1, x2, y2], in CSS pixels
    view.biases = []; // [layer][neuron] = [x, y] of its bias's square (top left)
    view.offsets = []; // [layer]: where its neurons' parameters start in model.parameters()
    let off = 0;
    for (let l = 1; l < sizes.length; l++) {
      view.links.push(g.pos[l].map(([x2, y2]) => g.pos[l - 1].map(([x1, y1]) =>
        [x1 + g.box, y1 + g.box / 2, x2, y2 + g.box / 2])));
      view.biases.push(g.pos[l].map(([x, y]) => [x - BIAS - 1, y + g.box - BIAS]));
      view.offsets.push(off);
      off += sizes[l] * (sizes[l - 1] + 1);
    }
    view.heat = [];
    view.heatDrawn = [];
    view.outCanvases = [];
    sizes.forEach((n, l) => g.pos[l].forEach(([x, y], j) => {
      const cv = document.createElement("canvas");
      cv.width = cv.height = view.meta.heat;
      Object.assign(cv.style, { left: `${x}px`, top: `${y}px`, width: `${g.box}px`, height: `${g.box}px` });
      const last = l === sizes.length - 1;
      const feature = view.meta.features ? view.meta.features[j] : `x${j + 1}`;
      cv.title = l === 0 ? `input ${feature}` : last ? `output ${sizes[l] > 1 ? j + 1 : ""}` : `neuron h${l}.${j + 1}`;
      net.append(cv);
      if (l === 0) cv.getContext("2d").putImageData(heatImage(view.meta.inputs[j], cv.width), 0, 0);
      else if (!last) {
        const k = view.heat.length, name = `h${l}.${j + 1}`;
        cv.tabIndex = 0;
        cv.setAttribute("role", "img");
        cv.setAttribute("aria-label", `neuron ${name}: hover or focus to see its output on the plot`);
        cv.addEventListener("mouseenter", () => showNeuron(k, name));
        cv.addEventListener("focus", () => showNeuron(k, name));
        cv.addEventListener("mouseleave", () => showNeuron(null));
        cv.addEventListener("blur", () => showNeuron(null));
        view.heat.push(cv);
      } else view.outCanvases.push(cv);
    }));
    const outLayer = sizes.length - 1;
    const names = sizes.map((n, l) => l === 0 ? "inputs" : l === outLayer ? "output" : `layer ${l}`);
    const labels = names.map((name, l) => {
      const s = Object.assign(document.createElement("span"), { className: "nlabel", textContent: name });
      if (l === outLayer) s.style.right = "0"; // the last one ends at the edge, not past it
      else s.style.left = `${g.pos[l][0][0]}px`;
      net.append(s);
      return s;
    });
    // On a narrow panel (a phone, six hidden layers) "layer 6" runs into "output": then the short
    // names, those of the neurons' tooltips (h1 for layer 1's h1.1, h1.2, ...).
    const edges = labels.map((s) => s.getBoundingClientRect());
    if (edges.some((b, l) => l > 0 && edges[l - 1].right + 4 > b.left)) {
      labels.forEach((s, l) => { s.textContent = l === 0 ? "in" : l === outLayer ? "out" : `h${l}`; });
    }
    view.focusItem = null;
    view.hoverItem = null;
    view.readItem = null; // Python forgets it too when the network is new
    view.shownNeuron = null;
    ui.closeWeight();
  }

  // Where parameter (layer l, neuron j, input i) is in model.parameters(): each neuron's weights,
  // then its bias (i null).
  function paramIndex(l, j, i) {
    const nin = view.meta.sizes[l];
    return view.offsets[l] + j * (nin + 1) + (i == null ? nin : i);
  }

  function gradsShown() {
    return $("show-grads").checked && !!(view.frame && view.frame.grads);
  }

  function drawNet() {
    const f = view.frame;
    if (!f || !view.links) return;
    if (f.heat) f.heat.forEach((b64, i) => {
      const cv = view.heat[i];
      if (!cv || view.heatDrawn[i] === b64) return; // unchanged since the last frame drawn
      cv.getContext("2d").putImageData(heatImage(b64, cv.width), 0, 0);
      view.heatDrawn[i] = b64;
    });
    if (f.grid) { // one output: the regions; one per class: where that class wins
      const side = view.meta.grid;
      view.outCanvases.forEach((cv, k) => {
        if (cv.width !== side) cv.width = cv.height = side;
        cv.getContext("2d").putImageData(ui.regionImage(f.grid, side, view.outCanvases.length > 1 ? k : null), 0, 0);
      });
    }
    // the links again only if what they show changed (a settled network's bytes often do not)
    const key = [gradsShown() ? f.grads : f.links, JSON.stringify(ui.currentItem()), view.net];
    if (!view.linksKey || key.some((k, i) => k !== view.linksKey[i])) drawLinks(f);
    netLegend(f);
  }

  // Show hidden neuron `i`'s output on the big plot (null: the network's output again); Python
  // then sends it at the plot's size.
  function showNeuron(i, name) {
    view.shownNeuron = i;
    view.shownName = name;
    $("plot-status").textContent = i == null ? "" : `the plot shows neuron ${name}'s output (orange −, blue +)`;
    ui.drawPlot();
    ui.postView({ neuron: i });
  }

  // How a parameter's link (or bias square) looks, from its byte: [colour, width, alpha]. A weight:
  // blue positive, orange negative, thicker and darker the larger (the same past meta.link_scale).
  // A gradient: red positive, teal negative, its width on a log scale of meta.grad_decades.
  function looks(byte, widest, grads) {
    const x = byte / 127.5 - 1;
    if (grads) {
      const t = Math.min(1, Math.abs(x)) ** 2; // the top decades stand out, the rest fade
      return [GRAD_COLORS[x > 0 ? 1 : 0], 0.4 + (widest - 0.4) * t, 0.1 + 0.85 * t];
    }
    const a = Math.abs(x) * view.meta.link_scale;
    return [COLORS[x >= 0 ? 1 : 0], Math.min(widest, 0.4 + 2.2 * a), Math.min(0.95, 0.25 + 0.5 * a)];
  }

  // The links and the bias squares. Links of the same look go in one path (a few dozen strokes, not
  // thousands). The parameter being edited, focused or hovered is drawn over a dark halo.
  function drawLinks(f) {
    view.linksKey = [gradsShown() ? f.grads : f.links, JSON.stringify(ui.currentItem()), view.net];
    const cv = $("net-links"), ctx = cv.getContext("2d"), dpr = cv.width / (view.net.W || 1);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, view.net.W, view.net.H);
    ctx.lineCap = "butt"; // round caps on thousands of lines cost more than they show
    const grads = gradsShown();
    const bytes = decode(grads ? f.grads : f.links);
    const sizes = view.meta.sizes;
    const paths = new Map(); // look -> Path2D
    const widths = sizes.slice(1).map((n, l) => // between two wide layers the links are many and
      Math.max(1, Math.min(7, 32 / Math.sqrt(n * sizes[l])))); // close: thinner, so they stay apart
    view.links.forEach((layer, l) => {
      // each byte's look in this layer, once (256 of them, not one per link), as its path
      const pathOf = Array.from({ length: 256 }, (_, v) => {
        const [c, width, alpha] = looks(v, widths[l], grads);
        const look = `${c} ${width.toFixed(1)} ${alpha.toFixed(2)}`;
        if (!paths.has(look)) paths.set(look, new Path2D());
        return paths.get(look);
      });
      layer.forEach((neuron, j) => {
        const base = paramIndex(l, j, 0);
        neuron.forEach((seg, i) => {
          const p = pathOf[bytes[base + i]];
          p.moveTo(seg[0], seg[1]); p.lineTo(seg[2], seg[3]);
        });
      });
    });
    for (const [look, p] of paths) {
      const [c, width, alpha] = look.split(" ");
      ctx.strokeStyle = `rgba(${c}, ${alpha})`;
      ctx.lineWidth = Number(width);
      ctx.stroke(p); // an empty path (a look no link has) draws nothing
    }
    ctx.lineWidth = 1;
    view.biases.forEach((layer, l) => layer.forEach(([x, y], j) => {
      const [c, , alpha] = looks(bytes[paramIndex(l, j, null)], 1, grads);
      ctx.fillStyle = `rgb(${mix(c, alpha)})`;
      ctx.fillRect(x, y, BIAS, BIAS);
      ctx.strokeStyle = "#5b6472";
      ctx.strokeRect(x + 0.5, y + 0.5, BIAS - 1, BIAS - 1);
    }));
    const item = ui.currentItem();
    if (item) { // the link or bias being read: a dark halo, then itself again on top
      const [l, j, i] = item, [c, width, alpha] = looks(bytes[paramIndex(l, j, i)], widths[l], grads);
      ctx.strokeStyle = "#111";
      if (i == null) {
        const [x, y] = view.biases[l][j];
        ctx.lineWidth = 2.5;
        ctx.strokeRect(x - 1.5, y - 1.5, BIAS + 3, BIAS + 3);
      } else {
        const [x1, y1, x2, y2] = view.links[l][j][i];
        ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x2, y2);
        ctx.lineWidth = width + 4;
        ctx.stroke();
        ctx.strokeStyle = `rgb(${mix(c, Math.max(alpha, 0.6))})`;
        ctx.lineWidth = Math.max(width, 1.5);
        ctx.stroke();
      }
    }
  }

  // The network's legend: what the links, the bias squares and the neuron squares mean.
  function netLegend(f) {
    if (gradsShown()) {
      const m = f.grad_max == null ? 0 : f.grad_max, d = view.meta.grad_decades;
      setLegend($("net-legend"), `links and bias squares: ∂L/∂w of step ${f.step} (thickest: |∂L/∂w| = ${tick(m)}; a log scale, the thinnest ${10 ** d} times less)`,
        (t) => { const [c, , alpha] = looks(Math.round(255 * t), 1, true); return mix(c, alpha); }, [[0, tick(-m)], [0.5, "0"], [1, tick(m, true)]]);
    } else {
      const s = view.meta.link_scale;
      setLegend($("net-legend"), `links and bias squares: the weight w (thicker and darker as |w| grows, up to ${s})`,
        (t) => { const [c, , alpha] = looks(Math.round(255 * t), 1, false); return mix(c, alpha); }, [[0, tick(-s)], [0.5, "0"], [1, tick(s, true)]]);
    }
    setLegend($("heat-legend"), "neuron squares: each neuron's output h over the plane, scaled to its own largest |h| (hover one: its scale, on the plot)",
      (t) => signColor(2 * t - 1, HEAT_STRENGTH), [[0, "−max"], [0.5, "0"], [1, "+max"]]);
  }


  return { buildNet, drawNet, drawLinks, paramIndex, showNeuron, gradsShown };
}
