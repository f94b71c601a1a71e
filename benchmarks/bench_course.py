"""The course in the browser (`micrograd site`'s ``course/``, a JupyterLite app), measured in
Chromium with every request outside the site aborted, served by ``python -m http.server`` from
this machine:

- its size: files and MB under ``course/``;
- the time from opening a notebook (``course/lab/index.html?path=01_...ipynb``) until its kernel
  is idle, on a first visit (a fresh browser profile: nothing cached) and again in the same
  profile (the browser's cache warm);
- the time from opening the REPL with the README's ten lines (``course/repl/index.html?code=...``)
  until it has printed their answer, first visit.

    python benchmarks/bench_course.py              # builds the site into a temporary folder
    python benchmarks/bench_course.py --runs 5 --site public    # an existing build

Medians of --runs (each first visit in a new profile).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from micrograd.commands.cli import main as micrograd_main  # noqa: E402
from tests.conftest import chromium_path  # noqa: E402

NOTEBOOK = "01_derivatives_and_value.ipynb"
IDLE = """(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && w.context.path === path && k.status === 'idle'; }"""


def ten_lines() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("## Ten lines", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def measure(base: str, runs: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    got: dict[str, list[float]] = {"first": [], "cached": [], "repl": []}
    outside: list[str] = []

    def route(r: object) -> None:
        url = r.request.url  # type: ignore[attr-defined]
        if url.startswith(base):
            r.continue_()  # type: ignore[attr-defined]
        else:
            outside.append(url)
            r.abort()  # type: ignore[attr-defined]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True)
        for i in range(runs):
            for kind in ("notebook", "repl"):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.route("**/*", route)
                page = context.new_page()
                if kind == "notebook":
                    for visit in ("first", "cached"):
                        start = time.monotonic()
                        page.goto(base + f"course/lab/index.html?path={NOTEBOOK}")
                        page.wait_for_function(IDLE, arg=NOTEBOOK, timeout=600_000)
                        got[visit].append(time.monotonic() - start)
                else:
                    start = time.monotonic()
                    page.goto(
                        base + "course/repl/index.html?code=" + urllib.parse.quote(ten_lines())
                    )
                    page.locator(".jp-OutputArea-output").filter(has_text="-8.0").first.wait_for(
                        timeout=600_000
                    )
                    got["repl"].append(time.monotonic() - start)
                context.close()
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in got.items()),
                flush=True,
            )
        browser.close()
    if outside:
        raise SystemExit(f"requests outside the site: {outside[:3]}")
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", help="an existing `micrograd site` folder (default: build one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-course-") as tmp:
        if args.site:
            site = pathlib.Path(args.site).resolve()
        else:
            site = pathlib.Path(tmp, "s")
            said = io.StringIO()
            start = time.monotonic()
            with contextlib.redirect_stdout(said):
                status = micrograd_main(["site", str(site)])
            if status != 0:
                raise SystemExit(f"micrograd site failed: {said.getvalue()}")
            print(
                f"micrograd site: {time.monotonic() - start:.1f} s, "
                f"{said.getvalue().strip().splitlines()[-2]}"
            )
        files = [p for p in (site / "course").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"course/: {len(files)} files, {size / 1e6:.1f} MB")
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
            cwd=site.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            port = re.search(r"port (\d+)", server.stdout.readline()).group(1)  # type: ignore
            got = measure(f"http://127.0.0.1:{port}/{site.name}/", args.runs)
        except KeyboardInterrupt:
            print("interrupted")
            return 130
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(
        f"kernel idle after opening a notebook: first visit {statistics.median(got['first']):.1f}"
        f" s, cached {statistics.median(got['cached']):.1f} s; the REPL's answer to the ten "
        f"lines: {statistics.median(got['repl']):.1f} s (medians of {args.runs})"
    )
    with open("/proc/loadavg") as f:
        print(f"load average: {f.read().split()[0]}")
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_course", main))
