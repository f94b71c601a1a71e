"""Benchmark: the backprop explorer's page on a large graph, in Chromium.

What a learner waits for after pressing Backward step on the largest graph the explorer shows: a
Train view point of a 2-16-16-1 network with five inputs (460 values, near the explorer's 500
cap), opened in the explorer page as the Train view's link does. For `--steps` backward steps at
the start of the pass, and as many again at its end (the log then holds some 200 entries), it
measures in the page the time from the click until the page has drawn the answer
(the new chain-rule entry is in the log, and a frame has been painted after it), the CPU time
the page's main thread spent on it (script, style, layout, paint: from Chromium's trace, so a
busy machine inflates it far less than the wall time), and, in-process, what the server needs to
compute the same step (`Tab.call("explorer", "step")`).

    python3 benchmarks/bench_explorer_page.py [--steps 20] [--hidden 16,16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SETTINGS = {"hidden": [16, 16], "features": ["x1", "x2", "x1sq", "x2sq", "x1x2"]}

# One Backward step, clicked in the page: ms from the click until the log holds one more entry
# and the browser has painted the frame after it.
CLICK_AND_WAIT = """async () => {
  const log = document.querySelector('#log');
  const before = log.children.length;
  const t0 = performance.now();
  const changed = new Promise((resolve) => {
    const obs = new MutationObserver(() => {
      if (log.children.length !== before) { obs.disconnect(); resolve(); }
    });
    obs.observe(log, { childList: true });
  });
  document.querySelector('#step').click();
  await changed;
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}"""


def server_ms(settings: dict, steps: int) -> list[float]:
    """The same steps computed by the views in-process: what the server needs per step."""
    from micrograd.playground.training.train_settings import Settings
    from micrograd.playground.views import Tab

    tab = Tab()
    tab.train.settings = Settings.from_dict(settings)
    payload = tab.call("train", "point", {})
    state = tab.call("explorer", "point", {"from": payload})
    tab.call("explorer", "forward", {})
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        tab.call("explorer", "step", {})
        times.append((time.perf_counter() - t0) * 1000)
    print(f"graph: {len(state['values'])} values")
    return times


def traced(browser: Any, page: Any, run: Callable[[], list[float]]) -> tuple[list[float], float]:
    """`run()`'s wall times, and the CPU ms the page's main thread spent meanwhile (the sum of its
    top-level tasks' thread times in Chromium's trace)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        browser.start_tracing(page=page, path=path, categories=["toplevel", "devtools.timeline"])
        times = run()
        browser.stop_tracing()
        with open(path) as f:
            events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"].get("name") == "CrRendererMain"
    }
    cpu = sum(
        e.get("tdur", 0)
        for e in events
        if e.get("ph") == "X"
        and e.get("name") == "ThreadControllerImpl::RunTask"
        and (e.get("pid"), e.get("tid")) in main
    )
    return times, cpu / 1000


def page_ms(settings: dict, steps: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from micrograd.playground import serve
    from tests.conftest import chromium_path

    path = chromium_path()
    if path is None:
        raise SystemExit("no Chromium: run scripts/ensure-chromium")
    server = serve(port=0)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=path, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            # As the Train view's link does: its chosen point, left in this tab's sessionStorage
            page.evaluate(
                """async (settings) => {
              const { httpTransport, POINT_KEY } = await import("./static/common.js");
              const t = httpTransport();
              await t.call('train', 'config', settings);
              const point = await t.call('train', 'point', {});
              sessionStorage.setItem(POINT_KEY, JSON.stringify(point));
            }""",
                settings,
            )
            page.goto(server.url + "?from=train")
            page.wait_for_selector("body[data-ready='1']")
            page.get_by_role("button", name="Forward pass", exact=True).click()
            page.wait_for_function(
                "() => document.querySelector('#status').textContent.includes('Forward pass done')"
            )

            def clicks() -> list[float]:
                return [page.evaluate(CLICK_AND_WAIT) for _ in range(steps)]

            first = traced(browser, page, clicks)
            # the end of the pass (asked for directly, then drawn once by a click)
            total = page.evaluate(
                "async (n) => {"
                " const { httpTransport } = await import('./static/common.js');"
                " const t = httpTransport();"
                " const all = (await t.call('explorer', 'state', {})).steps;"
                " for (let i = 0; i < all - 2 * n - 1; i++)"
                "   await t.call('explorer', 'step', {});"
                " return all; }",
                steps,
            )
            page.evaluate(CLICK_AND_WAIT)
            deep = traced(browser, page, clicks)
            browser.close()
    finally:
        server.stop()
    return {"first": first, "deep": deep, "total": total}


def summary(name: str, times: list[float], cpu: float | None = None) -> str:
    text = (
        f"{name}: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
        f"over {len(times)} steps"
    )
    return text if cpu is None else f"{text}; main thread {cpu / len(times):.1f} ms CPU a step"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--hidden", default="16,16", help="the network's hidden layers, e.g. 16,16")
    args = p.parse_args(argv)
    settings = dict(SETTINGS, hidden=[int(n) for n in args.hidden.split(",")])
    print(
        f"settings: {json.dumps(settings)}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    print(summary("server (Tab.call explorer/step)", server_ms(settings, args.steps)))
    got = page_ms(settings, args.steps)
    print(summary("page, the first steps (click to painted, Chromium)", *got["first"]))
    print(
        summary(
            f"page, the last steps of {got['total']} (click to painted, Chromium)", *got["deep"]
        )
    )
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    raise SystemExit(recorded("bench_explorer_page", main))
