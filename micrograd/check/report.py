"""The report `check` returns: problems, what is not implemented yet, notes, what passed.

Identical problems are one line: a problem added with the `same` key of an earlier one (its
cause) is not a second line but a count, and the places it was seen are listed on the first.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class CheckReport:
    """What `check` found. `ok` is True when nothing is wrong (ops not implemented yet are fine)."""

    subject: str
    problems: list[str] = field(default_factory=list)  # one line each: op, expression, got, why
    missing: list[str] = field(default_factory=list)  # "not implemented yet", with what to define
    notes: list[str] = field(default_factory=list)  # worth knowing, not wrong
    passed: list[str] = field(default_factory=list)  # what was checked and found right
    skipped: list[str] = field(default_factory=list)  # not run: an earlier problem would spoil it
    # what the notebook has asked for so far (op names, methods, "backward", "numbers"); None:
    # everything. Whatever else the class lacks is `later`, one line, not a list of "not yet"
    asked: list[str] | None = None  # (a list: the report crosses from the child process as JSON)
    later: list[str] = field(default_factory=list)
    _later_keys: list[str] = field(default_factory=list, repr=False)
    # the evidence behind a problem, one attribute away: problem line -> what was tried and got
    details: dict[str, str] = field(default_factory=dict)
    # same cause -> (index in problems, the first line, where else it was seen)
    _same: dict[str, tuple[int, str, list[str]]] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def headline(self) -> str:
        """The first problem, in one line, and how many more there are: what a notebook's
        ``assert report.ok, report.headline`` stops with."""
        if not self.problems:
            return "no problems"
        more = len(self.problems) - 1
        return self.problems[0] + (
            f" (and {more} more problem{'s' * (more != 1)}, listed above)" if more else ""
        )

    def add(self, text: str, detail: str = "", same: str = "", where: str = "") -> None:
        """Add a problem. Another with the same `same` key (its cause; by default the text
        itself) already reported makes no new line: `where` (or a count) is added to the first."""
        same = same or text
        if same in self._same:
            i, first, seen = self._same[same]
            seen.append(where)
            named = [w for w in seen if w]
            also = (
                f"the same in {', '.join(named)}"
                if len(named) == len(seen)
                else f"the same {len(seen)} more time{'s' * (len(seen) != 1)}"
            )
            line = f"{first} ({also})"
            old = self.problems[i]
            self.problems[i] = line
            if old in self.details:
                self.details[line] = self.details.pop(old)
            return
        self._same[same] = (len(self.problems), text, [])
        self.problems.append(text)
        if detail:
            self.details[text] = detail

    def detail(self, problem: int | str) -> str:
        """The evidence behind a problem (given by its number in `problems`, or its text): every
        point it was tried at and what came back there; "" if the line says it all."""
        text = self.problems[problem] if isinstance(problem, int) else problem
        return self.details.get(text, "")

    def is_asked(self, *names: str) -> bool:
        """Whether the notebook asks for any of `names` yet (always, without `asked`)."""
        return self.asked is None or any(n in self.asked for n in names)

    def not_yet(self, line: str, short: str, *names: str, key: object = None) -> None:
        """Not implemented yet: `line` if the notebook asks for any of `names` (or asks for
        everything), else `short` among what is for later (once per `key`, by default `short`)."""
        if names and self.is_asked(*names):
            self.missing.append(line)
        elif str(key or short) not in self._later_keys:
            self._later_keys.append(str(key or short))
            self.later.append(short)

    @property
    def later_line(self) -> str:
        """The one line for everything not asked for yet."""
        if not self.later:
            return ""
        more = len(self.later) - 4
        shown = ", ".join(self.later[:4]) + (f" and {more} more" if more > 0 else "")
        return f"for later notebooks (not asked for yet): {shown}"

    def summary(self) -> str:
        parts = [f"{len(self.problems)} problem{'s' * (len(self.problems) != 1)}"]
        parts.append(f"{len(self.passed)} passed")
        if self.missing:
            parts.append(f"{len(self.missing)} not implemented yet")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped until the problems are fixed")
        verdict = "all good" if self.ok else "not yet"
        return f"{self.subject}: {verdict} ({', '.join(parts)})"

    def __str__(self) -> str:
        lines = [self.summary()]
        lines += [f"  ✗ {p}" for p in self.problems]
        lines += [f"  … {m}" for m in self.missing]
        lines += [f"  … {self.later_line}"] if self.later else []
        lines += [f"  skipped until the problems are fixed: {s}" for s in self.skipped]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  ✓ {p}" for p in self.passed]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        def items(marks: str, entries: list[str]) -> str:
            return "".join(f"<li>{marks} {html.escape(e)}</li>" for e in entries)

        def problem(p: str) -> str:  # one line; its evidence one click away
            if p not in self.details:
                return f"<li>✗ {html.escape(p)}</li>"
            return (
                f"<li><details><summary>✗ {html.escape(p)}</summary>"
                f"<pre>{html.escape(self.details[p])}</pre></details></li>"
            )

        colour = "#1a7f37" if self.ok else "#cf222e"
        out = [f'<div><b style="color:{colour}">{html.escape(self.summary())}</b><ul>']
        out.append("".join(map(problem, self.problems)) + items("…", self.missing))
        out.append(items("…", [self.later_line] if self.later else []))
        out.append(items("skipped until the problems are fixed:", self.skipped))
        out.append(items("note:", self.notes))
        out.append("</ul>")
        if self.passed:
            out.append(f"<details><summary>{len(self.passed)} checks passed</summary><ul>")
            out.append(items("✓", self.passed) + "</ul></details>")
        return "".join(out) + "</div>"
