"""Keeping a learner's code from hanging the check: a time limit per call (`run`, and `Runner`, the
one run loop every check goes through), crashes turned into one line (`Failed`), attributes read
from objects whose properties may raise (`attr`), the learner's prints counted rather than shown
(`Printed`); and the whole check in a child process (`isolated`) that is ended if it stops
answering. How the checker reads and writes the learner's numbers is `values.py`.

A time limit inside the process stops most loops, but not all: a loop inside one C call
(``sum(range(3 * 10**9))``) never lets the timer's signal in, a learner may ignore that signal,
and a number's ``__float__`` may loop where no limit is set. So `check` runs in a child process
(a fork: the learner's classes, defined in a notebook, come along as they are) that tells its
parent before and after each call of the learner's code; if it says nothing for longer than a
check may take, the parent ends it, with every process the learner's code forked, and reports
what was found up to there. Where there are no processes (Pyodide), checks run in the caller's
process, under the same limits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import signal
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

DEFAULT_TIME_LIMIT = 2.0  # seconds per check; every check here takes milliseconds when correct
MAX_PREV = 64  # the most children read from a node's _prev (a size limit on the learner's graph)
MAX_TIMEOUTS = 3  # after this many checks ran out of time, the rest are not run
# A limit counts the time the learner's code computes (its thread's CPU time), so a busy machine
# does not stop a correct engine; code that waits without computing (a sleep, a read) is stopped
# after this many times the limit on the clock.
WAITING_FACTOR = 2
# Pyodide's time has no thread_time (one thread, one learner: the clock is its time there)
_computed = getattr(time, "thread_time", time.monotonic)


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
    """Raise _Timeout in the running code once it has computed for `seconds` (its thread's CPU
    time: a loaded machine slows the clock, not the count) or waited WAITING_FACTOR times that.

    In the main thread (a notebook, a script, pytest) a SIGALRM timer interrupts anything, even
    ``while True: pass``; from `seconds` on it fires every 50 ms to look at the time used, so a
    bare ``except:`` that swallows it once does not hang the caller. Elsewhere, or when someone
    else's timer is running, a trace function looks on every line instead (which a one-line
    ``while True: pass`` escapes: it never starts a new line).
    """
    cpu_end = _computed() + seconds
    wall_end = time.monotonic() + seconds * WAITING_FACTOR

    def over() -> bool:
        return _computed() >= cpu_end or time.monotonic() >= wall_end

    use_alarm = (
        threading.current_thread() is threading.main_thread()
        and hasattr(signal, "setitimer")
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )
    if use_alarm:
        armed = [True]

        def on_alarm(signum: int, frame: object) -> None:
            if armed[0] and over():
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

    def tracer(frame: object, event: str, arg: object) -> Any:
        if over():
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
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(here)]
    return frames[-1] if frames else None


class StopChecking(Exception):
    """Raised by `Runner` once MAX_TIMEOUTS checks ran out of time: `check` ends there."""


class Runner:
    """The one run loop every check goes through: each call of the learner's code under the time
    limit, crashes and time-outs as a `Failed`; after MAX_TIMEOUTS time-outs nothing more runs
    (StopChecking), so a whole `check(...)` takes at most a few time limits however much hangs."""

    def __init__(self, limit: float, beat: Callable[[bool], None] | None = None) -> None:
        self.limit = limit
        self.timeouts = 0
        self.beat = beat  # in a child process: tells the parent a call starts (True) or ended

    def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.timeouts >= MAX_TIMEOUTS:
            raise StopChecking
        if self.beat is not None:
            self.beat(True)
        result = run(self.limit, fn, *args)
        if self.beat is not None:
            self.beat(False)
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
    except BaseException as exc:  # anything, SystemExit and KeyboardInterrupt too: report it
        return Failed(_last_line(exc), exc)


def attr(obj: object, name: str) -> Any:
    """obj.name, or a Failed (a property of the learner's may raise anything)."""
    try:
        return getattr(obj, name)
    except Exception as exc:
        return Failed(_last_line(exc), exc)


# ------------------------------------------------------------------ the learner's prints


class Printed:
    """Where the learner's prints go while checked: counted, the first line kept, nothing else
    (a print in an op runs thousands of times; a print of an endless generator never ends)."""

    def __init__(self) -> None:
        self.lines = 0
        self.first: str | None = None
        self._start = ""  # the first line as it comes (at most a few hundred characters)
        self._open = False  # the last line written has no newline yet

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.first is None:
            self._start += text[:200]
            if "\n" in self._start or len(self._start) >= 200:
                self.first = self._start.split("\n", 1)[0][:200]
        self.lines += text.count("\n")
        if text:
            self._open = not text.endswith("\n")
        return len(text)

    def flush(self) -> None:
        return None

    def finish(self) -> tuple[int, str]:
        """(lines printed, the first of them)."""
        first = self.first if self.first is not None else self._start
        return self.lines + (1 if self._open else 0), first


# ------------------------------------------------------------------ a child process


CAN_FORK = hasattr(os, "fork") and sys.platform not in ("emscripten", "wasi")
GRACE = 5.0  # seconds of silence past a time limit before the child is ended


def isolated(
    work: Callable[[Callable[[bool], None] | None], Any], report: Any, limit: float
) -> tuple[Any, str]:
    """Run ``work(beat)`` (which fills `report`, calling ``beat`` around each call of the
    learner's code) in a child process; returns the report it filled and '' or, if the child
    had to be ended or died, the report as far as it got and one line saying why. Without
    processes (Pyodide), ``work(None)`` runs here."""
    if not CAN_FORK:
        work(None)
        return report, ""
    import warnings

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # (3.12 warns of forking a process with threads: the
        warnings.simplefilter("ignore", DeprecationWarning)  # child runs only this module's)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(work, report, write_end)
    os.close(write_end)
    try:
        return _watch(pid, read_end, report, WAITING_FACTOR * limit + GRACE)
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):  # (all of them gone already)
            os.killpg(pid, signal.SIGKILL)  # the child, and whatever the learner's code forked
        os.waitpid(pid, 0)


