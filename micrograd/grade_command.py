"""The `micrograd grade` command: run learners' filled-in notebooks and report each exercise.

    micrograd grade class/*/*.ipynb --csv grades.csv --timeout 120

The grading is library code in `grade.py`; this module is the command line around it: the
options, a table on stdout, the CSV (written atomically), progress on stderr, and the exit
status (0 only when every exercise of every submission passed; 1 otherwise; 2 for a bad option
or a CSV that cannot be written; 130 on Ctrl-C, with nothing written).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import sys
from collections import Counter
from typing import Any

from . import grade
from .atomic import atomic_write, check_writable, describe

COLUMNS = ("submission", "notebook", "exercise", "result", "detail")


def _seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--timeout needs a number of seconds, got {text!r}") from None
    if not 0 < x < math.inf:
        raise argparse.ArgumentTypeError(f"--timeout must be a positive number, got {text}")
    return x


def add_grade_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd grade` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "grade",
        help="run learners' filled-in notebooks and report each exercise",
        description=(
            "Run each learner's notebook top to bottom in a fresh kernel (its code cells only: "
            "the solutions never run) and report every exercise: passed, failed (with the "
            "checker's one-line cause), error, timeout or not attempted. Exit status 0 only "
            "when every exercise of every submission passed."
        ),
    )
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION.ipynb",
                   help="the learners' notebooks")
    p.add_argument("--csv", metavar="FILE",
                   help="also write the table as CSV: " + ",".join(COLUMNS))
    p.add_argument("--timeout", type=_seconds, default=grade.DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds per notebook (default {grade.DEFAULT_TIMEOUT:g})")
    p.set_defaults(run=run)
    return p


def _shared(paths: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Per folder, the files a learner's notebook writes for another (my_value.py from notebook
    2's last exercise), read from the submissions in that folder."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in paths:
        try:
            nb = grade.read(path)
        except ValueError:
            continue
        for exercise in grade.SHARED_FILES:
            written = grade.shared_file(nb, exercise)
            if written is not None:
                folder = os.path.dirname(os.path.abspath(path))
                found.setdefault(folder, []).append(written)
    return found


def table(rows: list[grade.Row]) -> str:
    """The rows as an aligned text table, the detail last, and a summary line."""
    cells = [COLUMNS] + [(r.submission, r.notebook, r.exercise, r.result, r.detail) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(4)) + "  " + c[4] for c in cells]
    counts = Counter(r.result for r in rows if r.exercise)
    subs = len(dict.fromkeys(r.submission for r in rows))
    parts = [f"{counts[k]} {k}" for k in grade.RESULTS if counts[k]]
    total = sum(counts.values())
    lines.append(f"{subs} submission{'s' * (subs != 1)}, {total} exercise"
                 f"{'s' * (total != 1)}: {', '.join(parts) or 'none'}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def to_csv(rows: list[grade.Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow((r.submission, r.notebook, r.exercise, r.result, r.detail))
    return out.getvalue()


def _error(message: str, status: int) -> int:
    print(f"micrograd grade: error: {message}", file=sys.stderr)
    return status


def run(args: argparse.Namespace) -> int:
    """`micrograd grade`: returns the exit status."""
    try:
        grade.require()
    except ImportError as exc:
        return _error(str(exc), 1)
    if args.csv:
        try:
            check_writable(args.csv)  # before any notebook runs, not after
        except OSError as exc:
            return _error(describe(exc), 2)
    shared = _shared(args.submissions)
    rows: list[grade.Row] = []
    done = 0
    try:
        for path in args.submissions:
            print(f"micrograd grade: [{done + 1}/{len(args.submissions)}] {path}", file=sys.stderr)
            folder = os.path.dirname(os.path.abspath(path))
            rows += grade.grade(path, args.timeout, shared.get(folder, ()))
            done += 1
    except KeyboardInterrupt:
        print(f"micrograd grade: interrupted after {done} of {len(args.submissions)} "
              f"submissions; nothing written", file=sys.stderr)
        return 130
    sys.stdout.write(table(rows))
    if args.csv:
        try:
            atomic_write(args.csv, to_csv(rows))
        except OSError as exc:
            return _error(describe(exc), 1)
    return 0 if all(r.result == "passed" for r in rows) else 1
