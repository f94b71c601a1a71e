// Shared by every playground view: number formatting, error display, and the transports.
//
// A view (explorer.js's mountExplorer, train.js's mountTrain) talks to Python through a
// transport, and never knows which one it has:
//   transport.call(view, action, body) -> Promise of the answer (a plain object); a refusal
//     rejects with an Error whose message is the view's one line;
//   transport.frames(onFrame, view) -> a function that stops the frames (the Train view's, or
//     the GPT view's: view "gpt");
//   transport.kind: "http" (the playground's server), "widget" (a notebook), "worker" (the
//     static site, micrograd on Pyodide in a Web Worker).
// The Python side of every transport calls the same view objects (micrograd/playground/views.py).
// An ES module: the pages, the other modules and the notebook widget import it.

const SESSION_KEY = "micrograd-session";
const WATCH_MS = 5000; // a view over messages says it is still there this often
export const POINT_KEY = "micrograd-train-point"; // the Train view's chosen point, on its way to the explorer

function sessionId() {
  let id = sessionStorage.getItem(SESSION_KEY);
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    sessionStorage.setItem(SESSION_KEY, id);
  }
  return id;
}

// The web server: POST api/<view>/<action> (relative: the page works under any path prefix,
// e.g. jupyter-server-proxy's /proxy/8000/), the session id in a header; frames by EventSource.
// Each answer says which views the server holds something of this tab's in (X-Playground-Holds):
// when a view's page holds what the server does not (the server was restarted, or forgot the tab
// among too many), `restorers[view](action)` gives the call that makes it again ({action, body}:
// the page's program, its settings; null if none), which goes first, then the call again.
export function httpTransport() {
  const session = sessionId();
  const restorers = {};
  return {
    kind: "http",
    restorers,
    async call(view, action, body, again = false) {
      const { response, answer } = await this.send(view, action, body);
      const holds = response.headers.get("X-Playground-Holds");
      const restore = !again && holds !== null && !holds.split(",").includes(view) && restorers[view];
      const redo = restore ? restore(action) : null;
      if (redo) {
        await this.call(view, redo.action, redo.body, true);
        return this.call(view, action, body, true);
      }
      if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
      return answer;
    },
    async send(view, action, body) {
      const init = { method: body === undefined ? "GET" : "POST", headers: { "X-Session": session } };
      if (body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      let response, text;
      try {
        response = await fetch(`api/${view}/${action}`, init);
        text = await response.text();
      } catch {
        throw new Error("the playground server is not answering (is it still running?)");
      }
      let answer;
      try {
        answer = JSON.parse(text);
      } catch { // not JSON (a proxy's page, a crash): say what came back, in one line
        throw new Error(`HTTP ${response.status}: the server's answer is not JSON (${text.slice(0, 80)})`);
      }
      return { response, answer };
    },
    frames(onFrame, view = "train") {
      const source = new EventSource(`api/${view}/stream?session=${encodeURIComponent(session)}`);
      source.onmessage = (ev) => onFrame(JSON.parse(ev.data));
      return () => source.close();
    },
  };
}

// A transport over messages (a notebook widget's, a Web Worker's): each call is
// {id, view, action, body}, answered by {id, answer} or {id, error}; {frame} comes unasked.
// `post(message)` sends; the returned `receive(message)` is to be called with every message that
// comes back. If `post` throws (a widget whose kernel restarted: "Cannot send"), the other side is
// gone: `lost(error)` says so in one line, and the transport fails with it.
export function messageTransport(kind, post, lost = (err) => err.message) {
  let next = 1;
  let failed = null; // the one line saying why the other side is gone, once it is
  const waiting = new Map();
  const listeners = new Set();
  const onFail = new Set();
  const send = (msg) => {
    if (failed) return false;
    try {
      post(msg);
      return true;
    } catch (err) {
      transport.fail(lost(err));
      return false;
    }
  };
  const transport = {
    kind,
    call(view, action, body) {
      const id = next++;
      return new Promise((resolve, reject) => {
        if (failed) { reject(new Error(failed)); return; }
        waiting.set(id, { resolve, reject });
        send({ id, view, action, body: body === undefined ? {} : body });
      });
    },
    frames(onFrame, view = "train") {
      listeners.add(onFrame);
      // "send me the frames" (from a whole one: this view has none yet), and again every few
      // seconds while the view is shown: the other side pauses a run nobody looks at any more (a
      // closed notebook tab never says goodbye)
      send({ frames: true, fresh: true, view });
      const alive = setInterval(() => { if (!send({ frames: true, view })) clearInterval(alive); }, WATCH_MS);
      return () => {
        clearInterval(alive);
        listeners.delete(onFrame);
        if (!listeners.size) send({ frames: false });
      };
    },
    // `fn(message)` once the other side is gone (at once if it is already)
    onFail(fn) {
      if (failed) fn(failed);
      else onFail.add(fn);
    },
    receive(msg) {
      if (msg.frame) {
        listeners.forEach((fn) => fn(msg.frame));
        return;
      }
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.error !== undefined) w.reject(new Error(msg.error));
      else w.resolve(msg.answer);
    },
    fail(message) { // the other side is gone: every call waiting, and every later one, gets the line
      if (failed) return;
      failed = message;
      for (const w of waiting.values()) w.reject(new Error(message));
      waiting.clear();
      onFail.forEach((fn) => fn(message));
      onFail.clear();
    },
  };
  return transport;
}

