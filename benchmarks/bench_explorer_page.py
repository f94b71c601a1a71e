"""Benchmark: the backprop explorer's page on a large graph, in Chromium.

What a learner waits for after pressing Backward step on the largest graph the explorer shows: a
Train view point of a 2-16-16-1 network with five inputs (460 values, near the explorer's 500
cap), opened in the explorer page as the Train view's link does. For each of the first `--steps`
backward steps it measures, in the page, the time from the click until the page has drawn the
answer (the new chain-rule entry is in the log, and a frame has been painted after it), and,
in-process, what the server needs to compute the same step (`Tab.call("explorer", "step")`).
The difference is the page's own work: patching every node's numbers, the highlights, the log.

    python3 benchmarks/bench_explorer_page.py [--steps 20] [--hidden 16,16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

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
    from micrograd.playground.train_settings import Settings
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


def page_ms(settings: dict, steps: int) -> list[float]:
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
            page.evaluate("""async (settings) => {
              const t = httpTransport();
              await t.call('train', 'config', settings);
              const point = await t.call('train', 'point', {});
              sessionStorage.setItem(POINT_KEY, JSON.stringify(point));
            }""", settings)
            page.goto(server.url + "?from=train")
            page.wait_for_selector("body[data-ready='1']")
            page.get_by_role("button", name="Forward pass", exact=True).click()
            page.wait_for_function("() => document.querySelector('#status').textContent"
                                   ".includes('Forward pass done')")
            times = [page.evaluate(CLICK_AND_WAIT) for _ in range(steps)]
            browser.close()
    finally:
        server.stop()
    return times


def summary(name: str, times: list[float]) -> str:
    return (f"{name}: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
            f"over {len(times)} steps")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--hidden", default="16,16", help="the network's hidden layers, e.g. 16,16")
    args = p.parse_args(argv)
    settings = dict(SETTINGS, hidden=[int(n) for n in args.hidden.split(",")])
    print(f"settings: {json.dumps(settings)}; {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}")
    print(summary("server (Tab.call explorer/step)", server_ms(settings, args.steps)))
    print(summary("page (click to painted, Chromium)", page_ms(settings, args.steps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
