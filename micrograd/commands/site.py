"""The `micrograd site OUT_DIR` command: write the playground as a static site that runs
micrograd itself in the browser (`site/static_site.py` builds it). One line and an exit status for
every failure; Ctrl-C is one line too.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

_DESCRIPTION = """\
Write the playground (the backprop explorer and the Train view) as a folder of static files
that any web host serves: GitHub Pages, a university's web space, `python -m http.server`.
Nothing runs on the host: each visitor's browser runs micrograd itself, on Python in
WebAssembly (Pyodide) in a Web Worker, so a class of any size costs the host nothing.

OUT_DIR/index.html is the explorer and OUT_DIR/train.html the Train view. Every URL in the site
is relative, so the folder works under any path, and nothing is fetched from anywhere else at
run time. Pyodide comes from the npm registry the first time (npm is needed then; its integrity
is checked) and is cached, so later builds need no network.

OUT_DIR/course/ is the course in the browser: the course's notebooks, `check` and the widgets in a
JupyterLite app (JupyterLab on Pyodide), linked from the pages. Its build tools come with
pip install "micrograd-plus[site]"; the wheels it ships come from PyPI the first time (checked by
sha256) and are cached beside Pyodide.
"""

_EPILOG = """\
examples:
  micrograd site public                  # then: cd public && python -m http.server
  micrograd site docs --cache /tmp/mg    # GitHub Pages can publish a repository's docs/

exit status: 0 written; 1 Pyodide could not be had (npm missing, no network the first time, a
wrong archive) or the folder cannot be written; 130 interrupted.
"""


def add_site_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd site` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "site",
        help="write the playground as a static web site that runs micrograd in the browser",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", help="the folder to write (made if missing)")
    parser.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="where the Pyodide archive is kept between builds (default: $MICROGRAD_CACHE, "
        "else ~/.cache/micrograd)",
    )
    parser.add_argument(
        "--no-solutions",
        action="store_true",
        help="the course without its solutions (a class's hand-out): no folded solution, and "
        "no text that promises one",
    )
    parser.add_argument(
        "--no-course",
        action="store_true",
        help="leave out the course (the notebooks in a JupyterLite app, OUT_DIR/course/): a "
        "quicker build, and no need for the extra micrograd-plus[site]",
    )
    parser.add_argument(
        "--no-names",
        action="store_true",
        help="leave out makemore's names.txt (by default the site carries it, as "
        "micrograd.data.names() finds it: MICROGRAD_NAMES_FILE, the cache, else downloaded "
        "once): the GPT view then trains on its built-in words, and the course's chapters 7 "
        "and 8 ask for an uploaded copy",
    )
    parser.set_defaults(run=run_site)
    return parser


WHERE = {"cache": "from the cache", "npm": "fetched from the npm registry"}  # where Pyodide was had


def run_site(args: argparse.Namespace) -> int:
    from ..site.course_app import add_course
    from ..site.static_site import SiteError, build_site

    started = time.monotonic()
    try:
        report = build_site(
            args.out_dir,
            args.cache,
            log=lambda line: print(line, flush=True),
            course=None
            if args.no_course
            else functools.partial(add_course, solutions=not args.no_solutions),
            names=not args.no_names,
        )
    except (SiteError, ValueError, OSError) as exc:
        print(f"micrograd site: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "micrograd site: interrupted (the files written so far are whole; run it again)",
            file=sys.stderr,
        )
        return 130
    print(
        f"wrote {report.files} files, {report.size / 1e6:.1f} MB, to {report.folder} in "
        f"{time.monotonic() - started:.1f} s (Pyodide {WHERE[report.pyodide_from]})\n"
        f"try it: cd {report.folder} && python3 -m http.server, then open http://127.0.0.1:8000/"
    )
    return 0
