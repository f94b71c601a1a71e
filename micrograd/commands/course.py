"""The `micrograd course` command: the course's notebooks, as a learner's copies, opened in
JupyterLab.

    pip install "micrograd-plus[course]"
    micrograd course                      # ./micrograd-course, then JupyterLab on it
    micrograd course DIR --no-solutions   # copies without the folded solutions, to hand out
    micrograd course DIR --no-solutions --zip --no-lab   # and DIR.zip, one archive of them

The copies come from the installed package (`micrograd/notebooks/`). A file already in DIR is
kept, never overwritten (it holds the learner's work), and the command says so. Each copy is
written atomically. JupyterLab (the `course` extra brings it, and a kernel) then opens on DIR;
Ctrl-C stops it. Exit status: JupyterLab's own, 1 when JupyterLab is not installed (the copies
are written all the same), 2 when DIR cannot be written.
"""

from __future__ import annotations

import argparse
import importlib.resources
import importlib.util
import io
import json
import os
import pathlib
import subprocess
import sys
import zipfile
from typing import Any

from ..core.atomic import atomic_write, describe
from ..core.setup_cell import installed_setup
from ..grading.graded_notebook import without_solutions as hand_out

DEFAULT_DIR = "micrograd-course"


def add_course_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd course` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "course",
        help="write the course's notebooks for a learner and open JupyterLab on them",
        description=(
            "Write the course's notebooks (a learner's copies: exercises to fill in, solutions "
            "folded) into DIR, keeping any file already there, then open JupyterLab on DIR."
        ),
    )
    p.add_argument(
        "dir",
        nargs="?",
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"where the copies go (default ./{DEFAULT_DIR})",
    )
    p.add_argument(
        "--no-solutions",
        action="store_true",
        help="copies without the folded solutions (for a teacher to hand out)",
    )
    p.add_argument(
        "--zip",
        action="store_true",
        help="also write the course's copies as one archive, DIR.zip, to hand out",
    )
    p.add_argument("--no-lab", action="store_true", help="write the copies, do not open JupyterLab")
    p.add_argument(
        "--no-browser",
        action="store_true",
        help="start JupyterLab without opening a browser (it prints its address)",
    )
    p.add_argument("--port", type=int, metavar="N", help="JupyterLab's port (default: its own)")
    p.set_defaults(run=run)
    return p


def notebooks() -> dict[str, str]:
    """The course's notebooks in the installed package: file name -> its JSON text."""
    folder = importlib.resources.files("micrograd") / "notebooks"
    return {
        e.name: e.read_text(encoding="utf-8")
        for e in sorted(folder.iterdir(), key=lambda e: e.name)
        if e.name.endswith(".ipynb") and e.name[:2].isdigit()
    }


def without_solutions(text: str) -> str:
    """The notebook (JSON text) as a hand-out: `grading.graded_notebook.without_solutions` (no
    folded solution, no sentence promising one), the same as the site's course without
    solutions."""
    return json.dumps(hand_out(json.loads(text)), indent=1, ensure_ascii=False) + "\n"


def write_copies(folder: pathlib.Path, solutions: bool = True) -> tuple[list[str], list[str]]:
    """Write the copies into `folder`: (written, kept) file names."""
    folder.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for name, text in notebooks().items():
        target = folder / name
        if target.exists():
            kept.append(name)
            continue
        text = installed_setup(text)
        atomic_write(target, text if solutions else without_solutions(text))
        written.append(name)
    return written, kept


def zipped(solutions: bool = True) -> bytes:
    """The course's copies as one zip archive (what `write_copies` writes, in a folder
    micrograd-course/), to hand out; but with the full set-up cell, which installs micrograd
    wherever a learner opens them (the folder's copies run where it is installed already)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in notebooks().items():
            archive.writestr(
                f"{DEFAULT_DIR}/{name}", text if solutions else without_solutions(text)
            )
    return out.getvalue()


def run(args: argparse.Namespace) -> int:
    folder = pathlib.Path(args.dir)
    try:
        written, kept = write_copies(folder, solutions=not args.no_solutions)
    except OSError as exc:
        print(f"micrograd course: error: {describe(exc)}", file=sys.stderr)
        return 2
    what = "without solutions" if args.no_solutions else "solutions folded"
    if args.zip:
        archive = folder.with_name(folder.name + ".zip")
        try:
            atomic_write(archive, zipped(solutions=not args.no_solutions))
        except OSError as exc:
            print(f"micrograd course: error: {describe(exc)}", file=sys.stderr)
            return 2
        print(
            f"micrograd course: wrote {archive} (the course's {len(notebooks())} notebooks, {what})"
        )
    if written:
        print(f"micrograd course: wrote {len(written)} notebooks into {folder} ({what})")
    if kept:
        print(
            f"micrograd course: kept {len(kept)} already in {folder}, never overwritten (your "
            f"work stays; delete a file to get a fresh copy): {', '.join(kept)}"
        )
    if args.no_lab:
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        print(
            "micrograd course: JupyterLab is not installed here: pip install "
            '"micrograd-plus[course]" (or open the copies in any Jupyter)',
            file=sys.stderr,
        )
        return 1
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder.resolve()}"]
    if args.no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # a container's root: JupyterLab refuses it otherwise
    if args.port is not None:
        cmd.append(f"--port={args.port}")
    print(f"micrograd course: opening JupyterLab on {folder} (Ctrl-C stops it)", flush=True)
    lab = subprocess.Popen(cmd)
    try:
        return lab.wait()
    except KeyboardInterrupt:
        lab.terminate()
        lab.wait()
        print("micrograd course: JupyterLab stopped", file=sys.stderr)
        return 130
