// The Train view's chosen point: its computation graph through micrograd (forward and backward,
// every frame's numbers on the nodes laid out once per network).

import { fmt } from "../common.js";

// The graph at its natural size (11 px text), or a little smaller when that makes it fit the
// panel (the loss, at its right end, then in view at 1280 wide); never below 85% (9 px text): a
// wider graph, and any on a phone, scrolls in its panel instead.
const GRAPH_MIN_SCALE = 0.85;

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function graphPart(ui) {
  const { $, view } = ui;

  function fitGraph() {
    if (!view.graphSize) return;
    const svg = $("graph"), [W, H] = view.graphSize;
    const room = svg.parentElement.clientWidth;
    const fit = room > 0 ? room / W : 1;
    const scale = fit >= 1 || fit < GRAPH_MIN_SCALE ? 1 : fit;
    svg.setAttribute("width", Math.floor(W * scale));
    svg.setAttribute("height", Math.floor(H * scale));
  }

  function buildGraph(graph) {
    const svg = $("graph"), ns = "http://www.w3.org/2000/svg";
    svg.textContent = "";
    const [w, h] = graph.box, pad = 6;
    svg.setAttribute("viewBox", `${-pad} ${-pad} ${graph.width + 2 * pad} ${graph.height + 2 * pad}`);
    view.graphSize = [graph.width + 2 * pad, graph.height + 2 * pad];
    fitGraph();
    const edges = document.createElementNS(ns, "g");
    edges.setAttribute("class", "edges");
    svg.append(edges);
    graph.nodes.forEach((node, i) => node.children.forEach((c) => {
      const [x1, y1] = graph.pos[c], [x2, y2] = graph.pos[i];
      const p = document.createElementNS(ns, "path");
      const mx = (x1 + w + x2) / 2;
      p.setAttribute("d", `M${x1 + w},${y1 + h / 2} C${mx},${y1 + h / 2} ${mx},${y2 + h / 2} ${x2},${y2 + h / 2}`);
      edges.append(p);
    }));
    view.gnodes = graph.nodes.map((node, i) => {
      const [x, y] = graph.pos[i];
      const g = document.createElementNS(ns, "g");
      g.setAttribute("class", `gnode${node.label === "loss" ? " loss" : ""}${node.op ? "" : " leaf"}`);
      g.setAttribute("transform", `translate(${x},${y})`);
      g.dataset.label = node.label;
      const r = document.createElementNS(ns, "rect");
      r.setAttribute("width", w); r.setAttribute("height", h); r.setAttribute("rx", 5);
      const t = (cls, ty, text) => {
        const e = document.createElementNS(ns, "text");
        e.setAttribute("x", 6); e.setAttribute("y", ty); e.setAttribute("class", cls);
        e.textContent = text;
        g.append(e);
        return e;
      };
      g.append(r);
      t("gname", 13, `${node.label || ""}${node.op ? (node.label ? "  " : "") + node.op : ""}`);
      const d = t("gdata", 27, "data");
      const gr = t("ggrad", 41, "grad");
      svg.append(g);
      return { d, gr };
    });
    const p = view.meta.points[view.meta.pick];
    // the last number is the point's class, or on a regression set its target
    const y = p && (view.meta.classes ? `class ${p[p.length - 1]}` : `target ${fmt(p[p.length - 1])}`);
    $("graph-point").textContent = p ? `(point ${view.meta.pick}: x = ${p.slice(0, -1).map(fmt).join(", ")}, ${y})` : "";
  }

  function drawGraphNumbers() {
    const f = view.frame;
    if (!f || !view.gnodes || !f.graph) return;
    // null: NaN; none at all: the forward pass failed (diverged weights, the note says so)
    const shown = (x) => x === undefined ? "–" : x == null ? "nan" : fmt(x);
    view.gnodes.forEach((n, i) => {
      n.d.textContent = `data ${shown(f.graph.data[i])}`;
      n.gr.textContent = `grad ${shown(f.graph.grad[i])}`;
    });
    $("graph-note").textContent = f.graph.note || "";
    $("graph-note").hidden = !f.graph.note;
  }


  return { fitGraph, buildGraph, drawGraphNumbers };
}
