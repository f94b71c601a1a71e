"""Running a learner's code safely: a time limit per call, crashes turned into one line, and
numbers read from objects that may not hold numbers."""

from __future__ import annotations

import math
import numbers
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

DEFAULT_TIME_LIMIT = 2.0  # seconds per check; every check here takes milliseconds when correct
REL_TOL, ABS_TOL = 1e-9, 1e-12  # a tanh built from exp differs from math.tanh in the last digits
MAX_PREV = 64  # the most children read from a node's _prev (a size limit on the learner's graph)
MAX_TEXT = 100  # the longest repr of a learner's object shown in a problem
MAX_TIMEOUTS = 3  # after this many checks ran out of time, the rest are not run


class _Timeout(BaseException):
    # BaseException, so a learner's `except Exception:` cannot swallow it.
    pass


@dataclass
class Failed:
    """A learner's code crashed or ran out of time; `text` says how, in one line."""

    text: str
    exc: BaseException | None = None
    timeout: bool = False


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _Timeout in the running code after `seconds`.

    In the main thread (a notebook, a script, pytest) a SIGALRM timer interrupts anything, even
    ``while True: pass``; it fires again every 50 ms, so a bare ``except:`` that swallows it once
    does not hang the caller. Elsewhere, or when someone else's timer is running, a trace function
    checks the clock on every line instead (which a one-line ``while True: pass`` escapes: it
    never starts a new line).
    """
    use_alarm = (
        threading.current_thread() is threading.main_thread()
        and hasattr(signal, "setitimer")
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )
    if use_alarm:
        armed = [True]

        def on_alarm(signum: int, frame: object) -> None:
            if armed[0]:
                raise _Timeout

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        try:
            yield
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return

    deadline = time.monotonic() + seconds

    def tracer(frame: object, event: str, arg: object) -> Any:
        if time.monotonic() > deadline:
            raise _Timeout
        return tracer

    previous_trace = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(previous_trace)


def _last_line(exc: BaseException) -> str:
    """The traceback's last line, and where in the learner's code it happened."""
    text = traceback.format_exception_only(type(exc), exc)[-1].strip().splitlines()[0]
    frame = crash_frame(exc)
    if frame is not None and frame.line:
        text += f" (in {frame.name}: {frame.line.strip()})"
    return text


def crash_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the learner's code a crash went through (not the checker's own)."""
    here = os.path.dirname(__file__)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(here)]
    return frames[-1] if frames else None


class StopChecking(Exception):
    """Raised by `Runner` once MAX_TIMEOUTS checks ran out of time: `check` ends there."""


class Runner:
    """The one run loop every check goes through: each call of the learner's code under the time
    limit, crashes and time-outs as a `Failed`; after MAX_TIMEOUTS time-outs nothing more runs
    (StopChecking), so a whole `check(...)` takes at most a few time limits however much hangs."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.timeouts = 0

    def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.timeouts >= MAX_TIMEOUTS:
            raise StopChecking
        result = run(self.limit, fn, *args)
        if isinstance(result, Failed) and result.timeout:
            self.timeouts += 1
        return result


def run(limit: float, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), or a Failed saying how it crashed or that it ran out of time."""
    try:
        with _time_limit(limit):
            return fn(*args)
    except _Timeout:
        return Failed(f"did not finish within {limit:g} s (stopped)", timeout=True)
    except RecursionError as exc:
        return Failed("RecursionError: maximum recursion depth exceeded", exc)
    except Exception as exc:  # the learner's code may raise anything: report it, never crash
        return Failed(_last_line(exc), exc)


def repr_text(obj: object) -> str:
    try:
        text = repr(obj)
    except Exception:
        text = f"<{type(obj).__name__} whose __repr__ crashed>"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def fmt(x: float) -> str:
    text = repr(x)
    return text if len(text) <= 12 else f"{x:.10g}"


def number(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    try:
        return float(x)
    except (OverflowError, ValueError):
        return None


def close(got: float | None, want: float) -> bool:
    if got is None:
        return False
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def attr(obj: object, name: str) -> Any:
    """obj.name, or a Failed (a property of the learner's may raise anything)."""
    try:
        return getattr(obj, name)
    except Exception as exc:
        return Failed(_last_line(exc), exc)


def describe(x: object) -> str:
    n = number(x)
    return fmt(n) if n is not None else f"{repr_text(x)} (not a number)"
