"""`check()` on a learner's engine that fights back (issue 35, item 9): whatever it raises, loops
on, ignores or forks, `check` returns a report, in time, and nothing outlives it."""

from __future__ import annotations

import os
import signal
import time

import pytest

from micrograd import check
from tests.support import learner

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no processes here")


class Raises(BaseException):
    """A learner's own BaseException subclass."""


@pytest.mark.parametrize(
    "exc, words",
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (Raises("mine"), "Raises: mine"),
    ],
)
def test_what_the_learners_code_raises_is_a_line_of_the_report(exc, words):
    class V(learner.Value):
        def exp(self):
            raise exc

    report = check(V, time_limit=1.0)  # returns: the cell is not killed
    assert any(p.startswith("exp:") and words in p for p in report.problems), report.problems
    assert any("+" in p for p in report.passed)  # and the rest was checked as usual


def test_a_flood_of_prints_is_counted_not_kept():
    from micrograd.check.timeout import Printed

    printed = Printed()
    line = "x" * 99_999 + "\n"
    for _ in range(2_000):  # 200 MB through it
        printed.write(line)
    printed.write("no newline yet")
    assert printed.finish() == (2_001, "x" * 200)
    assert len(printed._start) <= 400  # nothing grows with what was printed

    class Chatty(learner.Value):
        def __add__(self, other):
            print("adding", self.data, "+", getattr(other, "data", other))
            print("y" * 1_000_000)
            return super().__add__(other)

    # (its point is what is kept of the prints, not the time: a limit no loaded machine meets)
    report = check(Chatty, time_limit=60.0)
    assert report.ok, report.problems
    note = next(n for n in report.notes if n.startswith("your code printed"))
    assert "'adding " in note


@needs_fork
@pytest.mark.slow
def test_a_loop_inside_one_c_call_is_ended():
    class V(learner.Value):
        def exp(self):
            return sum(range(3 * 10**9))  # the time limit's signal cannot get in

    report = check(V, time_limit=0.2)
    assert "your code did not stop within the time limit, nor when told to" in report.problems[-1]
    assert any("+" in p for p in report.passed)  # what was found before it is kept


@needs_fork
@pytest.mark.slow
def test_a_learner_ignoring_the_alarm_is_ended():
    class V(learner.Value):
        def tanh(self):
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                pass

    report = check(V, time_limit=0.2)
    assert "did not stop within the time limit, nor when told to" in report.problems[-1]


class Loops(float):
    def __float__(self):
        while True:
            pass


@needs_fork
@pytest.mark.slow
def test_a_number_whose_float_loops_is_ended():
    class V(learner.Value):
        def __init__(self, data, _children=(), _op="", label=""):
            super().__init__(Loops(data), _children, _op, label)

    report = check(V, time_limit=0.2)
    assert "did not stop within the time limit" in report.problems[-1]


@needs_fork
def test_a_learner_ending_the_process_is_reported():
    class V(learner.Value):
        def relu(self):
            os._exit(7)

    report = check(V, time_limit=0.5)
    assert report.problems[-1].startswith("stopped: your code ended the process that was checking")


@needs_fork
def test_a_fork_of_the_learners_does_not_outlive_check(tmp_path):
    where = tmp_path / "pid"

    class V(learner.Value):
        def exp(self):
            if not where.exists():
                pid = os.fork()
                if pid == 0:
                    time.sleep(600)
                    os._exit(0)
                where.write_text(str(pid))
            return super().exp()

    check(V, time_limit=1.0)
    pid = int(where.read_text())
    try:
        assert _gone(pid), f"the learner's fork {pid} outlived check()"
    finally:
        if not _gone(pid, 0):
            os.kill(pid, signal.SIGKILL)


def _gone(pid: int, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                return True
        except FileNotFoundError:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
