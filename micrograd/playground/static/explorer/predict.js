// Predict each grad: with the checkbox on, Backward step asks the learner for each grad the step
// writes ("your c.grad", the node and its parent lit in the graph) before it shows it. Python
// (micrograd/playground/explore/predict.py) keeps the questions, checks each answer and names the mistake
// its number suggests; this part of the explorer only shows what the view's answer says and sends
// what the learner does: predict {on}, answer {value}, hint, reveal (Show me).
// mountPredict(root, ctx) is called by mountExplorer with ctx = {send, update, focusNext}: it
// returns render(state), called with every answer.
import { parseNumber, setDisabled, showErrorIn } from "../common.js";

export function mountPredict(root, ctx) {
  const $ = (id) => root.getElementById(id);
  let asked = ""; // the question shown now (its node, its step): a new one clears and focuses the box

  // A refused input or action: its error replaces the line the last answer got (one line at a
  // time: "2,0" refused must not sit under the verdict on the 2 typed before)
  function refuse(message) {
    const feedback = $("predict-feedback");
    feedback.textContent = "";
    feedback.hidden = true;
    showErrorIn(root, "predict-error", message);
  }

  async function call(action, body, show = "none") {
    try {
      const state = await ctx.send(action, body, "predict-error");
      ctx.update(state, show);
      return state;
    } catch (err) {
      refuse(err.message);
      return null;
    }
  }

  $("predict").addEventListener("change", () => call("predict", { on: $("predict").checked }));
  $("predict-form").addEventListener("submit", (ev) => { ev.preventDefault(); check(); });
  // Enter checks even where the page around prevents a form's own Enter (JupyterLab's notebook)
  $("predict-value").addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || ev.isComposing) return;
    ev.preventDefault();
    ev.stopPropagation();
    check();
  });
  async function check() {
    let value;
    try {
      value = parseNumber($("predict-value").value, "your grad");
    } catch (err) {
      refuse(err.message);
      $("predict-value").focus();
      return;
    }
    const state = await call("answer", { value }, "pass");
    if (state && !state.predict.ask) ctx.focusNext(); // right, the step applied: on to the next
    else $("predict-value").select();
  }
  $("predict-hint").addEventListener("click", () => call("hint", {}));
  $("predict-show").addEventListener("click", async () => {
    if (await call("reveal", {}, "pass")) ctx.focusNext();
  });

  function render(state) {
    const p = state.predict;
    if (!p) return;
    $("predict").checked = p.on;
    const ask = p.ask;
    const form = $("predict-form");
    form.hidden = !ask;
    $("predict-score").textContent = p.score;
    $("predict-score").hidden = !p.on || !p.score;
    const feedback = $("predict-feedback");
    feedback.textContent = p.feedback ? p.feedback.text : "";
    feedback.className = p.feedback ? (p.feedback.right ? "right" : "wrong") : "";
    feedback.hidden = !p.feedback;
    if (!ask) { asked = ""; return; }
    $("predict-label").textContent = ask.label;
    $("predict-count").textContent = ask.of > 1 ? `(grad ${ask.index} of ${ask.of} this step)` : "";
    $("predict-tolerance").textContent = `Type it ${p.tolerance}, then Enter.`;
    const hints = $("predict-hints");
    hints.textContent = "";
    for (const line of ask.hint) {
      const li = document.createElement("li");
      li.textContent = line;
      hints.appendChild(li);
    }
    hints.hidden = !ask.hint.length;
    setDisabled(root, $("predict-hint"), ask.hint.length >= 2, $("predict-value"));
    const key = `${state.step}:${ask.node}:${ask.index}`;
    if (key !== asked) {
      asked = key;
      $("predict-value").value = "";
      showErrorIn(root, "predict-error", "");
      $("predict-value").focus({ preventScroll: true });
    }
  }

  return { render };
}
