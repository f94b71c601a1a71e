"""micrograd.check on a corpus of learners' code (tests/support/corpus.py): correct code written
every which way is never stopped, and each planted bug is stopped with its own cause, named in the
first line of the report (what a notebook's check cell stops with)."""

from __future__ import annotations

import pytest

from tests.support.corpus import CASES, Case, run_case

CORRECT = [c for c in CASES if c.correct]
BUGGY = [c for c in CASES if not c.correct]


def test_the_corpus_is_large_and_covers_every_kind() -> None:
    kinds = {(c.kind, c.correct) for c in CASES}
    assert kinds == {(k, ok) for k in ("value", "nn", "step") for ok in (True, False)}
    assert len(CASES) >= 90 and len({c.name for c in CASES}) == len(CASES)
    # each bug's cause is its own: no two kinds of bug are told apart by the same phrase only
    assert len(BUGGY) >= 60


@pytest.mark.parametrize("case", CORRECT, ids=[c.name for c in CORRECT])
def test_correct_code_is_never_stopped(case: Case) -> None:
    report = run_case(case)
    assert report.ok, str(report)
    assert report.passed


@pytest.mark.parametrize("case", BUGGY, ids=[c.name for c in BUGGY])
@pytest.mark.slow
def test_each_planted_bug_is_stopped_with_its_own_cause(case: Case) -> None:
    report = run_case(case)
    assert not report.ok, f"{case.name}: not stopped\n{report}"
    first = report.problems[0]
    for phrase in case.cause:
        assert phrase in first, f"{case.name}: {phrase!r} not in the first problem\n{report}"
    # one line per cause: no line said twice
    assert len(set(report.problems)) == len(report.problems), str(report)
    assert all("\n" not in p for p in report.problems)