def _child(work: Callable[[Callable[[bool], None] | None], Any], report: Any, fd: int) -> None:
    me = os.getpid()
    status = 0
    try:
        os.setsid()  # a process group of its own: the parent ends it and every fork in it
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):  # not the notebook's streams: they belong to the parent
            os.dup2(null, target)
        sys.stdin = None  # type: ignore[assignment]
        sys.stderr = Printed()  # type: ignore[assignment]
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        shown = [0]

        def beat(starting: bool) -> None:
            if os.getpid() != me:
                return  # a process the learner's code forked: it does not speak for the check
            size = (
                len(report.problems),
                len(report.missing),
                len(report.notes),
                len(report.passed),
                len(report.skipped),
            )
            if starting or size == shown[0]:
                _send(fd, ("beat", None))
            else:
                shown[0] = size
                _send(fd, ("beat", report))

        try:
            work(beat)
        except BaseException as exc:  # noqa: BLE001  (anything the learner's code raised)
            report.add(
                f"stopped: your code raised {_last_line(exc)} while being checked, so "
                f"the rest was not run"
            )
        if os.getpid() == me:
            _send(fd, ("done", report))
    except BaseException:  # noqa: BLE001  (the parent says the child died: nothing to add)
        status = 1
    finally:
        os._exit(status)


def _send(fd: int, message: tuple[str, Any]) -> None:
    # JSON, not pickle: the parent reads nothing from the learner's process that could run code
    kind, report = message
    try:
        data = json.dumps([kind, None if report is None else dataclasses.asdict(report)]).encode()
    except (TypeError, ValueError):  # something not a text in the report: the last one stands
        data = json.dumps([kind, None]).encode()
    os.write(fd, struct.pack("!I", len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _watch(pid: int, fd: int, report: Any, silence: float) -> tuple[Any, str]:
    """Read the child's messages until it is done, dies, or says nothing for `silence` s."""
    buffer = b""
    while True:
        ready, _, _ = select.select([fd], [], [], silence)
        if not ready:
            return report, (
                "stopped: your code did not stop within the time limit, nor when "
                "told to (a loop inside one call of Python's own, a signal it "
                "ignores, or a number whose __float__ never returns), so the "
                "check was ended there and the rest was not run"
            )
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return report, (
                "stopped: your code ended the process that was checking it (os._exit, "
                "a crash, or a signal), so the rest was not run"
            )
        buffer += chunk
        while len(buffer) >= 4:
            (size,) = struct.unpack("!I", buffer[:4])
            if len(buffer) < 4 + size:
                break
            kind, got = json.loads(buffer[4 : 4 + size])
            buffer = buffer[4 + size :]
            if got is not None:
                report = type(report)(**got)
            if kind == "done":
                return report, ""
