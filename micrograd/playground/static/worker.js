// The static site's Web Worker: micrograd itself, on CPython in WebAssembly (Pyodide), answering
// the page (`micrograd site` writes the site; common.js's workerTransport starts this as a module
// worker). Everything comes from the site's own folder, by relative URLs: Pyodide's files from
// ../pyodide/, micrograd from the wheel site.json names. Python's side is
// micrograd/playground/serving/worker.py (`Host`): the same view objects as the server's and the widget's.
//
// Messages: the page's {id, view, action, body} and {frames} go to Host.receive, and what it
// returns is posted back; while the Train view plays, a timer trains it in short slices (a
// worker has no threads), posting each frame, with the page's messages let in between. Start-up
// is told as {progress, fraction} (1: ready), a failure as {fatal: "one line"}; messages that come
// before Python is ready wait for it.

import { loadPyodide } from "../pyodide/pyodide.mjs";

const SLICE = 0.03; // seconds of training before the page's messages get a turn (a frame is a turn of its own)
const queue = [];
let host = null; // the Python Host, once ready
let dead = false; // Python failed: nothing is answered any more (the page was told)
let timer = null;
const soon = new MessageChannel(); // "at once, after what is waiting": setTimeout(0) waits 4 ms
soon.port1.onmessage = () => tick();

// micrograd.jit's JavaScript target (micrograd/jit/js_target.py): Python hands over the source of a
// training step (once per network shape), and calls it with JSON text; the steps run here, with
// no Python per step.
self.micrograd_compile = (source) => {
  const step = new Function(source)();
  return (method, text) => JSON.stringify(step[method](JSON.parse(text)));
};

// Whether Python has work waiting (a playing run, or a waiting GPT run's word lengths still to
// trace: worker.py's Host.due_in): a benchmark waits for false before it times Play.
self.micrograd_busy = () => Boolean(host) && host.due_in() >= 0;

const progress = (text, fraction) => postMessage({ progress: text, fraction });
const postAll = (text) => { for (const msg of JSON.parse(text)) postMessage(msg); };
// An error's last line: a Python traceback ends with what went wrong
const lastLine = (err) => (err && err.message ? err.message : String(err)).split("\n").filter(Boolean).pop();

self.onmessage = (ev) => {
  if (dead) return;
  queue.push(ev.data);
  if (host) drain();
};

function drain() {
  try {
    while (queue.length) postAll(host.receive(JSON.stringify(queue.shift())));
  } catch (err) { // Python itself failed (Pyodide's stack ran out, say): nothing more is trusted
    die(err);
    return;
  }
  schedule();
}

// Python can no longer be trusted to answer (a fatal error of Pyodide's, a bug of ours): the page
// says so in one line, and every later message is left unanswered by a Python that is gone.
function die(err) {
  dead = true;
  host = null;
  queue.length = 0;
  postMessage({ fatal: `micrograd stopped in this browser (${lastLine(err)}): reload the page to start again` });
}

// Train again when the Train view has work: at once (after the page's messages, if any), or
// when a slowed-down run's next step is due; not at all while it is paused.
function schedule() {
  if (timer !== null) return;
  const wait = host.due_in();
  if (wait < 0) return;
  if (wait === 0) {
    timer = true;
    soon.port2.postMessage(null);
  } else {
    timer = setTimeout(tick, wait * 1000);
  }
}

function tick() {
  timer = null;
  if (!host) return;
  try {
    postAll(host.advance(SLICE));
  } catch (err) { // a bug of ours: the page says it in one line
    die(err);
    return;
  }
  schedule();
}

async function fetchOk(url, base) {
  const name = url.href.slice(base.href.length); // the file's path in the site's folder
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`${name} could not be loaded (${err.message})`);
  }
  if (!response.ok) throw new Error(`${name} could not be loaded (HTTP ${response.status})`);
  return response;
}

// Python as the build saved it, micrograd imported (site.py's python_memory): restored in a
// fraction of a fresh start's time. Where that cannot be done (no DecompressionStream, a site
// built without Node.js, a restore that fails) Python starts afresh, and the page says why.
async function startPython(site, base) {
  const indexURL = new URL("pyodide/", base).href;
  if (!site.memory) return loadPyodide({ indexURL });
  let why;
  if (typeof DecompressionStream !== "function") {
    why = "this browser cannot unpack it";
  } else {
    try {
      const packed = await fetchOk(new URL(site.memory, base), base);
      const memory = await new Response(packed.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
      return await loadPyodide({ indexURL, _loadSnapshot: new Uint8Array(memory) });
    } catch (err) {
      why = lastLine(err);
    }
  }
  console.warn(`micrograd: Python starts afresh, its saved start could not be used: ${why}`);
  progress(`Starting Python afresh (its saved start could not be used: ${why})…`, 0.05);
  return loadPyodide({ indexURL });
}

async function start() {
  const base = new URL("../", import.meta.url); // the site's folder, wherever it is served
  progress("Loading the site's description…", 0.02);
  const site = await (await fetchOk(new URL("site.json", base), base)).json();
  progress(`Starting Python in your browser (Pyodide ${site.pyodide}, ${site.pyodide_mb} MB the first time)…`, 0.05);
  const pyodide = await startPython(site, base);
  progress(`Installing micrograd ${site.micrograd}…`, 0.8);
  const wheel = await (await fetchOk(new URL(site.wheel, base), base)).arrayBuffer();
  pyodide.unpackArchive(new Uint8Array(wheel), "wheel");
  progress("Importing micrograd…", 0.9);
  host = pyodide.runPython("from micrograd.playground.serving.worker import Host\nHost()");
  progress("Ready", 1);
  drain();
}

start().catch((err) => postMessage({ fatal: `micrograd could not start in this browser: ${lastLine(err)}` }));
