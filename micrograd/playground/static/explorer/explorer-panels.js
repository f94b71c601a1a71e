// The explorer's panels beside the graph, each drawn from the view's answer: the chain-rule log
// (grown by the new entries only), the status line and which buttons can be pressed, the verdict
// on a learner's own Value, the nudge, the notice on a point whose loss is 0, and the open leaf's
// parameter-or-data switch. A part of mountExplorer (explorer.js), over its `ui`: root, $, and
// graph (explorer-drawing.js: a node's name and whether it can be switched).
import { setDisabled } from "../common.js";

export function panelsPart(ui) {
  const { root, $ } = ui;
  const logShown = { count: 0, first: "", last: "" }; // what the log's list holds

  function logItem(entry) {
    const li = document.createElement("li");
    for (const line of entry.lines) {
      const div = document.createElement("div");
      div.textContent = line;
      if (line.startsWith("✗")) div.className = "wrong-line"; // a learner's rule, found wrong
      li.appendChild(div);
    }
    if (entry.source) {  // the op's own code in engine.py: what computed these numbers
      const src = entry.source;
      const details = document.createElement("details");
      details.className = "src";
      const summary = document.createElement("summary");
      summary.textContent = `the code: ${src.file}, lines ${src.first}–${src.last}`;
      const pre = document.createElement("pre");
      pre.textContent = src.code;
      details.append(summary, pre);
      li.appendChild(details);
    }
    return li;
  }

  // The log grows by one entry a step: only the new entries are added (a whole new log, after a
  // Reset, an edit or a new graph, is drawn again).
  function renderLog(state) {
    const log = $("log");
    const entries = state.log;
    const key = (e) => e.lines.join("\n");
    const n = logShown.count;
    const same = n > 0 && entries.length >= n && key(entries[0]) === logShown.first &&
      key(entries[n - 1]) === logShown.last;
    if (!same) {
      log.textContent = "";
      logShown.count = 0;
    }
    if (entries.length !== logShown.count) {
      log.lastElementChild?.classList.remove("latest");
      for (let i = logShown.count; i < entries.length; i++) log.appendChild(logItem(entries[i]));
      log.lastElementChild?.classList.add("latest");
      log.scrollTop = log.scrollHeight;  // the latest step in view (the log scrolls, not the page)
    }
    logShown.count = entries.length;
    logShown.first = entries.length ? key(entries[0]) : "";
    logShown.last = entries.length ? key(entries[entries.length - 1]) : "";
    $("log-empty").hidden = entries.length > 0;
  }

  function renderStatus(state) {
    let text;
    if (state.phase === "built") text = "Graph built. Inputs are known; run the forward pass to compute every node's data (a backward button runs it first).";
    else if (state.phase === "forward") text = `Forward pass done: ${state.forward_order.length} nodes, in topological order. Now step backward.`;
    else if (state.phase === "backward") text = `Backward step ${state.step} of ${state.steps}.`;
    else if (state.own_value) text = `Backward pass done (${state.steps} steps): every grad is what your _backward() of each node gave.`;
    else text = `Backward pass done (${state.steps} steps): every grad is what backward() gives.`;
    const ask = state.predict && state.predict.ask;
    if (ask) text = `Predict ${ask.name}.grad before the step writes it (Hint helps; Show me applies the step).`;
    // a learner's own Value: its numbers are changed in the notebook, not here
    $("descend-panel").hidden = !!state.own_value;
    $("status").textContent = state.note || text;
    // Enabled first, then disabled: the keyboard's focus moves on to a button that can be pressed
    setDisabled(root, $("forward"), state.phase !== "built", $("step"));
    setDisabled(root, $("step"), state.phase === "done", $("reset"));
    setDisabled(root, $("backward"), state.phase === "done", $("reset"));
    // Backward before Forward is allowed, and says what it does: backward() needs every data.
    const first = state.phase === "built" ? " (runs the forward pass first)" : "";
    $("step").title = `One step of the backward pass${first}`;
    $("backward").title = `The whole backward pass${first}`;
  }

  function renderNudge(state) {
    const box = $("nudge");
    const n = state.nudge;
    box.hidden = !n;
    box.textContent = "";
    if (!n) return;
    const a = document.createElement("div");
    a.textContent = n.text;
    box.appendChild(a);
    if (n.compare) {
      const b = document.createElement("div");
      b.className = "compare";
      b.textContent = n.compare;
      box.appendChild(b);
    }
    if (n.why) { // an h other than the lecture's, or a nudge that cannot see the slope: why
      const c = document.createElement("div");
      c.className = "why";
      c.textContent = n.why;
      box.appendChild(c);
    }
  }

  // What to know about this graph before stepping through it: a point whose loss is 0 (why every
  // grad is 0), and the nearest point whose loss is not, one click away.
  function renderNotice(state, trainPoint) {
    const n = state.notice;
    $("notice").hidden = !n;
    if (!n) return;
    $("notice-text").textContent = n.text;
    $("notice-offer-text").hidden = $("notice-offer").hidden = !n.offer || !trainPoint;
    if (n.offer) {
      $("notice-offer-text").textContent = n.offer.text;
      $("notice-offer").textContent = n.offer.button;
    }
  }

  // The open leaf's editor says what the leaf is, and switches it (a program's leaf: its marker is
  // written into the program).
  function renderLeafRole(state, selectedLeaf) {
    const n = selectedLeaf ? ui.graph.node(selectedLeaf) : null;
    const box = $("leaf-role"), note = $("leaf-role-note");
    if (!n) { box.hidden = note.hidden = true; return; }
    box.hidden = !n.switchable;
    $("leaf-param").checked = (state.params || []).includes(selectedLeaf);
    note.hidden = n.switchable || !!state.own_value;
    note.textContent = n.switchable ? "" : `${n.name} is a number written inside the expression: a constant, which a Gradient step never moves (give it a name, k = ${state.values[selectedLeaf].data}, to make it a parameter).`;
  }

  // What a check of a learner's own Value found (nothing for micrograd's own).
  function renderVerdict(state) {
    $("verdict").textContent = state.verdict || "";
    $("verdict").hidden = !state.verdict;
    $("verdict").classList.toggle("bad", /marked red/.test(state.verdict || ""));
  }

  return {
    renderLog, renderStatus, renderNudge, renderNotice, renderLeafRole, renderVerdict,
    newGraph() { logShown.count = 0; }, // a new graph: its log from the start
  };
}
