"""Benchmark: the static site (`micrograd site`) in Chromium: micrograd itself in the browser.

What a visitor gets: the time from opening the explorer until its first graph is drawn, and the
Train view until its untrained network is (both from the snapshot the build bakes, before Python
is ready), and until each page is interactive (Python ready), on a first visit (nothing cached)
and a visit again (the browser's cache warm); and in the Train view, for
the page's default network, karpathy's moons net, two between and the largest: training steps
per second, frames per second drawn, how long Pause takes to answer (from the click until the
page shows the run paused), the output picture's cells a side, and the wall time from Play
until 100% accuracy. The site is built with `build_site` into a temporary folder, served by
``python -m http.server`` and opened at /s/, as the tests do. The Train view's steps run in
JavaScript (micrograd.jit's JavaScript target, compiled by the page's Web Worker); Python
(Pyodide, in the same worker) makes the frames.

With ``--gpt-step``, also the GPT view's training step alone (microgpt's model, gpt_step.js and
its programs, traced here) in this Chromium's Web Worker: bench_gpt_engines.py's row.

With ``--gpt``, the GPT view alone (gpt.html, microgpt's model; its own section of RESULTS.md,
``bench_site_gpt``), on the built-in words and, where ``MICROGRAD_NAMES_FILE`` names makemore's
names, on as many of them as the page takes pasted (the site ships no names): the first 20
steps' losses (Step, read from the page's frames) against Python's ``microgpt(docs, 20, 42)``;
then (steps: 100,000) the seconds until the worker has traced every word length ahead (Host's idle
`prepare`), and Play for ``--seconds``: steps a second, frames a second drawn, the running mean
of the loss at the end, Pause (ms from the click until the page shows it paused) and whether
the steps then stop; then Pause again after each of 4 more seconds of Play (the median and the
most of the 5: a Pause that comes while the worker draws the pictures waits for them).

With ``--health``, the Health panel's cost on the site (its own section, ``bench_site_health``):
the Train view's default network, the moons net and the largest, and the GPT view's default
and largest (the built-in words), each played ``--seconds`` with the panel shut and then open
(the panel opened before Play: its first 10 steps read each, then within its time budget):
steps a second and frames a second drawn, and open / shut; in the Train view also the page's
drawing time, ms a second of Play (its main thread: the panel's pictures are drawn there). With
``--rounds N``, each network shut and open N times in turn, the medians (and each round's
ratio): the machine's other load swings one run's ratio widely.

    python3 benchmarks/bench_site.py [--seconds 10] [--visits 3] [--open-only] [--gpt-step]
    python3 benchmarks/bench_site.py --gpt [--seconds 10]
    python3 benchmarks/bench_site.py --health [--seconds 10] [--rounds 1]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

NETWORKS = [
    ("the page's default: 2-8-8-1 tanh", {}),
    ("karpathy's moons net: 2-16-16-1 ReLU", {"hidden": [16, 16], "activation": "relu"}),
    ("2-32-32-1 tanh", {"hidden": [32, 32]}),
    ("largest: 6 hidden layers of 32", {"hidden": [32] * 6}),
]


def weights(settings: dict) -> int:
    """The network's weights and biases."""
    from micrograd.playground.training.train_settings import Settings

    s = Settings.from_dict(settings)
    sizes = [s.nin, *s.hidden, s.outputs]
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


# The moments a page's first picture is in it (the explorer's graph, the Train view's untrained
# network: drawn from the site's snapshot, before Python is ready) and it is interactive (its
# <body data-ready>: Python answered), in the page's own clock (ms since the navigation started),
# recorded by the page itself: no polling delay in the figures.
_FIRST_GRAPH = """
window.bootLog = [];
new MutationObserver((_, obs) => {
  const boot = document.querySelector('#boot');
  const said = boot && boot.textContent;
  if (said && (!window.bootLog.length || window.bootLog.at(-1)[1] !== said)) {
    window.bootLog.push([performance.now(), said]);
  }
  if (window.firstGraphMs === undefined &&
      document.querySelector('#graph-svg g.node.value, #step-count[data-drawn]')) {
    window.firstGraphMs = performance.now();
  }
  if (window.readyMs === undefined && document.body && document.body.dataset.ready === '1') {
    window.readyMs = performance.now();
  }
  if (window.firstGraphMs !== undefined && window.readyMs !== undefined) obs.disconnect();
}).observe(document, {childList: true, subtree: true, characterData: true, attributes: true,
                      attributeFilter: ['data-ready', 'data-drawn']});
"""
# The start-up's phases, by what the page says (static/worker.js's progress): Python is up when
# it says it installs micrograd, and micrograd is imported when it says Ready.
PHASES = (("Python started", "Installing micrograd"), ("micrograd imported", "Ready"))