// A notebook widget (anywidget): the kernel answers through the widget's model.
export function widgetTransport(model) {
  const transport = messageTransport("widget", (msg) => model.send(msg), (err) =>
    `this widget lost its kernel (${err.message}: restarted, or shut down): run its cell again`);
  const onMessage = (msg) => transport.receive(msg);
  model.on("msg:custom", onMessage);
  transport.close = () => model.off("msg:custom", onMessage);
  return transport;
}

// The static site: micrograd itself runs in a Web Worker (static/worker.js, on Pyodide).
// `onProgress(text, fraction)` is told how the start-up goes.
export function workerTransport(onProgress) {
  if (typeof Worker === "undefined" || typeof WebAssembly === "undefined") {
    throw new Error("this page runs micrograd in your browser and needs WebAssembly and Web Workers, which this browser does not offer: try a current Firefox, Chrome, Edge or Safari");
  }
  const worker = new Worker("static/worker.js", { type: "module" }); // it imports Pyodide
  onProgress("Starting micrograd in your browser…", 0);
  const transport = messageTransport("worker", (msg) => worker.postMessage(msg));
  let ready = false, whenReady;
  // settled once Python answers: a view drawn from the snapshot is interactive only then
  transport.pythonReady = new Promise((resolve) => { whenReady = resolve; });
  worker.onmessage = (ev) => {
    const msg = ev.data;
    if (msg.progress !== undefined) {
      ready = msg.fraction === 1;
      onProgress(msg.progress, msg.fraction);
      if (ready) whenReady();
    }
    else if (msg.fatal !== undefined) { onProgress(msg.fatal, -1); transport.fail(msg.fatal); }
    else transport.receive(msg);
  };
  answerFromSnapshot(transport, () => ready);
  worker.onerror = (ev) => {
    ev.preventDefault();
    const message = ready
      ? `micrograd stopped in this browser (${ev.message || "the worker failed"}): reload the page to start again`
      : `micrograd could not start in this browser: ${ev.message || "the worker failed to load"}`;
    onProgress(message, -1);
    transport.fail(message);
  };
  return transport;
}

// Open fast: `micrograd site` bakes the answers to the first calls a fresh page makes
// (snapshot.json: the explorer's first graph, the Train view's untrained network). Until Python
// is ready, a call that is exactly the next baked one of its view is answered from it at once; every call
// still goes to Python (the worker keeps them until it is ready), so the view there reaches the
// same state, and its answer is checked against the baked one. The first call that is not baked
// (a link with other settings or another program) ends it: that one, and all after, wait for
// Python. `transport.snapshot` records the calls answered so ({view, action, same, taken}) for
// tests; `transport.onSnapshotDiffers(view, action, answer)`, if a view sets it, is told where
// Python's answer differs (true: the view took it in place of the baked one).
function answerFromSnapshot(transport, isReady) {
  const baked = fetch("snapshot.json").then((r) => {
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    return r.json();
  }).catch((err) => {
    console.error(`snapshot.json could not be read (${err.message}): the page waits for Python`);
    return [];
  });
  const toPython = transport.call;
  const key = (body) => JSON.stringify(body === undefined ? {} : body, (k, v) =>
    (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v));
  const next = {}; // a view's calls are baked in its order: the next one's index, by view
  let off = false, gone = false;
  transport.onFail(() => { gone = true; });
  transport.snapshot = [];
  transport.call = (view, action, body) => {
    const real = toPython(view, action, body);
    if (off || isReady()) { off = true; return real; }
    return baked.then((entries) => {
      const e = entries.filter((x) => x.view === view)[next[view] || 0];
      if (off || isReady() || !e || e.view !== view || e.action !== action || key(e.body) !== key(body)) {
        off = true;
        return real;
      }
      next[view] = (next[view] || 0) + 1;
      const record = { view, action, same: null };
      transport.snapshot.push(record);
      real.then((answer) => {
        record.same = JSON.stringify(answer) === JSON.stringify(e.answer);
        if (record.same) return;
        // the view may take Python's answer in its place (the Train view: moons' points, whose
        // last bit is the C library's sin and cos, glibc's at the build, musl's in the browser)
        record.taken = !!(transport.onSnapshotDiffers && transport.onSnapshotDiffers(view, action, answer));
        if (!record.taken) console.error(`the site's snapshot.json differs from Python's answer to ${view}/${action}: rebuild the site with this micrograd`);
      }, (err) => { // Python gone (the page says so already), or a refusal: a broken snapshot
        if (!gone) console.error(`Python refused the baked call ${view}/${action}: ${err.message}`);
      });
      return e.answer;
    });
  };
}

