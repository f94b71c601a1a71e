// The GPT view: Python trains microgpt's GPT (micrograd/gpt.py, as a Train run: gpt_view.py);
// this view only draws. mountGPT(root, transport, opts) builds it in `root` (the page's document,
// or a notebook widget's shadow root) over any transport (common.js). On a page (opts.page) the
// settings live in the URL (the pasted words in its fragment: the server never sees them); in a
// widget the view starts from the run Python already has. The settings' names, labels and ranges
// are Python's (the options' schema). Frames bring the step, the loss and its curve, the running
// mean, the samples, the attention of the chosen word and the characters' embeddings; a position
// of the word picked (its select, or a row's character) links to its loss in the explorer
// (gpt-loss.js), with the model's logits of the frame drawn. The Health panel is the Train
// view's (train-health.js, the same drawing): frames carry its numbers while it is open.

import { fmt, runButtons, showErrorIn, showPlaying } from "../common.js";
import { drawGptAttention, drawGptCurve, drawGptEmbedding, drawGptSamples } from "./gpt-draw.js";
import { explorerHref, lossProgram } from "./gpt-loss.js";
import { healthPart } from "../train/train-health.js";
import { readHash, readQuery, writeHashKey, writeQuery } from "../url-state.js";

export function mountGPT(root, transport, opts = {}) {
  const $ = (id) => root.getElementById(id);
  const showError = (message) => showErrorIn(root, "gpt-error", message);
  const view = { options: null, meta: null, frame: null, schema: [], curve: null, word: "", position: 0 };
  clearCurve();

  function clearCurve() { view.curve = { steps: [], lows: [], highs: [] }; }

  // ---- actions, one after another, in the order the learner made them
  let chain = Promise.resolve();
  async function post(action, body = {}) {
    const call = chain.then(() => transport.call("gpt", action, body));
    chain = call.then(() => undefined, () => undefined);
    const answer = await call; // a refusal rejects: the caller shows its one line
    showError("");
    show(answer);
    return answer;
  }
  const tell = (err) => showError(err.message);
  // (new weights: a new seed, which the URL keeps)
  runButtons($("run-buttons"), (action) => post("control", { action }).then(action === "new_weights" ? writeUrl : null).catch(tell));
  // the Health panel (train-health.js): the parts of the view it reads, and how it asks Python
  const health = healthPart({ $, view, post, showIn: () => tell });

  // A server that no longer holds this run (restarted, or it forgot the tab) is sent its settings
  if (transport.restorers) {
    transport.restorers.gpt = (action) =>
      view.meta && !["config", "options"].includes(action) ? { action: "config", body: view.meta.settings } : null;
  }

  function show(answer) {
    if (answer.meta) setMeta(answer.meta);
    if (answer.word !== undefined) setWord(answer.word);
    if (answer.frame) setFrame(answer.frame);
  }

  // ---- settings: Python's schema <-> the controls <-> the URL
  const numeric = (f) => f.kind === "int" || f.kind === "float";

  function settingsFromUrl() {
    const q = readQuery(opts.page), s = {};
    for (const f of view.schema) {
      if (f.name === "words") continue;
      if (q.has(f.name)) s[f.name] = numeric(f) ? asNumber(q.get(f.name)) : q.get(f.name);
    }
    const words = readHash(opts.page).get("words");
    if (words !== null) s.words = words;
    return s;
  }

  // A number as typed, or the text itself when it is none (Python then names it, in one line)
  function asNumber(text) {
    const t = String(text).trim();
    return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : t;
  }

  function controlsToSettings() {
    const s = {};
    for (const f of view.schema) {
      const el = $(f.name);
      if (el) s[f.name] = numeric(f) ? asNumber(el.value) : el.value;
    }
    if (s.data !== "own") s.words = view.meta ? view.meta.settings.words || "" : "";
    return s;
  }

  function settingsToControls(s) {
    for (const f of view.schema) {
      const el = $(f.name);
      if (el && s[f.name] !== undefined && !(f.name === "words" && root.activeElement === el)) el.value = s[f.name];
    }
    $("own-words").hidden = s.data !== "own";
  }

  function writeUrl() {
    if (!opts.page || !view.meta) return;
    const s = view.meta.settings, q = new URLSearchParams();
    for (const f of view.schema) {
      if (f.name !== "words" && s[f.name] !== undefined && s[f.name] !== f.default) q.set(f.name, s[f.name]);
    }
    if (view.word) q.set("word", view.word);
    writeQuery(opts.page, q.toString());
    writeHashKey(opts.page, "words", s.data === "own" ? s.words : null);
  }

  async function configure(settings) {
    try {
      await post("config", settings);
      writeUrl();
    } catch (err) {
      tell(err);
      if (view.meta) { // the run goes on as it was, and the note says so
        settingsToControls(view.meta.settings);
        $("model-note").textContent = `${modelNote(view.meta)} (still the run's: the change above was refused)`;
      }
    }
  }

  // ---- what Python sends
  function setMeta(meta) {
    const changed = !view.meta || view.meta.config_id !== meta.config_id;
    view.meta = meta;
    settingsToControls(meta.settings);
    $("change-note").textContent = meta.change || "";
    $("model-note").textContent = modelNote(meta);
    // makemore's names unavailable: said above, until the learner trains on words of their own
    $("names-note").hidden = !(view.options && view.options.names) || meta.settings.data === "own";
    if (changed) {
      clearCurve();
      view.frame = null;
    }
  }

  function modelNote(meta) {
    return `${meta.params} parameters; ${meta.words} words; characters: ${meta.vocab}`;
  }

  // Steps a second while it plays: the steps between frames over the time between them, the
  // last two seconds' worth
  function noteRate(f) {
    const now = performance.now(), seen = view.rates || (view.rates = []);
    if (!f.playing) { view.rates = []; return; }
    if (seen.length && f.step < seen[seen.length - 1][1]) seen.length = 0; // reset: anew
    seen.push([now, f.step]);
    while (seen.length > 2 && now - seen[0][0] > 2000) seen.shift();
    const [t0, s0] = seen[0];
    if (now - t0 >= 250 && f.step > s0) {
      const rate = (f.step - s0) / ((now - t0) / 1000);
      $("rate-text").textContent = `${rate >= 100 ? Math.round(rate).toLocaleString("en-US") : rate.toPrecision(2)} steps/s`;
      $("rate-text").dataset.rate = rate;
    }
  }

  function setWord(word) {
    view.word = word;
    if (root.activeElement !== $("word")) $("word").value = word;
  }

  function setFrame(f) {
    if (!view.meta || f.config_id !== view.meta.config_id) return; // a frame of a previous setup
    if (view.frame && f.seq < view.frame.seq) return; // late
    if (f.history_reset || f.step === 0) clearCurve();
    const c = view.curve;
    for (const [k, lo, hi] of f.history || []) { // [first step, lowest, highest]: the last one again if it grew
      const n = c.steps.length;
      if (n && k < c.steps[n - 1]) continue;
      if (n && k === c.steps[n - 1]) { c.lows[n - 1] = lo; c.highs[n - 1] = hi; continue; }
      c.steps.push(k); c.lows.push(lo); c.highs.push(hi);
    }
    view.frame = f;
    // a frame's pictures, kept until drawn (a frame after it, drawn at the same refresh, has none)
    if (f.samples || f.attention || f.embedding) view.pictures = f;
    $("step-count").textContent = `step ${f.step}`;
    $("loss-text").textContent = f.loss == null ? "loss –" : `loss ${fmt(f.loss)}`;
    $("mean-text").textContent = f.mean == null ? "mean –" : `mean ${fmt(f.mean)}`;
    noteRate(f);
    const limit = view.meta.settings.steps;
    $("run-state").textContent = f.playing ? "playing" : f.error ? "stopped"
      : f.step >= limit ? `done: step ${f.step} of ${limit}` : "paused";
    showPlaying(root, $("play"), $("pause"), f.playing, f.error);
    if (f.error) showError(f.error);
    if (!view.drawPending) { // once per screen refresh, the newest frame
      view.drawPending = true;
      requestAnimationFrame(draw);
    }
  }

  function draw() {
    view.drawPending = false;
    const f = view.frame;
    if (!f) return;
    drawGptCurve($("curve"), view.curve, f.means || []);
    health.drawHealth();
    view.drawn = (view.drawn || 0) + 1;
    $("step-count").dataset.drawn = view.drawn; // frames drawn, where a test reads it
    $("step-count").dataset.step = f.step;
    const p = view.pictures; // (drawn when new: most frames carry the loss alone)
    view.pictures = null;
    if (!p) return;
    if (p.samples) drawGptSamples($("samples"), p.samples, p.new || []);
    if (p.attention) {
      drawGptAttention($("attention"), p.attention, (text) => { $("attn-tip").textContent = text; });
      $("attention").dataset.word = p.attention.word;
      view.shown = p.attention; // (the position picked reads it)
      showLoss(p.attention);
    }
    if (p.embedding) drawGptEmbedding($("embedding"), p.embedding);
    const picks = new Set([...(view.options ? view.options.builtin : []), ...(p.samples || [])]);
    $("word-picks").replaceChildren(...[...picks].filter(Boolean).slice(0, 40).map((w) => Object.assign(document.createElement("option"), { value: w })));
  }

  // ---- a position's loss, for the explorer: its select, its row marked, the link and the program
  function showLoss(a) {
    if (!a.logits) return;
    const n = a.logits.length, bos = a.vocab.length - 1, select = $("loss-pos");
    view.position = Math.min(view.position, n - 1);
    const texts = a.targets.map((t, i) => `${i}: ${a.labels.slice(0, i + 1).join("")} → ${t === bos ? ". (the end)" : a.vocab[t]}`);
    if ([...select.options].map((o) => o.textContent).join("\n") !== texts.join("\n")) {
      select.replaceChildren(...texts.map((text, i) => Object.assign(document.createElement("option"), { value: i, textContent: text })));
    }
    select.value = String(view.position);
    root.querySelectorAll("#attention tr[data-row]").forEach((tr) => tr.classList.toggle("picked", Number(tr.dataset.row) === view.position));
    const link = $("open-loss");
    try {
      const program = lossProgram(a, view.position);
      link.href = explorerHref(program);
      link.removeAttribute("aria-disabled");
      if ($("loss-program").value !== program) $("loss-program").value = program;
    } catch (err) { // a diverged model's logits: no loss to step through, and why
      link.removeAttribute("href");
      link.setAttribute("aria-disabled", "true");
      $("loss-program").value = "";
      showError(err.message);
    }
  }

  function pickPosition(i) {
    view.position = i;
    if (view.shown) showLoss(view.shown);
  }

  // ---- frames, whole again from what changed (a GPT frame has none of the MLP's parts)
  function connect() {
    if (view.stopFrames) view.stopFrames();
    view.stopFrames = transport.frames((f) => { if (f.type === "frame") setFrame(f); }, "gpt");
  }

  async function chooseWord(word) {
    try {
      await post("attention", { word });
      writeUrl();
    } catch (err) {
      tell(err);
    }
  }

  // ---- start
  async function start() {
    view.options = await transport.call("gpt", "options", {});
    const o = view.options;
    view.schema = o.schema;
    for (const f of o.schema) {
      const el = $(f.name);
      if (!el) continue;
      if (f.kind === "choice") {
        el.replaceChildren(...f.choices.map(([k, text]) => Object.assign(document.createElement("option"), { value: k, textContent: text })));
      }
      if (numeric(f)) el.title = `${f.label}: ${f.kind === "int" ? "a whole number" : "a number"} from ${f.min} to ${f.max}`;
    }
    $("words-limit").textContent = `(at most ${o.limits.words} words of 1 to ${o.limits.chars} letters, digits or - ' .)`;
    $("names-note").textContent = o.names || "";
    $("names-note").hidden = !o.names;
    for (const f of o.schema) {
      const el = $(f.name);
      if (el && f.name !== "words") el.addEventListener("change", () => {
        if (f.name === "data" && el.value === "own") { // the words first: shown, then used
          $("own-words").hidden = false;
          if (!$("words").value.trim()) { $("words").value = o.builtin.join("\n"); }
          $("words").focus();
          return;
        }
        configure(controlsToSettings());
      });
    }
    $("use-words").onclick = () => configure({ ...controlsToSettings(), data: "own", words: $("words").value });
    $("word-form").addEventListener("submit", (ev) => { ev.preventDefault(); chooseWord($("word").value.trim()); });
    $("loss-pos").addEventListener("change", () => pickPosition(Number($("loss-pos").value)));
    $("attention").addEventListener("click", (ev) => { // a row's character: that position
      const th = ev.target.closest("tr[data-row] > th");
      if (th) pickPosition(Number(th.parentElement.dataset.row));
    });
    if (!opts.page) { // a notebook has no explorer page beside it: the program, and where it goes
      $("open-loss").hidden = true;
      $("loss-where").textContent = "In a notebook: explore(parse_program(text)['L']), explore from micrograd.widgets and parse_program from micrograd.expr; or paste it into the Expression box of micrograd playground's explorer.";
    }
    $("samples").addEventListener("click", (ev) => {
      const li = ev.target.closest("li");
      if (li && li.dataset.sample) { $("word").value = li.dataset.sample; chooseWord(li.dataset.sample); }
    });

    if (opts.start === "current") {
      await post("state", {});
    } else {
      const wanted = settingsFromUrl();
      try {
        await post("config", wanted);
      } catch (err) { // a link Python refuses: said in one line, and the defaults stand in
        await post("config", {});
        tell(err);
      }
      const word = readQuery(opts.page).get("word");
      if (word && word !== view.word) await post("attention", { word }).catch(tell);
      writeUrl();
    }
    connect();
    (root.host || document.body).dataset.ready = "1"; // (a test waits for it in a notebook)
  }

  const handle = { // for tests and the curious (window.gptView on a page)
    meta: () => view.meta,
    frame: () => view.frame,
    curve: () => view.curve,
    drawn: () => view.drawn || 0,
    call: (action, body) => post(action, body),
  };
  start().catch(tell);
  return { handle, stop() { if (view.stopFrames) view.stopFrames(); $("run-state").textContent = "stopped"; } };
}