@contextlib.contextmanager
def served_site() -> Any:
    """The site built into a temporary folder and served at http://127.0.0.1:PORT/s/."""
    from micrograd.site.static_site import build_site

    with tempfile.TemporaryDirectory(prefix="micrograd-site-") as root:
        report = build_site(os.path.join(root, "s"), log=lambda line: print(line, file=sys.stderr))
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            port = re.search(r"port (\d+)", server.stdout.readline())
            if port is None:
                raise RuntimeError("python -m http.server did not say its port")
            yield f"http://127.0.0.1:{port.group(1)}/s/", report
        finally:
            server.terminate()
            server.wait(timeout=10)


def first_graph(
    browser: Any, base: str, visits: int, path: str = ""
) -> tuple[list[dict], list[dict]]:
    """When each start-up phase ended, the first picture was drawn and the page became
    interactive, in seconds from the navigation, opening `path` (the explorer, or train.html):
    first visits (a fresh context each, nothing cached) and visits again (the same context,
    reloaded)."""
    cold: list[dict] = []
    warm: list[dict] = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(_FIRST_GRAPH)
        page = context.new_page()
        for times in (cold, warm):
            page.goto(base + path)
            page.wait_for_function(
                "() => window.firstGraphMs !== undefined && window.readyMs !== undefined",
                timeout=300_000,
            )
            log = page.evaluate("() => window.bootLog")
            got = {
                "first graph": page.evaluate("() => window.firstGraphMs") / 1000,
                "interactive": page.evaluate("() => window.readyMs") / 1000,
            }
            for name, said in PHASES:
                got[name] = next(t for t, text in log if text.startswith(said)) / 1000
            times.append(got)
        context.close()
    return cold, warm


def _phases(runs: list[dict]) -> str:
    keys = ["first graph"] + [name for name, _ in PHASES] + ["interactive"]
    return ", ".join(f"{k} {statistics.median(r[k] for r in runs):.1f} s" for k in keys)


def query(settings: dict) -> str:
    return "&".join(
        f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in settings.items()
    )


