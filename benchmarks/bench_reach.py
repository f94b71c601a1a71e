"""Benchmark: the playground where a learner is, measured in Chromium.

* In a notebook: a real JupyterLab runs a notebook with `explore(L)` (the lecture's L) and
  `train()`; the time from Run All until the widgets are drawn, from a click on Backward pass
  until its grads show, and from Play until 100% accuracy on moons; the frames the Train widget
  draws per second while it plays.
* Behind Jupyter's proxy: the same Train page opened directly and through jupyter-server-proxy
  (``/proxy/PORT/``): frames drawn per second and time to 100%.

    python3 benchmarks/bench_reach.py [--seconds 3]

(`bench_playground.py --tabs 30` measures a class of 30 tabs on one server.)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def widget_run(browser: Any, folder: pathlib.Path, seconds: float) -> dict[str, float]:
    from tests.support.jupyterlab import jupyterlab

    with jupyterlab(folder) as lab:
        name = lab.notebook(
            "bench.ipynb",
            [
                "from micrograd.engine import Value\n"
                "from micrograd.widgets import explore, train\n"
                "a = Value(2.0, label='a'); b = Value(-3.0, label='b')\n"
                "c = Value(10.0, label='c')\n"
                "f = Value(-2.0, label='f'); L = (a*b + c)*f; L.label = 'L'\nexplore(L)",
                "train(dataset='moons')",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(120_000)
        lab.open_and_run(page, name)
        t0 = time.perf_counter()
        page.wait_for_function("""() => { const w = document.querySelectorAll('.micrograd-widget');
            return w.length === 2 && [...w].every(x => x.dataset.ready === '1'); }""")
        ready = time.perf_counter() - t0
        explorer, trainer = (
            page.locator(".micrograd-widget").nth(0),
            page.locator(".micrograd-widget").nth(1),
        )
        t0 = time.perf_counter()
        explorer.get_by_role("button", name="Backward pass").click()
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('#status').textContent.includes('done')",
            arg=explorer.element_handle(),
        )
        backward = time.perf_counter() - t0
        trainer.scroll_into_view_if_needed()
        r = play(page, trainer, seconds)
        page.close()
    return {"ready": ready, "backward": backward, **r}


def play(page: Any, scope: Any, seconds: float) -> dict[str, float]:
    """Press Play in `scope`: the time to 100% accuracy and the frames drawn per second."""
    drawn = """(el) => { const r = el.shadowRoot || document;
        return Number(r.querySelector('#step-count').dataset.drawn || 0); }"""
    handle = scope.element_handle() if scope is not page else page.locator("body").element_handle()
    # the view counts the frames it draws on the step counter (see train.js drawFrame)
    d0 = page.evaluate(drawn, handle)
    t0 = time.perf_counter()
    scope.get_by_role("button", name="Play").click()
    scope.locator("#acc-text").filter(has_text="accuracy 100.0%").wait_for()
    to100 = time.perf_counter() - t0
    rest = seconds - (time.perf_counter() - t0)
    if rest > 0:
        page.wait_for_timeout(rest * 1000)
    fps = (page.evaluate(drawn, handle) - d0) / (time.perf_counter() - t0)
    scope.get_by_role("button", name="Pause").click()
    return {"to 100%": to100, "drawn/s": fps}


def proxy_runs(browser: Any, folder: pathlib.Path, seconds: float) -> dict[str, dict]:
    from micrograd.playground import serve
    from tests.support.jupyterlab import jupyterlab

    out = {}
    with serve(port=0) as pg, jupyterlab(folder) as lab:
        for how, url in (
            ("direct", f"{pg.url}train"),
            ("through jupyter-server-proxy", f"{lab.url}proxy/{pg.port}/train?token={lab.token}"),
        ):
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(120_000)
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']")
            out[how] = play(page, page, seconds)
            page.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="how long each run plays")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from tests.conftest import chromium_path

    path = chromium_path()
    if path is None:
        p.error("no Chromium found: run scripts/ensure-chromium")
    print(
        f"# the playground in a notebook and behind Jupyter's proxy, in Chromium "
        f"({os.cpu_count()} cores, load {', '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as tmp:
        browser = pw.chromium.launch(executable_path=path, headless=True)
        try:
            w = widget_run(browser, pathlib.Path(tmp) / "widget", args.seconds)
            print(
                "| in JupyterLab | widgets drawn after Run All | Backward pass shown | "
                "train(): Play to 100% | frames drawn/s |"
            )
            print("|---|---|---|---|---|")
            print(
                f"| explore(L), train() | {w['ready']:.1f} s | {1000 * w['backward']:.0f} ms |"
                f" {w['to 100%']:.2f} s | {w['drawn/s']:.1f} |"
            )
            runs = proxy_runs(browser, pathlib.Path(tmp) / "proxy", args.seconds)
            print()
            print("| the Train page, 2-8-8-1 tanh on moons | Play to 100% | frames drawn/s |")
            print("|---|---|---|")
            for how, r in runs.items():
                print(f"| {how} | {r['to 100%']:.2f} s | {r['drawn/s']:.1f} |")
        except KeyboardInterrupt:
            print("bench_reach: stopped (Ctrl-C)", file=sys.stderr)
            return 130
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_reach", main))
