"""The `micrograd grade` command: run learners' filled-in notebooks and report each exercise.

    micrograd grade CLASS_DIR --csv grades.csv --summary summary.csv --html grades.html
    micrograd grade ada/*.ipynb bob/*.ipynb --timeout 30 --jobs 4

A learner is a folder directly under CLASS_DIR (GitHub Classroom's layout: one repository per
learner; every notebook under it is theirs); notebooks directly in CLASS_DIR, or named one by one,
belong to their own folder. The grading is library code in `grading/grade.py` (in the sandbox of
`grading/sandbox.py`); this module is the command line around it: the options, a table on stdout,
each notebook's result kept as it is done (`grading/store.py`: ``--results DIR``, by default
``grade-results`` beside the first report; a second run grades only what is new or changed,
``--regrade`` everything), the reports made from every result kept (`grading/class_report.py`,
written atomically, and only once every notebook's processes are gone), progress on stderr, and
the exit status (0 when nothing failed, raised an error, timed out or was blocked; 1 otherwise;
2 for a bad option, no sandbox (bubblewrap missing) without ``--no-sandbox``, a report that
cannot be written or a folder where learners would share my_value.py; 130 on Ctrl-C, with the
results graded so far kept and no report written).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import os
import pathlib
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..core.atomic import atomic_write, check_writable, describe
from ..grading import class_report as grade_report
from ..grading import grade, handin
from ..grading import gradebook as grade_book
from ..grading import sandbox as grade_sandbox
from ..grading import store as grade_store
from ..grading import workers as grade_workers
from .options import errors, positive_number, whole_number

COLUMNS = ("submission", "notebook", "exercise", "result", "detail")
BAD = ("failed", "error", "timeout", "blocked")  # what makes the exit status 1


def add_grade_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd grade` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "grade",
        help="run learners' filled-in notebooks and report each exercise",
        description=(
            "Run each learner's notebook top to bottom in a fresh kernel, in a sandbox (Linux, "
            "bubblewrap), with the course's own check cells (whatever the copy did to them), "
            "and report every exercise: passed, failed (with the checker's one-line cause), "
            "error, timeout, blocked (by an earlier exercise, named), not attempted or skipped "
            "(the check needs what this machine lacks). A learner is a folder directly under "
            "CLASS_DIR, or an archive there, LEARNER.zip (the browser course's Download my "
            "work), unpacked safely into CLASS_DIR/.handed-in/. Exit status 0 when nothing "
            "failed, raised an error, timed out or was blocked."
        ),
    )
    p.add_argument(
        "submissions",
        nargs="+",
        metavar="CLASS_DIR|NOTEBOOK.ipynb|LEARNER.zip",
        help="a class folder (a folder or an archive per learner), learners' notebooks or archives",
    )
    p.add_argument(
        "--csv",
        metavar="FILE",
        help="also write the rows as CSV: " + ",".join(grade_report.COLUMNS),
    )
    p.add_argument(
        "--summary",
        metavar="FILE",
        help="also write one CSV row per learner: " + ",".join(grade_report.SUMMARY),
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write one offline page, learners x exercises (click a result "
        "for its cause, a heading to sort)",
    )
    p.add_argument(
        "--feedback",
        metavar="DIR",
        help="also write one page per learner into DIR (made if missing), holding only their "
        "own results: each cause in full and what to try next",
    )
    p.add_argument(
        "--gradebook",
        metavar="FILE",
        help="also write the points per notebook and the total of each learner on --roster, "
        "as CSV for the school's gradebook (--format)",
    )
    p.add_argument(
        "--roster",
        metavar="ROSTER.csv",
        help="the class list the gradebook follows: a CSV whose header names an id, login "
        "(github_username, username), email or name column; learners' folders are matched to "
        "it (GitHub Classroom's assignment-login too)",
    )
    p.add_argument(
        "--format",
        choices=grade_book.FORMATS,
        default="plain",
        help="the gradebook's columns: Canvas's import, Moodle's, or plain (default)",
    )
    p.add_argument(
        "--timeout",
        type=positive_number("--timeout"),
        default=None,
        metavar="S",
        help=f"seconds per cell (default: {grade.FACTOR:g} times what the course's own "
        f"solution takes for it here, at least {grade.FLOOR:g})",
    )
    p.add_argument(
        "--jobs",
        type=whole_number("--jobs", 1, 256),
        default=os.cpu_count() or 1,
        metavar="N",
        help=f"notebooks graded at once (default: the number of cores, {os.cpu_count() or 1} here)",
    )
    p.add_argument(
        "--results",
        metavar="DIR",
        help="keep each notebook's result here as it is graded (default: grade-results beside "
        "the first report; none without reports); a second run grades only what is new or "
        "changed, and the reports hold every result kept",
    )
    p.add_argument(
        "--regrade",
        action="store_true",
        help="grade every submission again, even those whose results are kept and unchanged",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the submissions without bubblewrap, with your permissions (only "
        "resource limits apply)",
    )
    p.set_defaults(run=run)
    return p


def _hidden(path: pathlib.Path) -> bool:
    return path.name.startswith(".")


def _notebooks_under(folder: pathlib.Path) -> list[pathlib.Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [
            pathlib.Path(dirpath, f)
            for f in sorted(filenames)
            if f.endswith(".ipynb") and not f.startswith(".")
        ]
    return found


def submissions(
    paths: list[str], refused: list[grade.Row] | None = None
) -> list[tuple[str, str, str, bool]]:
    """(notebook path, learner, the learner's folder, whether that folder is the learner's
    alone) for each notebook the arguments name: a folder's sub-folders are its learners, each
    with every notebook under it (and every file: theirs alone); a notebook directly in a
    folder, or named, belongs to its folder (shared: only my_value.py is taken from it); an
    archive (LEARNER.zip, the browser course's "Download my work") in a folder, or named, is
    its learner's, unpacked (`grading.handin`). An archive it refuses is a row in `refused`."""
    found: list[tuple[str, str, str, bool]] = []
    for arg in paths:
        here = pathlib.Path(arg)
        if not here.is_dir() and here.suffix.lower() == ".zip":
            found += _handed_in([here], here.parent, refused)
            continue
        if not here.is_dir():
            learner = os.path.dirname(arg) or "."
            found.append((arg, learner, os.path.abspath(learner), False))
            continue
        for f in sorted(p for p in here.iterdir() if p.suffix == ".ipynb" and not _hidden(p)):
            found.append((str(f), arg, os.path.abspath(arg), False))
        for sub in sorted(p for p in here.iterdir() if p.is_dir() and not _hidden(p)):
            for f in _notebooks_under(sub):
                found.append((str(f), sub.name, os.path.abspath(sub), True))
        archives = [p for p in here.iterdir() if p.suffix.lower() == ".zip" and not _hidden(p)]
        found += _handed_in(sorted(archives), here, refused)
    return found


def _handed_in(
    archives: list[pathlib.Path], here: pathlib.Path, refused: list[grade.Row] | None
) -> list[tuple[str, str, str, bool]]:
    """The notebooks of the archives in `here`, each unpacked into here/.handed-in/LEARNER."""
    found: list[tuple[str, str, str, bool]] = []
    for archive in archives:
        try:
            if (here / archive.stem).is_dir():
                raise handin.Refused(
                    f"{archive}: a folder {archive.stem} is beside it; which is the work of "
                    f"{archive.stem}? (keep one)"
                )
            folder = handin.unpack(archive, here / handin.UNPACKED)
        except handin.Refused as exc:
            flag = f"tried to reach outside its folder: {exc}" if exc.outside else ""
            row = grade.Row(str(archive), "", "", "error", str(exc), archive.stem, flag)
            if refused is None:
                raise
            refused.append(row)
            continue
        notebooks = _notebooks_under(folder)
        if not notebooks and refused is not None:
            refused.append(
                grade.Row(str(archive), "", "", "error", "no notebooks in it", archive.stem)
            )
        found += [(str(f), archive.stem, os.path.abspath(folder), True) for f in notebooks]
    return found


def _shared(
    subs: list[tuple[str, str, str, bool]],
) -> tuple[dict[str, list[tuple[str, str]]], str]:
    """Per learner's folder, the file a learner's notebook writes for another (my_value.py from
    notebook 2's last exercise); and the one line refusing a folder where two notebooks would
    write it for a third ("" if none)."""
    writers: dict[str, list[tuple[str, tuple[str, str]]]] = {}
    readers: dict[str, list[str]] = {}
    for path, _, folder, _ in subs:
        try:
            nb = grade.read(path)
        except ValueError:
            continue
        for exercise, name in grade.SHARED_FILES.items():
            written = grade.shared_file(nb, exercise)
            if written is not None:
                writers.setdefault(folder, []).append((path, written))
            elif any(
                name.removesuffix(".py") in c.source for c in nb.cells if c.cell_type == "code"
            ):
                readers.setdefault(folder, []).append(path)
    for folder, found in writers.items():
        if len(found) > 1 and readers.get(folder):
            names = ", ".join(os.path.basename(p) for p, _ in found)
            name = found[0][1][0]
            return {}, (
                f"{len(found)} notebooks in {folder} write {name} ({names}), which "
                f"{os.path.basename(readers[folder][0])} imports: grading it would mix "
                f"learners' work; give each learner a folder of their own "
                f"(CLASS_DIR/LEARNER/..., GitHub Classroom's layout)"
            )
    return {folder: [w for _, w in found[:1]] for folder, found in writers.items()}, ""


def table(rows: list[grade.Row]) -> str:
    """The rows as an aligned text table, the detail last, and a summary line."""
    cells = [COLUMNS] + [(r.submission, r.notebook, r.exercise, r.result, r.detail) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(4)) + "  " + c[4] for c in cells]
    counts = Counter(r.result for r in rows if r.exercise)
    subs = len(dict.fromkeys(r.submission for r in rows))
    parts = [f"{counts[k]} {k}" for k in grade.RESULTS if counts[k]]
    total = sum(counts.values())
    lines.append(
        f"{subs} submission{'s' * (subs != 1)}, {total} exercise"
        f"{'s' * (total != 1)}: {', '.join(parts) or 'none'}"
    )
    return "\n".join(line.rstrip() for line in lines) + "\n"