def train(browser: Any, base: str, settings: dict, seconds: float) -> dict[str, Any]:
    """Play for `seconds`; steps/s, frames/s drawn, and when 100% accuracy first showed."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{base}train.html?{query(settings)}")
        # interactive (Python answered), not only drawn: the snapshot draws the untrained
        # network before, and a Play then waits for Python (on a loaded machine, past the run)
        page.wait_for_function(
            "() => window.trainView && window.trainView.frame() && "
            "document.body.dataset.ready === '1'",
            timeout=300_000,
        )
        read = (
            "() => [window.trainView.frame().step, window.trainView.drawn() || 0, "
            "window.trainView.frame().accuracy]"
        )
        step0, drawn0, _ = page.evaluate(read)
        t0 = time.perf_counter()
        page.get_by_role("button", name="Play").click()
        to100 = None
        step, drawn = step0, drawn0
        while (now := time.perf_counter()) - t0 < seconds:
            step, drawn, acc = page.evaluate(read)
            if to100 is None and acc == 1:
                to100 = now - t0
            time.sleep(0.05)
        elapsed = time.perf_counter() - t0
        # Pause: from the click until the page shows the run paused, in the page's own clock
        pause_ms = page.evaluate(_PAUSE)
        side = page.evaluate("() => window.trainView.call('state').then((a) => a.meta.grid)")
        return {
            "steps/s": (step - step0) / elapsed,
            "drawn/s": (drawn - drawn0) / elapsed,
            "to 100%": to100,
            "steps": step - step0,
            "pause ms": pause_ms,
            "side": side,
        }
    finally:
        context.close()


_PAUSE = """async (view = 'trainView') => {
  const t0 = performance.now();
  document.querySelector('#pause').click();
  while (window[view].frame().playing) await new Promise((r) => setTimeout(r, 2));
  return performance.now() - t0;
}"""


PAUSES = 5  # the GPT view's Pause, timed this many times


def gpt_cases() -> list[tuple[str, list[str] | None]]:
    """The GPT view's word lists: the built-in words (None: the page's own), and makemore's
    names where MICROGRAD_NAMES_FILE names them, the first as many as the page takes."""
    from micrograd.playground.gpt.gpt_frames import MAX_WORDS
    from micrograd.playground.gpt.train_gpt import WORDS

    cases: list[tuple[str, list[str] | None]] = [(f"the built-in words ({len(WORDS)})", None)]
    if os.environ.get("MICROGRAD_NAMES_FILE"):
        from micrograd import data

        names = data.names()[:MAX_WORDS]
        cases.append((f"makemore's names, the first {len(names):,} (pasted)", names))
    return cases


def gpt_play(browser: Any, base: str, docs: list[str] | None, seconds: float) -> dict[str, Any]:
    """The GPT view on `docs` (None: the built-in words): see the module docstring."""
    from micrograd.gpt import microgpt
    from micrograd.playground.gpt.train_gpt import MAX_STEPS, WORDS

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        t_open = time.perf_counter()
        page.goto(f"{base}gpt.html")
        page.wait_for_function(
            "() => window.gptView && window.gptView.frame() && document.body.dataset.ready === '1'",
            timeout=300_000,
        )
        body = {"data": "builtin"} if docs is None else {"data": "own", "words": "\n".join(docs)}
        # microgpt(docs, 20, 42)'s run: his rate decays to 0 over its 20 steps
        page.evaluate("(b) => window.gptView.call('config', b)", {**body, "steps": 20})
        losses = [
            page.evaluate(
                "() => window.gptView.call('control', {action: 'step'})"
                ".then((a) => a.frame.loss_exact)"
            )
            for _ in range(20)
        ]
        truth = microgpt(list(WORDS) if docs is None else docs, 20, 42)[2]
        # then a run that plays on past the measurement (the rate decaying over MAX_STEPS)
        page.evaluate("(b) => window.gptView.call('config', b)", {**body, "steps": MAX_STEPS})
        worker = page.workers[0]  # the page's one worker: Python's
        while worker.evaluate("() => self.micrograd_busy()"):  # tracing the lengths ahead
            time.sleep(0.2)
        traced = time.perf_counter() - t_open
        read = "() => [window.gptView.frame().step, window.gptView.drawn()]"
        step0, drawn0 = page.evaluate(read)
        t0 = time.perf_counter()
        page.click("#play")
        time.sleep(seconds)
        step, drawn = page.evaluate(read)
        elapsed = time.perf_counter() - t0
        pauses = [page.evaluate(_PAUSE, "gptView")]
        frame = page.evaluate("() => window.gptView.frame()")
        time.sleep(1.0)
        stopped = page.evaluate(read)[0] == frame["step"]
        for _ in range(PAUSES - 1):  # Pause again, after a second of Play each time
            page.click("#play")
            time.sleep(1.0)
            pauses.append(page.evaluate(_PAUSE, "gptView"))
        return {
            "error": max(abs(a - b) for a, b in zip(losses, truth, strict=True)),
            "traced": traced,
            "steps/s": (step - step0) / elapsed,
            "drawn/s": (drawn - drawn0) / elapsed,
            "mean": frame["mean"],
            "step": frame["step"],
            "pause ms": statistics.median(pauses),
            "pause max": max(pauses),
            "stopped": stopped,
        }
    finally:
        context.close()


def gpt_rows(browser: Any, base: str, seconds: float) -> None:
    print(
        f"\nthe GPT view (gpt.html, microgpt's model, seed 42), Play {seconds:g} s after the "
        "lengths were traced ahead (steps 100,000: the rate about 0.01 throughout):\n\n"
        "| words | first 20 losses vs microgpt() | open to traced | steps/s | frames/s drawn | "
        "running mean at the end (step) | "
        f"Pause answers (median, most of {PAUSES}) | steps stop |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for name, docs in gpt_cases():
        r = gpt_play(browser, base, docs, seconds)
        print(
            f"| {name} | max diff {r['error']:.1e} | {r['traced']:.1f} s | {r['steps/s']:,.0f} | "
            f"{r['drawn/s']:.1f} | {r['mean']:.4f} ({r['step']:,}) | {r['pause ms']:.0f} ms, "
            f"{r['pause max']:.0f} ms | {'yes' if r['stopped'] else 'no'} |",
            flush=True,
        )


# The Health panel's networks on the site: (view, name, the page's URL query)
HEALTH_NETS = [
    ("train", "the page's default: 2-8-8-1 tanh", ""),
    ("train", "karpathy's moons net: 2-16-16-1 ReLU", query(NETWORKS[1][1])),
    ("train", "largest: 6 hidden layers of 32", query(NETWORKS[3][1])),
    ("gpt", "microgpt's default (16 wide, 1 layer)", "data=builtin"),
    ("gpt", "largest (32 wide, 2 layers)", "data=builtin&n_embd=32&n_layer=2"),
]


def health_play(browser: Any, base: str, view: str, q: str, open_: bool, seconds: float) -> dict:
    """One view played `seconds` with the Health panel shut or open: steps/s, frames/s drawn."""
    from micrograd.playground.gpt.train_gpt import MAX_STEPS

    handle = "trainView" if view == "train" else "gptView"
    if view == "gpt":  # more steps than the seconds take (microgpt's 1000 took under 6 s)
        q += f"&steps={MAX_STEPS}"
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{base}{'train' if view == 'train' else 'gpt'}.html?{q}")
        page.wait_for_function(
            f"() => window.{handle} && window.{handle}.frame() && "
            "document.body.dataset.ready === '1'",
            timeout=300_000,
        )
        if view == "gpt":  # the word lengths traced ahead, as a visitor's page has by Play
            worker = page.workers[0]
            while worker.evaluate("() => self.micrograd_busy()"):
                time.sleep(0.2)
        if open_:
            page.check("#health-open")
            page.wait_for_function(f"() => window.{handle}.frame().health", timeout=120_000)
        h = f"window.{handle}"
        read = f"() => [{h}.frame().step, {h}.drawn() || 0, {h}.drawMs ? {h}.drawMs() : NaN]"
        step0, drawn0, ms0 = page.evaluate(read)
        t0 = time.perf_counter()
        page.click("#play")
        time.sleep(seconds)
        step, drawn, ms = page.evaluate(read)
        elapsed = time.perf_counter() - t0
        page.evaluate(_PAUSE, handle)
        return {
            "steps/s": (step - step0) / elapsed,
            "drawn/s": (drawn - drawn0) / elapsed,
            "draw ms/s": (ms - ms0) / elapsed if ms is not None and ms0 is not None else math.nan,
        }
    finally:
        context.close()


def health_rows(browser: Any, base: str, seconds: float, rounds: int = 1) -> None:
    each = f", {rounds} rounds in turn, medians" if rounds > 1 else ""
    print(
        f"\nthe Health panel on the site, shut vs open, Play {seconds:g} s each (the panel "
        f"opened before Play{each}):\n\n"
        "| view: network | steps/s shut | steps/s open | open / shut | frames/s drawn shut | "
        "frames/s drawn open | drawing ms/s shut | drawing ms/s open |"
        + (" each round's open / shut |" if rounds > 1 else "")
        + "\n|---|---|---|---|---|---|---|---|"
        + ("---|" if rounds > 1 else "")
    )
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    for view, name, q in HEALTH_NETS:
        shuts, opens = [], []
        for _ in range(rounds):
            shuts.append(health_play(browser, base, view, q, False, seconds))
            opens.append(health_play(browser, base, view, q, True, seconds))
        shut, open_ = med(shuts, "steps/s"), med(opens, "steps/s")
        ratio = open_ / shut if shut else float("nan")
        ratios = ", ".join(
            f"{o['steps/s'] / s['steps/s']:.0%}" if s["steps/s"] else "–"
            for s, o in zip(shuts, opens)
        )
        print(
            f"| {'Train' if view == 'train' else 'GPT'}: {name} | {shut:,.0f} | "
            f"{open_:,.0f} | {ratio:.0%} | {med(shuts, 'drawn/s'):.1f} | "
            f"{med(opens, 'drawn/s'):.1f} | {_ms(med(shuts, 'draw ms/s'))} | "
            f"{_ms(med(opens, 'draw ms/s'))} |" + (f" {ratios} |" if rounds > 1 else ""),
            flush=True,
        )


def _ms(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.0f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="how long each network plays")
    p.add_argument("--visits", type=int, default=3, help="page openings timed (median shown)")
    p.add_argument("--open-only", action="store_true", help="time the openings only, no training")
    p.add_argument("--gpt-step", action="store_true", help="also the GPT's step in a worker")
    p.add_argument("--gpt", action="store_true", help="the GPT view alone (its own section)")
    p.add_argument(
        "--health", action="store_true", help="the Health panel's cost (its own section)"
    )
    p.add_argument(
        "--rounds", type=int, default=1, help="--health: each network shut and open N times"
    )
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    saved = dict(os.environ)  # (conftest isolates the suite's tests from makemore's names on
    from conftest import chromium_path  # import: the site built here is built as a user's)

    os.environ.clear()
    os.environ.update(saved)

    path = chromium_path()
    if path is None:
        p.error("no Chromium found: run scripts/ensure-chromium")
    try:
        with served_site() as (base, report), sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, headless=True)
            version = browser.version
            print(
                f"# the static site in Chromium {version} ({os.cpu_count()} cores, load "
                f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}); the folder: "
                f"{report.files} files, {report.size / 1e6:.1f} MB"
            )
            if args.gpt:
                gpt_rows(browser, base, args.seconds)
                browser.close()
                return 0
            if args.health:
                health_rows(browser, base, args.seconds, args.rounds)
                browser.close()
                return 0
            for title, path in (("the explorer", ""), ("the Train view", "train.html")):
                cold, warm = first_graph(browser, base, args.visits, path)
                firsts = ", ".join(f"{r['first graph']:.2f}" for r in cold)
                print(
                    f"\nopening {title} (medians of {args.visits}, seconds from navigation; "
                    f"first graph: from the site's snapshot):\n"
                    f"- first visit: {_phases(cold)} (first graph: {firsts})\n"
                    f"- again, cached: {_phases(warm)}",
                    flush=True,
                )
            if args.open_only:
                browser.close()
                return 0
            print()
            print(
                "| network (moons, 100 points) | weights | steps/s | frames/s drawn | "
                "Pause answers | picture | time to 100% |"
            )
            print("|---|---|---|---|---|---|---|")
            for name, settings in NETWORKS:
                r = train(browser, base, settings, args.seconds)
                to100 = "not within the run" if r["to 100%"] is None else f"{r['to 100%']:.1f} s"
                print(
                    f"| {name} | {weights(settings):,} | {r['steps/s']:,.0f} | "
                    f"{r['drawn/s']:.1f} | {r['pause ms']:.0f} ms | {r['side']}×{r['side']} | "
                    f"{to100} |",
                    flush=True,
                )
            browser.close()
        if args.gpt_step:
            import bench_gpt_engines as gpt

            docs, which = gpt.words()
            row = gpt.chromium_row(gpt.step_message(docs, args.seconds))
            print(f"\nthe GPT's step alone in a Web Worker, on {which}: {row}", flush=True)
    except KeyboardInterrupt:
        print("bench_site: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    # (the GPT view's run writes a section of its own: the Train view's figures stay)
    sys.exit(
        recorded(
            "bench_site_gpt"
            if "--gpt" in sys.argv
            else "bench_site_health"
            if "--health" in sys.argv
            else "bench_site",
            main,
        )
    )
