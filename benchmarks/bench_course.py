"""The course link's size and start (`micrograd site`'s ``course/``, a JupyterLite app), measured
in Chromium with every request outside the site aborted, the built site served by
``python -m http.server`` on 127.0.0.1:

- the size on disk of the whole site with its course, and of ``course/`` alone;
- the time from opening the REPL (``course/repl/index.html?code=print(...)``) until it has
  printed its first output;
- the time from opening notebook 1 as the start page's "Start here" opens it
  (``course/notebooks/index.html?path=01_...ipynb``) until its kernel is idle;

each cold (a new browser profile: nothing cached) and on a second visit (the same profile again:
the browser's cache warm); and what a first visit to notebook 1 transfers: every file the
browser asked for, its bytes on disk beside its bytes gzipped as a static host serves them
(`over_the_wire`: text, JavaScript, JSON and WebAssembly gzipped at level 6; files already
compressed, ``.gz``, wheels, fonts, images, as they are).

    python benchmarks/bench_course.py              # builds the site into a temporary folder
    python benchmarks/bench_course.py --runs 5 --site public    # an existing build
    python benchmarks/bench_course.py --runs 1 --site public --files   # and every file fetched

Medians of --runs; the load average (``uptime``) is printed with them, since the machine this
runs on is often shared.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
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

_saved = dict(os.environ)  # (conftest isolates the suite's tests from makemore's names on
from tests.conftest import chromium_path  # noqa: E402  (import: the site built here is a user's)

os.environ.clear()
os.environ.update(_saved)

NOTEBOOK = "01_derivatives_and_value.ipynb"
IDLE = """(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && w.context.path === path && k.status === 'idle'; }"""
REPL_CODE = "print(6 * 7, 'from the course')"
REPL_SAYS = "42 from the course"
KINDS = ("repl cold", "repl again", "notebook cold", "notebook again")


def size(folder: pathlib.Path) -> tuple[int, int]:
    """(files, bytes) under `folder`."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


# Served as they are: already compressed (a static host does not gzip them again)
COMPRESSED = (".gz", ".whl", ".zip", ".woff2", ".woff", ".png", ".ico", ".jpg", ".gif")


def over_the_wire(files: list[pathlib.Path]) -> tuple[int, int, list[tuple[int, str]]]:
    """(bytes on disk, bytes a static host sends, the five largest as (bytes sent, name)) of
    `files`: each gzipped (level 6, as nginx and GitHub Pages do) unless compressed already."""
    import gzip

    disk = wire = 0
    each = []
    for f in files:
        data = f.read_bytes()
        disk += len(data)
        sent = len(data) if f.name.endswith(COMPRESSED) else len(gzip.compress(data, 6))
        wire += sent
        each.append((sent, f.name))
    return disk, wire, sorted(each, reverse=True)[:5]


def measure(
    base: str, runs: int, folder: pathlib.Path | None = None
) -> tuple[dict[str, list[float]], list[pathlib.Path]]:
    """The times of each kind of visit, and the files (under `folder`, the served root) that
    the first cold visit to the notebook asked for."""
    from playwright.sync_api import sync_playwright

    got: dict[str, list[float]] = {k: [] for k in KINDS}
    outside: list[str] = []
    asked: list[str] = []  # the URLs of the first cold notebook visit

    def route(r: object) -> None:
        url = r.request.url  # type: ignore[attr-defined]
        if url.startswith(base):
            r.continue_()  # type: ignore[attr-defined]
        else:
            outside.append(url)
            r.abort()  # type: ignore[attr-defined]

    def repl(page: object) -> None:
        page.goto(base + "course/repl/index.html?code=" + urllib.parse.quote(REPL_CODE))  # type: ignore[attr-defined]
        output = page.locator(".jp-OutputArea-output").filter(has_text=REPL_SAYS)  # type: ignore[attr-defined]
        output.first.wait_for(timeout=600_000)

    def notebook(page: object) -> None:
        page.goto(base + f"course/notebooks/index.html?path={NOTEBOOK}")  # type: ignore[attr-defined]
        page.wait_for_function(IDLE, arg=NOTEBOOK, timeout=600_000)  # type: ignore[attr-defined]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True)
        for i in range(runs):
            for kind, visit in (("repl", repl), ("notebook", notebook)):
                # a new profile each time: the first visit finds nothing cached
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.route("**/*", route)
                for when in ("cold", "again"):
                    page = context.new_page()
                    if i == 0 and kind == "notebook" and when == "cold":
                        page.on("requestfinished", lambda r: asked.append(r.url))
                    start = time.monotonic()
                    visit(page)
                    got[f"{kind} {when}"].append(time.monotonic() - start)
                    page.close()
                context.close()
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in got.items()),
                flush=True,
            )
        browser.close()
    if outside:
        raise SystemExit(f"requests outside the site: {outside[:3]}")
    files = []
    for url in dict.fromkeys(asked):  # each file once (the browser asks some twice)
        path = urllib.parse.urlsplit(url).path
        if folder is not None and (folder / path.lstrip("/")).is_file():
            files.append(folder / path.lstrip("/"))
        elif folder is not None and (folder / path.lstrip("/") / "index.html").is_file():
            files.append(folder / path.lstrip("/") / "index.html")
    return got, files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", help="an existing `micrograd site` folder (default: build one)")
    parser.add_argument(
        "--files", action="store_true", help="list every file a first visit fetches, largest first"
    )
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
            print(f"micrograd site: {time.monotonic() - start:.1f} s")
        n, total = size(site)
        n_course, course = size(site / "course")
        print(
            f"the site with its course: {n} files, {total / 1e6:.1f} MB on disk "
            f"(course/: {n_course} files, {course / 1e6:.1f} MB)",
            flush=True,
        )
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
            cwd=site.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            port = re.search(r"port (\d+)", server.stdout.readline()).group(1)  # type: ignore
            got, files = measure(f"http://127.0.0.1:{port}/{site.name}/", args.runs, site.parent)
        except KeyboardInterrupt:
            print("interrupted")
            return 130
        finally:
            server.terminate()
            server.wait(timeout=10)
        median = {k: statistics.median(v) for k, v in got.items()}
        print(
            f"the REPL's first output: {median['repl cold']:.1f} s cold, "
            f"{median['repl again']:.1f} s on a second visit; notebook 1's kernel idle: "
            f"{median['notebook cold']:.1f} s cold, {median['notebook again']:.1f} s on a second "
            f"visit (medians of {args.runs})"
        )
        disk, wire, largest = over_the_wire(files)
        print(
            f"a first visit to notebook 1 transfers {len(files)} files: {disk / 1e6:.1f} MB on "
            f"disk, {wire / 1e6:.1f} MB over the wire (gzipped as a static host serves them); "
            "the largest: " + ", ".join(f"{name} {sent / 1e6:.1f} MB" for sent, name in largest)
        )
        if args.files:
            for sent, path in sorted(
                ((over_the_wire([f])[1], f.relative_to(site)) for f in files), reverse=True
            ):
                print(f"  {sent / 1e6:7.3f} MB  {path}")
    with open("/proc/loadavg") as f:
        print(f"load average (1, 5, 15 min): {' '.join(f.read().split()[:3])}")
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_course", main))