def to_csv(rows: list[grade.Row]) -> str:
    return grade_report.to_csv(rows)


_error = errors("grade")


def _as_completed(
    futures: dict[concurrent.futures.Future, int], every: float = 0.2
) -> Iterator[concurrent.futures.Future]:
    """The futures as they finish, waiting `every` seconds at a time. A wait with no timeout
    sleeps in the kernel until a future finishes: a Ctrl-C taken by another thread of the process
    (any thread may take it: a notebook kernel's, the playground's) only sets Python's flag, which
    the main thread reads when it wakes."""
    pending = set(futures)
    while pending:
        done, pending = concurrent.futures.wait(
            pending, timeout=every, return_when=concurrent.futures.FIRST_COMPLETED
        )
        yield from sorted(done, key=futures.__getitem__)


def run(args: argparse.Namespace) -> int:
    """`micrograd grade`: returns the exit status."""
    try:
        grade.require()
    except ImportError as exc:
        return _error(str(exc), 1)
    refused = None if args.no_sandbox else grade_sandbox.refusal()
    if refused:
        return _error(refused, 2)
    outputs = [f for f in (args.csv, args.summary, args.html, args.gradebook) if f]
    if args.feedback:
        try:
            os.makedirs(args.feedback, exist_ok=True)
            check_writable(os.path.join(args.feedback, "learner.html"))
        except OSError as exc:
            return _error(
                describe(exc) if exc.filename else f"--feedback {args.feedback}: {exc}", 2
            )
    roster = None
    if bool(args.gradebook) != bool(args.roster):
        return _error("--gradebook and --roster go together: the gradebook follows the roster", 2)
    if args.roster:
        try:
            with open(args.roster, encoding="utf-8", newline="") as f:
                roster = grade_book.read_roster(f.read(), args.roster)
        except OSError as exc:
            return _error(f"cannot read {args.roster}: {exc.strerror or exc}", 2)
        except (ValueError, csv.Error) as exc:
            return _error(f"{args.roster}: {exc}" if args.roster not in str(exc) else str(exc), 2)
    for out in outputs:
        try:
            check_writable(out)  # before any notebook runs, not after
        except OSError as exc:
            return _error(describe(exc), 2)
    refused: list[grade.Row] = []
    try:
        subs = submissions(args.submissions, refused)
    except OSError as exc:  # an archive that could not be unpacked here
        return _error(describe(exc), 2)
    for row in refused:
        print(f"micrograd grade: refused {row.detail}", file=sys.stderr)
    if not subs and not refused:
        return _error(f"no notebooks (*.ipynb) in {', '.join(args.submissions)}", 2)
    shared, refusal = _shared(subs)
    if refusal:
        return _error(refusal, 2)
    note = grade_sandbox.unconfined_note(args.no_sandbox)
    if note:
        print(f"micrograd grade: {note}", file=sys.stderr)
    folder = args.results or next(
        (os.path.join(os.path.dirname(os.path.abspath(f)), "grade-results") for f in outputs),
        None,
    )
    store = grade_store.Store(folder) if folder else None
    settings = {"timeout": args.timeout, "sandbox": not args.no_sandbox}
    digests: dict[int, str] = {}
    results: dict[int, list[grade.Row]] = {}
    if store is not None:
        for n, (path, _, where, own) in enumerate(subs):
            try:
                with open(path, "rb") as f:
                    data = f.read()
                files = grade.inputs(path, shared.get(where, ()), own)
            except OSError:  # graded all the same: its row says why it cannot be read
                continue
            digests[n] = grade_store.digest(data, files, settings)
            try:
                kept = None if args.regrade else store.get(path, digests[n])
            except ValueError as exc:
                return _error(str(exc), 2)
            if kept is not None:
                results[n] = kept
        if results:
            print(
                f"micrograd grade: {len(results)} of {len(subs)} notebooks unchanged since "
                f"their results in {folder} (--regrade grades them again)",
                file=sys.stderr,
            )
    todo = [n for n in range(len(subs)) if n not in results]
    jobs = max(1, min(args.jobs, len(todo)))
    slots: queue.Queue[int] = queue.Queue()
    for n in range(jobs):
        slots.put(n)

    def one(n: int) -> list[grade.Row]:
        path, learner, folder, own = subs[n]
        slot = slots.get()
        try:
            rows = grade.grade(
                path,
                args.timeout,
                shared.get(folder, ()),
                learner=learner,
                sandbox=not args.no_sandbox,
                slot=slot,
                own_folder=own,
            )
        finally:
            slots.put(slot)
        # kept the moment it is done; never a run that Ctrl-C cut short
        if store is not None and n in digests and not stopping.is_set():
            store.put(path, digests[n], rows)
        return rows

    done = 0
    stopping = threading.Event()
    futures: dict[concurrent.futures.Future, int] = {}
    start, cpu = time.perf_counter(), grade_sandbox.CPU.seconds
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(one, n): n for n in todo}
        for future in _as_completed(futures):
            n = futures[future]
            results[n] = future.result()
            done += 1
            got = Counter(r.result for r in results[n])
            print(
                f"micrograd grade: [{done}/{len(todo)}] {subs[n][0]}: "
                + ", ".join(f"{got[k]} {k}" for k in grade.RESULTS if got[k]),
                file=sys.stderr,
            )
    except KeyboardInterrupt:
        stopping.set()
        pool.shutdown(wait=False, cancel_futures=True)
        grade_sandbox.CHILDREN.kill_all()
        grade_workers.WORKERS.close()
        done = sum(f.done() and not f.cancelled() and f.exception() is None for f in futures)
        kept = (
            f"the {done} graded are kept in {folder}: run again to grade the rest"
            if store is not None and done
            else "nothing written"
        )
        print(
            f"micrograd grade: interrupted after {done} of {len(todo)} submissions; {kept}",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:  # a result that could not be kept
        pool.shutdown(wait=False, cancel_futures=True)
        grade_sandbox.CHILDREN.kill_all()
        grade_workers.WORKERS.close()
        return _error(describe(exc), 1)
    pool.shutdown()
    grade_workers.WORKERS.close()  # the warm workers end with the grading
    print(
        f"micrograd grade: {len(todo)} notebook{'s' * (len(todo) != 1)} in "
        f"{time.perf_counter() - start:.0f} s, {jobs} at once (CPU time of the notebooks: "
        f"{grade_sandbox.CPU.seconds - cpu:.0f} s)",
        file=sys.stderr,
    )
    rows = [r for n in range(len(subs)) for r in results[n]] + refused
    if store is not None:  # and every other result kept, of notebooks still there
        mine = {os.path.abspath(path) for path, *_ in subs}
        try:
            others = [kept for path, kept in store.everything().items() if path not in mine]
        except ValueError as exc:
            return _error(str(exc), 1)
        others.sort(key=lambda kept: (kept[0].learner, kept[0].submission) if kept else ("", ""))
        rows += [r for kept in others for r in kept]
    sys.stdout.write(table(rows))
    # Every notebook's processes are gone by now (grade() returns only then): nothing a
    # submission started can touch these files after they are written.
    reports = (
        (args.csv, grade_report.to_csv),
        (args.summary, grade_report.to_summary),
        (args.html, grade_report.to_html),
    )
    if args.gradebook and roster is not None:
        book, missing = grade_book.gradebook(rows, roster, args.format)
        reports += ((args.gradebook, lambda _rows: book),)
        if missing:
            print(f"micrograd grade: gradebook: {missing}", file=sys.stderr)
    if args.feedback:
        pages = grade_report.feedback(rows)
        reports += tuple(
            (os.path.join(args.feedback, name), lambda _rows, page=page: page)
            for name, page in pages.items()
        )
    for path, make in reports:
        if path:
            try:
                atomic_write(path, make(rows))
            except OSError as exc:
                return _error(describe(exc), 1)
    return 1 if any(r.result in BAD for r in rows) else 0
