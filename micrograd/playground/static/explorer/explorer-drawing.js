// The explorer's graph: drawn once as SVG from the layout Python made, then patched as the passes
// run: the numbers of the nodes whose numbers changed, the highlights (the node a step processed,
// the children it wrote, the grad Predict asks), the zoom; and the scrolling that keeps what
// changed in view. A part of mountExplorer (explorer.js), over its `ui`: $, opts, and
// openLeaf(id), called when a leaf is clicked.
import { fmt } from "../common.js";

export function drawingPart(ui) {
  const { $, opts } = ui;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const MIN_FIT = 0.8; // below this the 12px numbers are too small to read: scroll instead
  let drawing = null; // the laid-out graph
  let zoom = null; // null = fit to width (not below MIN_FIT), else a fixed scale
  let nodes = new Map(); // node id -> {g, data, grad, role, ...what it shows now}
  let edgesInto = new Map(); // an op's id -> the edges from its children into it
  let edgesOutOf = new Map(); // an op's id -> the edge from it to its result
  let lit = []; // the elements highlighted now (current, touched, hot)

  function svg(tag, attrs, parent) {
    const el = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    if (parent) parent.appendChild(el);
    return el;
  }

  function pushTo(map, key, value) {
    if (!map.has(key)) map.set(key, []);
    map.get(key).push(value);
  }

  function draw(d) {
    drawing = d;
    nodes = new Map();
    edgesInto = new Map();
    edgesOutOf = new Map();
    lit = [];
    const box = $("graph");
    box.textContent = "";
    const top = svg("svg", {
      viewBox: `0 0 ${d.width} ${d.height}`,
      // a group, not an img: an img's children are hidden from screen readers, and the leaves
      // inside are buttons
      role: "group",
      "aria-label": `Computation graph with ${d.nodes.filter((n) => n.kind === "value").length} values`,
    }, box);
    top.id = "graph-svg";
    const defs = svg("defs", {}, top);
    const marker = svg("marker", {
      id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse",
    }, defs);
    svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

    const edges = svg("g", { class: "edges" }, top);
    for (const e of d.edges) {
      const path = svg("path", { d: e.d, class: "edge", "data-from": e.from, "data-to": e.to, "marker-end": "url(#arrow)" }, edges);
      pushTo(edgesInto, e.to, path);
      pushTo(edgesOutOf, e.from, path);
    }
    const layer = svg("g", { class: "nodes" }, top);
    const row = d.row;
    for (const n of d.nodes) {
      const g = svg("g", { class: `node ${n.kind}`, "data-id": n.id, transform: `translate(${n.x},${n.y})` }, layer);
      if (n.problem) { // a learner's own Value whose rule here is not its op's slope
        g.classList.add("wrong");
        svg("title", {}, g).textContent = n.problem;
      }
      if (n.kind === "op") {
        svg("ellipse", { rx: n.w / 2, ry: n.h / 2, class: "op-shape" }, g);
        const t = svg("text", { class: "op-text", "text-anchor": "middle", dy: "0.35em" }, g);
        t.textContent = n.caption;
        nodes.set(n.id, { g });
        continue;
      }
      g.setAttribute("data-name", n.name);
      if (n.leaf) g.classList.add("leaf");
      const x0 = -n.w / 2, y0 = -n.h / 2;
      svg("rect", { x: x0, y: y0, width: n.w, height: n.h, rx: 4, class: "record" }, g);
      svg("line", { x1: x0, x2: x0 + n.w, y1: y0 + row + 3, y2: y0 + row + 3, class: "divider" }, g);
      const title = svg("title", {}, g);
      title.textContent = n.name;
      const label = svg("text", { x: x0 + 7, y: y0 + row - 1, class: n.named ? "label" : "label invented" }, g);
      label.textContent = n.name;
      const data = svg("text", { x: x0 + 7, y: y0 + 2 * row + 2, class: "data" }, g);
      const grad = svg("text", { x: x0 + 7, y: y0 + 3 * row + 1, class: "grad" }, g);
      data.textContent = "data";
      grad.textContent = "grad";
      // a leaf says what it is: a parameter (a gradient step moves it) or data (it stays)
      const role = n.switchable || n.leaf
        ? svg("text", { x: x0 + n.w - 7, y: y0 + row - 1, class: "role", "text-anchor": "end" }, g) : null;
      nodes.set(n.id, { g, data, grad, role, switchable: !!n.switchable, name: n.name });
      if (n.leaf) {
        g.setAttribute("tabindex", "0");
        g.setAttribute("role", "button");
        g.addEventListener("click", () => ui.openLeaf(n.id));
        g.addEventListener("keydown", (ev) => {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ui.openLeaf(n.id); }
        });
      }
    }
    const note = [d.engine === "dot" ? "layout: Graphviz dot" : "layout: built-in", ...d.notes].join(" · ");
    $("layout-note").textContent = note;
    applyZoom();
  }

  function applyZoom() {
    const el = $("graph-svg");
    if (!el || !drawing) return;
    const avail = $("graph").clientWidth - 4;
    let scale = zoom;
    if (scale === null) scale = Math.max(MIN_FIT, Math.min(1.25, avail / drawing.width));
    el.setAttribute("width", Math.round(drawing.width * scale));
    el.setAttribute("height", Math.round(drawing.height * scale));
    el.dataset.scale = scale.toFixed(3);
  }

  function nodeEl(id) {
    const n = nodes.get(id);
    return n ? n.g : null;
  }

  // Each node's numbers, where they changed (a step changes a node and its children, not the
  // other 450).
  function patchNodes(state) {
    const order = new Map(state.forward_order.map((id, i) => [id, i]));
    const stagger = Math.min(60, 1200 / Math.max(1, order.size));
    const params = new Set(state.params || []);
    for (const [id, v] of Object.entries(state.values)) {
      const n = nodes.get(id);
      if (!n || !n.data) continue;
      const hidden = v.data === null;
      if (n.dataRaw !== v.data) {
        n.data.textContent = hidden ? "data ?" : `data ${fmt(v.data)}`;
        n.data.classList.toggle("unknown", hidden);
        if (hidden) n.data.classList.remove("arrive");
        else if (n.dataRaw === null) { // the forward pass reaches nodes in topological order
          n.data.style.animationDelay = `${(order.get(id) || 0) * stagger}ms`;
          n.data.classList.add("arrive");
        }
        n.g.dataset.data = hidden ? "" : String(v.data);
        n.dataRaw = v.data;
      }
      if (n.gradRaw !== v.grad) {
        n.grad.textContent = `grad ${fmt(v.grad)}`;
        n.grad.classList.toggle("zero", v.grad === 0);
        n.g.dataset.grad = String(v.grad);
        n.gradRaw = v.grad;
      }
      if (n.role) {
        const role = params.has(id) ? "param" : n.switchable ? "data" : "";
        if (n.roleShown !== role) {
          n.role.textContent = role;
          n.role.classList.toggle("param", role === "param");
          n.g.dataset.role = role;
          n.roleShown = role;
        }
      }
      if (n.g.classList.contains("leaf")) {
        const label = `Edit ${n.name}: data ${hidden ? "?" : fmt(v.data)}, grad ${fmt(v.grad)}${n.roleShown ? `, ${n.roleShown === "param" ? "a parameter" : "data"}` : ""}`;
        if (n.ariaShown !== label) { n.g.setAttribute("aria-label", label); n.ariaShown = label; }
      }
    }
  }

  // The node a step processed (and its op), the children that just got their grads, the edges
  // between them: the elements lit last time are unlit, not the whole graph searched.
  function highlight(state) {
    for (const [el, cls] of lit) el.classList.remove(cls);
    lit = [];
    const mark = (el, cls) => { if (el) { el.classList.add(cls); lit.push([el, cls]); } };
    markAsked(state, mark);
    if (!state.current) return;
    const op = state.current + "op";
    mark(nodeEl(state.current), "current");
    mark(nodeEl(op), "current");
    const touched = new Set(state.touched);
    for (const c of touched) mark(nodeEl(c), "touched");
    for (const p of edgesInto.get(op) || []) if (touched.has(p.dataset.from)) mark(p, "hot");
    for (const p of edgesOutOf.get(op) || []) mark(p, "hot");
  }

  // Predict each grad: the node whose grad is asked, and the parent whose step writes it (its op
  // and the edge between them).
  function markAsked(state, mark) {
    const ask = state.predict && state.predict.ask;
    if (!ask) return;
    mark(nodeEl(ask.node), "asked");
    if (!ask.parent) return;
    mark(nodeEl(ask.parent), "asked-parent");
    mark(nodeEl(ask.parent + "op"), "asked-parent");
    for (const p of edgesInto.get(ask.parent + "op") || []) if (p.dataset.from === ask.node) mark(p, "hot");
  }

  // Scroll the graph (not the page) so that the current node and the children that just got their
  // grads are in view (as many as fit, the current node first): on a phone the graph is wider than
  // the screen and the backward pass walks right to left.
  function reveal(els) {
    els = els.filter(Boolean);
    if (!els.length) return;
    const box = $("graph");
    const b = box.getBoundingClientRect();
    const r = els[0].getBoundingClientRect();
    let left = r.left, right = r.right, top = r.top, bottom = r.bottom;
    for (const el of els.slice(1)) {  // widen to each child while the whole still fits
      const c = el.getBoundingClientRect();
      const l = Math.min(left, c.left), rr = Math.max(right, c.right);
      const t = Math.min(top, c.top), bb = Math.max(bottom, c.bottom);
      if (rr - l <= b.width - 48) { left = l; right = rr; }
      if (bb - t <= b.height - 24) { top = t; bottom = bb; }
    }
    if (left < b.left) box.scrollLeft -= b.left - left + 24;
    else if (right > b.right) box.scrollLeft += right - b.right + 24;
    if (top < b.top) box.scrollTop -= b.top - top + 12;
    else if (bottom > b.bottom) box.scrollTop += bottom - b.bottom + 12;
  }

  // Scroll the page (a whole page only: never a notebook) so that `els` are in view, above the bar
  // of buttons where it sits at the bottom of the screen (a phone): what a tap changed is seen
  // without scrolling. A graph node counts only with the part the graph's frame shows of it. If
  // they cannot all be in view, the first is.
  function bringIntoView(els) {
    els = els.filter(Boolean);
    if (!opts.page || !els.length) return;
    const bar = $("pass-panel");
    const fixed = getComputedStyle(bar).position === "fixed";
    const top = 6, bottom = (fixed ? bar.getBoundingClientRect().top : window.innerHeight) - 6;
    const frame = $("graph").getBoundingClientRect();
    const spans = els.map((el) => {
      const r = el.getBoundingClientRect();
      if (!$("graph").contains(el)) return [r.top, r.bottom];
      return [Math.max(r.top, frame.top), Math.min(r.bottom, frame.bottom)];
    });
    let lo = Math.min(...spans.map((s) => s[0])), hi = Math.max(...spans.map((s) => s[1]));
    if (hi - lo > bottom - top) { lo = spans[0][0]; hi = Math.min(spans[0][1], lo + bottom - top); }
    let dy = 0;
    if (lo < top) dy = lo - top;
    else if (hi > bottom) dy = hi - bottom;
    if (dy) window.scrollBy(0, dy);
  }

  function currentScale() {
    const el = $("graph-svg");
    return el ? Number(el.dataset.scale) : 1;
  }

  function zoomBy(factor) {
    zoom = Math.max(0.25, Math.min(2, currentScale() * factor));
    applyZoom();
  }

  function fit() {
    zoom = null;
    applyZoom();
  }

  // the window changed size: a graph fitted to the width is fitted again
  function refit() {
    if (zoom === null) applyZoom();
  }

  return {
    draw, nodeEl, node: (id) => nodes.get(id), patchNodes, highlight, reveal, bringIntoView,
    zoomBy, fit, refit,
  };
}