// The transport a page uses: its <meta name="micrograd-transport"> says ("worker" on the static
// site), the server otherwise.
export function pageTransport(onProgress) {
  const meta = document.querySelector('meta[name="micrograd-transport"]');
  return meta && meta.content === "worker" ? workerTransport(onProgress) : httpTransport();
}

// Show `message` in the element with id `errorId` under `root` (role=alert), or clear it.
export function showErrorIn(root, errorId, message) {
  const el = root.getElementById(errorId);
  if (!el) return;
  if (message && root.host && root.host.dataset.lost === message) return; // said above the view
  el.textContent = message || "";
  el.hidden = !message;
}

// A number the learner typed, as Python writes one: decimal ("2", "-0.5", "1e-3"). Returns it, or
// throws an Error saying what is wrong: never a hexadecimal or binary number read silently
// (JavaScript's Number("0x10") is 16), never "not a number" for one that is only too large.
export function parseNumber(text, what = "the value") {
  const t = String(text).trim();
  const other = /^[+-]?0([xob])([0-9a-f]+)$/i.exec(t);
  if (other) {
    const [kind, base] = { x: ["hexadecimal", 16], o: ["octal", 8], b: ["binary", 2] }[other[1].toLowerCase()];
    const value = parseInt(other[2], base) * (t.startsWith("-") ? -1 : 1);
    throw new Error(`${t} is a ${kind} number (${value} in decimal): write ${what} in decimal, like ${value} or 2.5`);
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) {
    throw new Error(`${what} must be a number, like 2.5 or -1e-3; got ${JSON.stringify(t)}`);
  }
  const x = Number(t);
  if (!Number.isFinite(x)) throw new Error(`${t} is too large: no number beyond about ±1.8e308 exists here`);
  return x;
}

// Disable (or enable) a control. If it has the keyboard's focus, the focus goes on to `next` (or
// the next enabled control of its group, else the previous), never to the page: a keyboard user
// who pressed Play lands on Pause.
export function setDisabled(root, el, disabled, next) {
  if (el.disabled === disabled) return;
  const focused = disabled && root.activeElement === el;
  el.disabled = disabled;
  if (!focused) return;
  const group = el.closest("[role=group], .buttons, form, .panel") || el.parentElement;
  const all = [...group.querySelectorAll("button, input, select, textarea")];
  const usable = (x) => x && !x.disabled && !x.hidden && x.getClientRects().length > 0;
  const i = all.indexOf(el);
  const after = all.slice(i + 1).find(usable), before = all.slice(0, i).reverse().find(usable);
  const target = [next, after, before].find(usable);
  if (target) target.focus();
}

// A run's buttons (the Train and GPT views'), built into the view's <div id="run-buttons">, each
// calling `control` with its action.
const RUN_BUTTONS = [
  ["play", "Play", ""],
  ["pause", "Pause", ""],
  ["step", "Step", ""],
  ["reset", "Reset", "Back to step 0 with the same initial weights"],
  ["new_weights", "New weights", "Back to step 0 with new random initial weights"],
];
export function runButtons(box, control) {
  for (const [action, text, title] of RUN_BUTTONS) {
    const b = Object.assign(document.createElement("button"), { type: "button", id: action.replace("_", "-"), textContent: text });
    if (title) b.title = title;
    if (action === "play") b.className = "primary";
    b.onclick = () => control(action);
    box.append(b);
  }
}

// A run's Play and Pause (the Train and GPT views'): while it plays only Pause can be pressed,
// else Play (unless the run stopped on an error); the focus goes from the one pressed to the other.
export function showPlaying(root, play, pause, playing, error) {
  if (playing) {
    setDisabled(root, pause, false);
    setDisabled(root, play, true, pause);
  } else {
    setDisabled(root, play, !!error);
    setDisabled(root, pause, true, play);
  }
}

// A number as micrograd shows it: micrograd/viz/formatting.py's format_number, mirrored exactly
// (tests/test_formatting.py runs both on the same numbers). 4 decimals as the lecture prints, never
// fewer than 4 significant digits, exponent form below 1e-4 and from 1e12 up; 'nan'/'inf' strings
// from the server as is.
export function fmt(x) {
  if (typeof x === "string") return x;
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const size = Math.abs(x);
  if (size === 0) return Object.is(x, -0) ? "-0.0000" : "0.0000";
  if (size >= 1e12 || size < 1e-4) return x.toExponential(4);
  return x.toFixed(size >= 0.1 ? 4 : size >= 0.01 ? 5 : size >= 0.001 ? 6 : 7);
}
