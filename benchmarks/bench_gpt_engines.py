"""Benchmark: the GPT view's engines (playground/gpt/train_gpt_engines.py), microgpt's model.

microgpt's GPT (n_embd 16, n_head 4, n_layer 1, block_size 16) on makemore's names (or, without
them, the GPT view's few default words), one word a step in microgpt's order, his Adam:

* the first 20 losses and the weights after them against ``microgpt(docs, 20, 42)`` (eager
  micrograd, his arithmetic), on numpy and on JavaScript (Node.js);
* numpy (the server's engine): steps a second, one step a call as the server's pacer asks;
* JavaScript in Node.js (`GPTKind(..., "javascript")` through `engines.javascript_host()`): steps
  a second in calls of 30 ms (the site's worker's slices), every length's program compiled; and
  the step alone in one call, in steps a second and a second of Node's CPU (what a machine
  loaded by others does not change);
* JavaScript in Pyodide (``--pyodide``: Pyodide's release from the site's build cache, run by
  Node.js, micrograd from this clone, the worker's own ``micrograd_compile``): the seconds a word
  length's program costs to trace, steps a second in 30 ms slices, the weights' sync to Python;
* JavaScript in Chromium (``--chromium``): the step alone (gpt_step.js and the programs this
  Python traced) in a Web Worker, as the site's worker compiles it: steps a second.

Goals (issue 42): the site >= 300 steps a second, the server >= 20.

    python benchmarks/bench_gpt_engines.py [--seconds 10] [--pyodide] [--chromium]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("OMP_NUM_THREADS", "1")

SLICE = 0.03  # seconds a call: the site's worker trains in slices of 30 ms (static/worker.js)


def words() -> tuple[tuple[str, ...], str]:
    from micrograd.data import names

    try:
        return tuple(names()), "makemore's names"
    except (OSError, ValueError) as e:  # (names.txt is not shipped: data.names says so)
        from micrograd.playground.gpt.train_gpt import WORDS

        return WORDS, f"the GPT view's {len(WORDS)} default words ({str(e).splitlines()[0]})"


def first_20(docs: tuple[str, ...]) -> str:
    from micrograd.gpt import microgpt
    from micrograd.playground.gpt.train_gpt import GPTKind, GPTSettings

    model, _, want = microgpt(list(docs), 20, 42)
    rows = []
    for engine in ("numpy", "javascript"):
        kind = GPTKind(GPTSettings(docs=docs, steps=20), engine)
        got: list[float] = []
        while len(got) < 20:
            got += [loss for loss, _ in kind.train(60.0, lambda: True)]
        kind.sync()
        dl = max(abs(a - b) for a, b in zip(got, want))
        dw = max(abs(p.data - q.data) for p, q in zip(kind.params, model.parameters()))
        rows.append(f"{engine}: losses within {dl:.1e}, weights within {dw:.1e}")
    return "; ".join(rows)


def steady(engine: str, docs: tuple[str, ...], seconds: float) -> tuple[float, float, float]:
    """(steps a second, CPU seconds of this process a step, seconds to trace every length)."""
    from micrograd.playground.gpt.train_gpt import GPTKind, GPTSettings

    kind = GPTKind(GPTSettings(docs=docs, steps=100_000), engine)
    t = time.perf_counter()
    kind.prepare(600.0)
    traced = time.perf_counter() - t
    kind.train(SLICE, lambda: True)  # (V8's optimising compiler, numpy's first calls)
    kind.train(1.0, lambda: True)
    steps, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        steps += len(kind.train(SLICE if engine == "javascript" else 0.0, lambda: True))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return steps / wall, cpu / steps, traced


# ------------------------------------------------------------------ Pyodide, run by Node.js

_PYODIDE_RUN = r"""
import { readFileSync } from "fs";
import { loadPyodide } from "PYODIDE/pyodide.mjs";
const [src, names, seconds] = process.argv.slice(2);
globalThis.micrograd_compile = (source) => {  // static/worker.js's, as it is there
  const step = new Function(source)();
  return (method, text) => JSON.stringify(step[method](JSON.parse(text)));
};
const py = await loadPyodide({ indexURL: "PYODIDE/" });
py.mountNodeFS("/src", src);
py.globals.set("names_text", names ? readFileSync(names, "utf8") : "");
py.globals.set("seconds", Number(seconds));
py.runPython(`
import json, sys, time
sys.path.insert(0, "/src")
from micrograd.playground.gpt.train_gpt import GPTKind, GPTSettings, WORDS
docs = tuple(names_text.split()) or WORDS
kind = GPTKind(GPTSettings(docs=docs, steps=100_000), "javascript")
order = __import__("micrograd.playground.gpt.train_gpt_engines", fromlist=["x"]).lengths_met(kind)
t = time.perf_counter()
kind.prepare(0.0)
first = time.perf_counter() - t
t = time.perf_counter()
kind.prepare(600.0)
rest = time.perf_counter() - t
kind.train(1.0, lambda: True)
steps, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < seconds:
    steps += len(kind.train(0.03, lambda: True))
rate = steps / (time.perf_counter() - t0)
t = time.perf_counter()
kind.sync()
sync = time.perf_counter() - t
print(json.dumps({"lengths": len(order), "first": first, "all": first + rest, "rate": rate,
                  "sync": sync}))
`);
"""


def pyodide_row(seconds: float) -> str:
    from micrograd.site.static_site import PYODIDE_VERSION

    cache = Path.home() / ".cache" / "micrograd" / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not cache.exists():
        return f"(no Pyodide archive at {cache}: build the site once, `micrograd site`)"
    names = os.environ.get("MICROGRAD_NAMES_FILE", "")
    with tempfile.TemporaryDirectory(prefix="bench-gpt-") as tmp:
        subprocess.run(["tar", "xzf", str(cache), "-C", tmp], check=True)
        pyodide = Path(tmp) / "package"
        script = Path(tmp) / "run.mjs"
        script.write_text(_PYODIDE_RUN.replace("PYODIDE", str(pyodide)))
        out = subprocess.run(
            ["node", str(script), str(HERE.parent), names, str(seconds)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if out.returncode:
        return f"(Pyodide failed: {(out.stderr.strip().splitlines() or ['?'])[-1]})"
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return (
        f"{r['rate']:,.0f} steps/s in 30 ms slices; tracing a length {r['first']:.2f} s (the "
        f"first), all {r['lengths']} lengths {r['all']:.1f} s; sync of the weights to Python "
        f"{r['sync'] * 1000:.1f} ms"
    )


# ------------------------------------------------------------------ Chromium's Web Worker

_WORKER = """
onmessage = (e) => {
  const d = e.data, step = new Function(d.step)();
  step.set(d.set);
  for (const [n, source, captured] of d.programs) step.program({ n, source, captured });
  step.train({ steps: 1e9, seconds: 2 });  // (V8's optimising compiler)
  const t0 = performance.now(), r = step.train({ steps: 1e9, seconds: d.seconds });
  postMessage({ steps: r.losses.length, ms: performance.now() - t0 });
};
"""


def step_message(docs: tuple[str, ...], seconds: float) -> dict:
    """What the step alone needs: gpt_step.js, every length's program (traced here), the
    weights microgpt's seed 42 draws, the words in his order."""
    import random

    from micrograd.gpt import GPT, Tokenizer
    from micrograd.jit.gpt import gpt_step_source, js_program

    random.seed(42)
    order = list(docs)
    random.shuffle(order)
    tok = Tokenizer(order)
    model = GPT(tok.vocab_size)
    tokens: list[int] = []
    offsets = [0]
    for w in order:
        tokens += tok.encode(w)
        offsets.append(len(tokens))
    lengths = sorted({min(len(w) + 2, 17) for w in order})
    return {
        "step": gpt_step_source(),
        "programs": [[n, *js_program(model, n)] for n in lengths],
        "seconds": seconds,
        "set": {
            "params": [p.data for p in model.parameters()],
            "tokens": tokens,
            "offsets": offsets,
            "vocab": model.vocab_size,
            "cut": 17,
            "steps": 10**9,
            "lr": 0.01,
        },
    }


