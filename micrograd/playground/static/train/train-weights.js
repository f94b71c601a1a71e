// The Train view's links and bias squares, read and set: hover one (or go through them by
// keyboard) to read its value and gradient, exact, as Python sends them each frame; click one (or
// press Enter) for an editor beside it.

import { fmt, parseNumber } from "../common.js";
import { BIAS } from "./train-net.js";

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function weightsPart(ui) {
  const { root, $, view, showError } = ui;

  // The parameter whose numbers the page reads: the one being edited, else the one the keyboard
  // chose (while the links have the focus), else the one under the pointer; [l, j, i] or null.
  function currentItem() {
    if (view.editing) return view.editing;
    if (view.focusItem && root.activeElement === $("net-links")) return view.focusItem;
    return view.hoverItem || null;
  }

  function sameItem(a, b) {
    return !!a && !!b && a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
  }

  function itemName([l, j, i]) {
    return i == null ? `b (layer ${l + 1}, neuron ${j + 1})` : `w (layer ${l + 1}, neuron ${j + 1}, input ${i + 1})`;
  }

  // Ask Python for the exact numbers of the parameter now read (each frame then carries them).
  function syncRead() {
    const item = currentItem();
    if (sameItem(item, view.readItem) || (!item && !view.readItem)) { showTip(); return; }
    view.readItem = item;
    view.read = null;
    showTip();
    if (view.frame) ui.drawLinks(view.frame);
    ui.postView({ read: item });
  }

  function setRead(r) {
    if (!r || !sameItem([r.layer, r.neuron, r.input], view.readItem)) return;
    view.read = r;
    if (view.editFill && sameItem(view.editing, view.readItem)) { // the editor's starting value
      view.editFill = false;
      $("weight-value").value = typeof r.value === "number" ? String(r.value) : "";
      $("weight-value").select();
    }
    showTip();
  }

  // The tooltip of the parameter read: its value and its gradient, exact, as each frame brings them.
  function showTip() {
    const tip = $("net-tip"), item = view.readItem;
    const r = view.read, d = item && item[2] == null ? "∂L/∂b" : "∂L/∂w";
    const num = (v) => (v == null ? "…" : fmt(v));
    const when = view.frame && view.frame.step === 0 ? " (no step yet)" : "";
    // the editor says the gradient too (a phone has no hover to read it by)
    const said = view.editing && r ? `${d} = ${num(r.grad)}${when}` : "";
    if ($("weight-grad").textContent !== said) { $("weight-grad").textContent = said; placeEditor(); }
    if (!item || view.editing) { tip.hidden = true; return; }
    tip.textContent = `${itemName(item)} = ${num(r && r.value)} · ${d} = ${num(r && r.grad)}${when}`;
    tip.hidden = false;
    const [x, y] = itemCentre(item);
    tip.style.left = `${Math.max(0, Math.min(x - 60, view.net.W - tip.offsetWidth))}px`;
    tip.style.top = `${Math.min(y + 10, view.net.H - 4)}px`;
  }

  // A link's middle, or a bias square's centre, in CSS pixels of the network's panel.
  function itemCentre([l, j, i]) {
    if (i == null) { const [x, y] = view.biases[l][j]; return [x + BIAS / 2, y + BIAS / 2]; }
    const [x1, y1, x2, y2] = view.links[l][j][i];
    return [(x1 + x2) / 2, (y1 + y2) / 2];
  }

  function linkEnds(l, j, i) { // for tests: where a link or bias is, in the page's coordinates
    const r = $("net-links").getBoundingClientRect(), [x, y] = itemCentre([l, j, i]);
    return { x: r.left + x, y: r.top + y };
  }

  // The bias square or the link nearest the pointer (within a few pixels): [layer, neuron, input
  // or null], or null.
  function itemAt(x, y) {
    let best = null, bestD = 5;
    view.biases.forEach((layer, l) => layer.forEach(([bx, by], j) => {
      if (x >= bx - 2 && x <= bx + BIAS + 2 && y >= by - 2 && y <= by + BIAS + 2) { best = [l, j, null]; bestD = 0; }
    }));
    if (best) return best;
    view.links.forEach((layer, l) => layer.forEach((neuron, j) => neuron.forEach(([x1, y1, x2, y2], i) => {
      const dx = x2 - x1, dy = y2 - y1, t = Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy || 1)));
      const d = Math.hypot(x - (x1 + t * dx), y - (y1 + t * dy));
      if (d < bestD) { bestD = d; best = [l, j, i]; }
    })));
    return best;
  }

  function pointerItem(ev) {
    const r = $("net-links").getBoundingClientRect();
    return view.frame && view.links ? itemAt(ev.clientX - r.left, ev.clientY - r.top) : null;
  }

  function onLinkHover(ev) {
    const item = pointerItem(ev);
    if (sameItem(item, view.hoverItem) || (!item && !view.hoverItem)) return;
    view.hoverItem = item;
    $("net-links").style.cursor = item ? "pointer" : "default";
    syncRead();
  }

  // The links by keyboard: Up and Down go through a neuron's inputs and then its bias (and on to
  // the next neuron), Left and Right to the neuron above or below, Page Up and Page Down to the
  // layer before or after; Enter sets the one chosen.
  function onLinkKey(ev) {
    const sizes = view.meta.sizes, layers = sizes.length - 1;
    let [l, j, i] = view.focusItem || [0, 0, 0];
    const slot = (k) => (k === sizes[l] ? null : k); // past the last input: the bias
    let k = i == null ? sizes[l] : i;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      k += ev.key === "ArrowDown" ? 1 : -1;
      if (k > sizes[l]) { k = 0; j = (j + 1) % sizes[l + 1]; }
      if (k < 0) { j = (j - 1 + sizes[l + 1]) % sizes[l + 1]; k = sizes[l]; }
    } else if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      j = (j + (ev.key === "ArrowRight" ? 1 : sizes[l + 1] - 1)) % sizes[l + 1];
    } else if (ev.key === "PageDown" || ev.key === "PageUp") {
      l = (l + (ev.key === "PageDown" ? 1 : layers - 1)) % layers;
      j = Math.min(j, sizes[l + 1] - 1);
      k = Math.min(k, sizes[l]);
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      if (view.focusItem) openEditor(view.focusItem, true);
      return;
    } else {
      return;
    }
    ev.preventDefault();
    i = slot(k);
    view.focusItem = [l, j, i];
    syncRead();
  }

  function onLinkFocus() {
    if (!view.focusItem) view.focusItem = [0, 0, 0];
    syncRead();
  }

  // Click a link or a bias: an editor for it, beside it.
  function onLinkClick(ev) {
    const item = pointerItem(ev);
    if (item) openEditor(item, false);
  }

  function openEditor(item, fromKeyboard) {
    view.editing = item;
    view.editFromKeyboard = fromKeyboard;
    const form = $("weight-form");
    $("weight-label").textContent = itemName(item);
    $("weight-value").value = "";
    form.hidden = false;
    placeEditor();
    showError("weight-error", "");
    $("weight-value").focus();
    view.editFill = true; // the exact value goes in the box when Python sends it
    syncRead();
    if (view.read) setRead(view.read);
  }

  // The editor beside the parameter it edits, inside the network's panel.
  function placeEditor() {
    const form = $("weight-form");
    if (form.hidden || !view.editing) return;
    const [x, y] = itemCentre(view.editing);
    form.style.left = `${Math.max(0, Math.min(x - 40, view.net.W - form.offsetWidth))}px`;
    form.style.top = `${y + 8}px`;
  }

  function closeWeight() {
    const wasKeyboard = view.editing && view.editFromKeyboard;
    $("weight-form").hidden = true;
    showError("weight-error", "");
    view.editing = null;
    if (wasKeyboard) $("net-links").focus(); // back where the keyboard was
    if (view.links) syncRead();
  }

  async function setWeight(ev) {
    ev.preventDefault();
    const [layer, neuron, input] = view.editing;
    let value;
    try {
      value = parseNumber($("weight-value").value, input == null ? "a bias" : "a weight");
    } catch (err) {
      showError("weight-error", err.message);
      return;
    }
    try {
      if (input == null) await ui.post("bias", { layer, neuron, value });
      else await ui.post("weight", { layer, neuron, input, value });
      closeWeight();
    } catch (err) {
      showError("weight-error", err.message);
    }
  }


  return { currentItem, syncRead, setRead, closeWeight, linkEnds, onLinkHover, onLinkKey, onLinkFocus, onLinkClick, setWeight };
}
