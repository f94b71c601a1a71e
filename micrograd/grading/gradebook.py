"""`micrograd grade --gradebook FILE --roster ROSTER.csv [--format canvas|moodle|plain]`: the
grades, a learner a row, ready for the school's gradebook.

A learner's points for a notebook are the exercises of it that passed (or were skipped because
the grader's machine lacks what a check needs: no fault of theirs); the total is their sum. A
learner is a folder name, matched to the roster's row whose login, e-mail (or the part before
its @), id or name is that folder's name, or its end after a '-' (GitHub Classroom names each
repository ``assignment-login``); case does not matter. The formats:

- canvas: Canvas's gradebook import: ``Student,ID,SIS User ID,SIS Login ID,Section``, then a
  column per notebook and the total (Canvas makes an assignment of each new column), then a
  ``Points Possible`` row first, as Canvas's own export has it;
- moodle: Moodle's "Import grades from CSV": ``Email address,ID number,Full name``, a column per
  notebook and the total (map the e-mail or ID number column to the user on import);
- plain: ``learner,id,name``, a column per notebook, ``total``.

A roster's learner with no submission gets empty cells (a gradebook import leaves them as they
are); a submission whose learner is not on the roster is left out; both are listed in one line.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from .class_report import cell
from .grade import Row

FORMATS = ("canvas", "moodle", "plain")
CREDIT = ("passed", "skipped")
# the roster's columns, by what they hold: the first present of each is read
ID = ("id", "identifier", "student id", "id number", "sis user id", "user id")
LOGIN = ("github_username", "github username", "github", "login", "username", "sis login id")
EMAIL = ("email", "email address", "e-mail", "mail")
NAME = ("name", "student", "full name", "student name")


def read_roster(text: str, where: str = "the roster") -> list[dict[str, str]]:
    """The roster's rows (keys lower-cased); a ValueError naming the file if it has no header
    this module reads."""
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows:
        raise ValueError(f"{where} has no learners (a CSV with a header row, then a row each)")
    rows = [{(k or "").strip().lower(): (v or "").strip() for k, v in r.items()} for r in rows]
    known = set(ID + LOGIN + EMAIL + NAME)
    if not known & set(rows[0]):
        raise ValueError(
            f"{where} has none of the columns a learner is matched by "
            f"(id, login, github_username, username, email, name): its header is "
            f"{', '.join(rows[0])}"
        )
    return rows


def _first(row: dict[str, str], names: Iterable[str]) -> str:
    return next((row[n] for n in names if row.get(n)), "")


def _keys(row: dict[str, str]) -> set[str]:
    email = _first(row, EMAIL)
    found = {_first(row, ID), _first(row, LOGIN), email, email.split("@")[0], _first(row, NAME)}
    found |= {row.get(n, "") for n in LOGIN}
    return {k.lower() for k in found if k}


def match(learners: list[str], roster: list[dict[str, str]]) -> dict[str, int]:
    """Learner (folder name) -> index of their roster row, for those found: the row one of
    whose keys is the name, else the one that is the name's end after a '-'."""
    keys = [_keys(r) for r in roster]
    found = {}
    for who in learners:
        base = who.replace("\\", "/").rstrip("/").split("/")[-1].lower()
        exact = [i for i, k in enumerate(keys) if base in k]
        tail = [i for i, k in enumerate(keys) if any(base.endswith("-" + x) for x in k)]
        hits = exact or tail
        if len(hits) == 1:
            found[who] = hits[0]
    return found


def points(rows: list[Row]) -> tuple[list[str], dict[str, dict[str, int]], dict[str, int]]:
    """The notebooks (in order), each learner's points per notebook, and each notebook's
    possible points (its exercises)."""
    notebooks = list(dict.fromkeys(r.notebook for r in rows if r.exercise))
    per: dict[str, dict[str, int]] = {}
    possible: dict[str, int] = {}
    for r in rows:
        if not r.exercise:
            continue
        mine = per.setdefault(r.learner, {})
        mine[r.notebook] = mine.get(r.notebook, 0) + (r.result in CREDIT)
    for nb in notebooks:
        possible[nb] = max(
            (sum(1 for r in rows if r.exercise and r.notebook == nb and r.learner == who))
            for who in per
        )
    return notebooks, per, possible


def gradebook(
    rows: list[Row], roster: list[dict[str, str]], fmt: str = "plain", title: str = "micrograd"
) -> tuple[str, str]:
    """The gradebook CSV in `fmt`, and the one line saying who is missing from either side
    ("" when everyone matched)."""
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    notebooks, per, possible = points(rows)
    found = match(list(per), roster)
    by_row = {i: who for who, i in found.items()}
    columns = [f"{title} {nb}" for nb in notebooks] + [f"{title} total"]
    if fmt == "canvas":
        header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *columns]
        lead = [["Points Possible", "", "", "", ""]]
    elif fmt == "moodle":
        header = ["Email address", "ID number", "Full name", *columns]
        lead = []
    else:
        header = ["learner", "id", "name", *notebooks, "total"]
        lead = []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in lead:
        writer.writerow([*row, *(possible[nb] for nb in notebooks), sum(possible.values())])
    for i, r in enumerate(roster):
        who = by_row.get(i)
        got = [per[who].get(nb, 0) for nb in notebooks] if who is not None else []
        grades = [*got, sum(got)] if who is not None else [""] * (len(notebooks) + 1)
        name, ident = _first(r, NAME), _first(r, ID)
        if fmt == "canvas":
            first = [name, r.get("id", ""), r.get("sis user id", ""), r.get("sis login id", "")]
            first += [r.get("section", "")]
        elif fmt == "moodle":
            first = [_first(r, EMAIL), ident, name]
        else:
            first = [who or _first(r, LOGIN) or _first(r, EMAIL), ident, name]
        writer.writerow([cell(str(v)) for v in [*first, *grades]])
    unknown = [who for who in per if who not in found]
    absent = [
        _first(r, LOGIN) or _first(r, EMAIL) or _first(r, NAME) or _first(r, ID)
        for i, r in enumerate(roster)
        if i not in by_row
    ]
    parts = []
    if unknown:
        parts.append(
            f"{len(unknown)} submitting learner{'s' * (len(unknown) != 1)} not on the roster "
            f"(left out): {', '.join(unknown)}"
        )
    if absent:
        parts.append(
            f"{len(absent)} on the roster with no submission (empty cells): {', '.join(absent)}"
        )
    return out.getvalue(), "; ".join(parts)