_NODE_ALONE = """
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const step = new Function(d.step)();
step.set(d.set);
for (const [n, source, captured] of d.programs) step.program({ n, source, captured });
step.train({ steps: 1e9, seconds: 2 });  // (V8's optimising compiler)
const t0 = performance.now(), c0 = process.cpuUsage();
const r = step.train({ steps: 1e9, seconds: d.seconds });
const c = process.cpuUsage(c0);
console.log(JSON.stringify({ steps: r.losses.length, ms: performance.now() - t0,
  cpu: (c.user + c.system) / 1000 }));
"""


def node_alone_row(message: dict) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(message, f)
        f.flush()
        out = subprocess.run(
            ["node", "-e", _NODE_ALONE, f.name], capture_output=True, text=True, timeout=600
        )
    if out.returncode:
        return f"(Node.js failed: {(out.stderr.strip().splitlines() or ['?'])[-1]})"
    r = json.loads(out.stdout)
    return (
        f"{r['steps'] / r['ms'] * 1000:,.0f} steps/s, {r['steps'] / r['cpu'] * 1000:,.0f} "
        f"steps per second of its CPU (the step alone, one call)"
    )


def chromium_row(message: dict) -> str:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from conftest import chromium_path

    path = chromium_path()
    if path is None:
        return "(no Chromium: scripts/ensure-chromium)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, headless=True)
        page = browser.new_page()
        got = page.evaluate(
            """([code, message]) => new Promise((resolve, reject) => {
              const w = new Worker(URL.createObjectURL(new Blob([code])));
              w.onmessage = (e) => resolve(e.data);
              w.onerror = (e) => reject(new Error(e.message));
              w.postMessage(message);
            })""",
            [_WORKER, message],
        )
        version = browser.version
        browser.close()
    return f"Chromium {version}: {got['steps'] / got['ms'] * 1000:,.0f} steps/s (the step alone)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="how long each engine trains")
    p.add_argument("--pyodide", action="store_true", help="also Pyodide's (run by Node.js)")
    p.add_argument("--chromium", action="store_true", help="also the step in Chromium's worker")
    args = p.parse_args(argv)
    docs, which = words()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# microgpt's GPT on {which} ({os.cpu_count()} cores, load {load})\n")
    try:
        print(f"- the first 20 steps against microgpt(docs, 20, 42): {first_20(docs)}", flush=True)
        rate, cpu, traced = steady("numpy", docs, args.seconds)
        print(
            f"- numpy (the server): {rate:,.1f} steps/s, {cpu * 1000:.1f} ms of CPU a step "
            f"(goal >= 20 steps/s); every length traced in {traced:.1f} s",
            flush=True,
        )
        rate, _, traced = steady("javascript", docs, args.seconds)
        print(
            f"- JavaScript in Node.js: {rate:,.0f} steps/s in 30 ms calls (goal on the site "
            f">= 300); every length traced and compiled in {traced:.1f} s",
            flush=True,
        )
        message = step_message(docs, args.seconds)
        print(f"- JavaScript in Node.js: {node_alone_row(message)}", flush=True)
        if args.pyodide:
            print(f"- JavaScript in Pyodide (Node.js): {pyodide_row(args.seconds)}", flush=True)
        if args.chromium:
            row = chromium_row(message)
            print(f"- JavaScript in Chromium's Web Worker: {row}", flush=True)
    except KeyboardInterrupt:
        print("bench_gpt_engines: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_gpt_engines", main))
