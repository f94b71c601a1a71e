"""A warm worker for `micrograd grade`: one long-lived process inside the sandbox that runs many
notebooks, one after another, each in a child forked from it, so that no notebook pays for a
Jupyter kernel's start or for importing numpy, matplotlib, PyTorch and micrograd again.

    python -m micrograd.grading.worker < config, then one job per line > JSON lines

It reads one line of configuration (the resource limits, the uid to become when it starts as
root, whether it is in bubblewrap's sandbox), imports what the course's notebooks import, says
``{"ready": true}``, then for each job line (the notebook's code cells, each cell's time limit,
the fresh folder holding its learner's files) forks a child that runs the cells in a fresh
IPython shell (the interpreter a Jupyter kernel wraps: magics, ``display``, tracebacks naming
``Cell In[n], line k`` alike) with a namespace of its own, in that folder, under the limits.
Its lines are the runner's (`grading/runner.py`): one per cell as it ends, with the seconds it
took, then ``{"done": true, "cpu": SECONDS}``.

What a kernel's client does, this process does for the child: each cell's time is counted
here, from the child's word that the cell started; a cell that outlives its limit is
interrupted (SIGINT, as Jupyter's stop button does) and one that will not stop within
`runner.STOP_GRACE` is killed, ending the run (the rest: not run). When the child is gone,
in the sandbox, every process but this one is killed (a `setsid` child too) and /tmp is
emptied, so nothing of one notebook is there when the next starts; the grader empties its
folder. The child cannot read or trace this process (it is not dumpable), only signal it: a
worker killed so ends its run as a kernel killed does, and the grader starts another.
"""

from __future__ import annotations

import io
import json
import os
import select
import shutil
import signal
import sys
import time
from typing import Any, TextIO

from .runner import STOP_GRACE, WATCH, line_number, one_line, undumpable, become, limit

WARM = (  # what the course's notebooks import, imported once, before any fork
    "IPython.core.interactiveshell",
    "numpy",
    "matplotlib.pyplot",
    "torch",
    "sklearn.datasets",
    "micrograd",
    "micrograd.engine",
    "micrograd.nn",
    "micrograd.check",
    "micrograd.check.notebook",
    "micrograd.data",
    "micrograd.viz",
    "micrograd.viz.plot",
    "micrograd.jit",
    "micrograd.widgets",
)
TEXT = 4000  # characters of a cell's output kept (its end), as the runner keeps


class _Output(io.TextIOBase):
    """sys.stdout and sys.stderr of the child: what the cell printed, its last TEXT characters
    (a kernel's stream messages); never a file descriptor the learner could write around."""

    def __init__(self, sink: list[str]) -> None:
        self._sink = sink

    def write(self, text: Any) -> int:
        text = str(text)
        self._sink.append(text)
        if len(self._sink) > 256:
            self._sink[:] = ["".join(self._sink)[-TEXT:]]
        return len(text)

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def _shell() -> Any:
    """A fresh IPython shell that shows nothing (a kernel's display and results are messages,
    not printed text) and keeps each error as a kernel's error message has it."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Quiet(DisplayHook):
        def write_output_prompt(self) -> None:
            return None

        def write_format_data(self, format_dict: Any, md_dict: Any = None) -> None:
            return None

    class Unseen(DisplayPublisher):
        def publish(self, *args: Any, **kwargs: Any) -> None:
            return None

    class Shell(InteractiveShell):
        error: dict[str, Any] | None = None

        def _showtraceback(self, etype: Any, evalue: Any, stb: Any) -> None:
            Shell.error = {
                "ename": str(getattr(etype, "__name__", etype)),
                "evalue": str(evalue),
                "traceback": [str(x) for x in stb],
            }

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    shell = Shell.instance(config=config, displayhook_class=Quiet, display_pub_class=Unseen)
    shell.display_pub = Unseen(shell=shell)
    return shell


def child(job: dict[str, Any], config: dict[str, Any], send: Any) -> None:
    """The forked child: run the job's cells, telling `send` when each starts and how it ended."""
    running = [False]

    def interrupt(signum: int, frame: Any) -> None:
        if running[0]:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    folder = job["folder"]
    os.chdir(folder)
    sys.path[0] = folder
    import importlib

    importlib.invalidate_caches()
    limit(job.get("limits") or config.get("limits", {}))
    if sys.platform.startswith("linux"):  # dumpable as a kernel is (this process is not)
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)
    shell = _shell()
    sink: list[str] = []
    sys.stdout = sys.stderr = _Output(sink)  # type: ignore[assignment]
    watching = True
    try:
        exec(WATCH, shell.user_ns)
    except Exception:  # noqa: BLE001 the watch is best effort: its loss is said below
        watching = False
    for i, source in enumerate(job["sources"]):
        if source is None:
            continue
        sink.clear()
        type(shell).error = None
        send({"start": i})
        running[0] = True
        try:
            shell.run_cell(source, store_history=True)
        except KeyboardInterrupt:  # between the cell's end and here: the cell is over
            pass
        finally:
            running[0] = False
        printed = "".join(sink)[-TEXT:]
        error = type(shell).error
        if error is None:
            send({"cell": i, "state": "ok", "text": printed})
            continue
        name = error["ename"]
        send(
            {
                "cell": i,
                "state": "error",
                "line": f"{name}: {one_line(error['evalue'])}".rstrip(": "),
                "assertion": name == "AssertionError",
                "text": printed,
                "at": line_number(error["traceback"]),
            }
        )
    if watching:
        seen = shell.user_ns.get("_micrograd_reached")
        if isinstance(seen, list):
            reached = [str(x)[:200] for x in seen[:12]]
        else:
            reached = ["the grader's watch was removed or replaced by the notebook's code"]
        send({"reached": reached})


def _clean(sandboxed: bool, pid: int) -> None:
    """After a notebook: its processes gone (in the sandbox: every one but this; else the
    child's session), its /tmp and /dev/shm emptied (in the sandbox)."""
    if sandboxed:
        for _ in range(50):
            try:
                os.kill(-1, signal.SIGKILL)  # in the sandbox's own PID namespace only
            except ProcessLookupError:  # none left to signal
                pass
            others = [
                p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())
            ]
            _reap()
            if not others:
                break
            time.sleep(0.02)
        for top in ("/tmp", "/dev/shm"):
            for name in os.listdir(top):
                path = os.path.join(top, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.unlink(path)
                    except FileNotFoundError:  # gone already
                        pass
        os.makedirs(os.environ.get("HOME", "/tmp/home"), exist_ok=True)
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # the group is gone
            pass
        _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(job: dict[str, Any], config: dict[str, Any], out: TextIO) -> None:
    """Run one job in a forked child and write its lines."""
    timeouts = [float(t) if t is not None else 0.0 for t in job["timeouts"]]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.setsid()
            channel = os.fdopen(write, "w", encoding="utf-8")
            mine = os.getpid()
            os.register_at_fork(after_in_child=lambda: os.close(write))

            def send(line: dict[str, Any]) -> None:
                if os.getpid() == mine:  # not from a process the learner's code forked
                    channel.write(json.dumps(line) + "\n")
                    channel.flush()

            child(job, config, send)
        except BaseException:  # noqa: BLE001 whatever it was, the child ends here
            status = 1
        os._exit(status)
    os.close(write)
    emit = _emitter(out)
    started: int | None = None  # the cell running now
    deadline = interrupted = None
    buffer = b""
    nxt = next((i for i, s in enumerate(job["sources"]) if s is not None), None)
    stuck = False
    status = None
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while status is None:
            wait = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            ready, _, _ = select.select([pipe], [], [], wait)
            if ready:
                chunk = pipe.read(65536)
                buffer += chunk or b""
                if not chunk:  # the child and every process holding its pipe closed it
                    ready = []
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = _parse(raw)
                if line is None:
                    continue
                if isinstance(line.get("start"), int) and 0 <= line["start"] < len(timeouts):
                    started = line["start"]
                    began = time.monotonic()
                    deadline, interrupted = began + timeouts[started], None
                elif isinstance(line.get("cell"), int) and line["cell"] == started:
                    outcome = {k: line[k] for k in ("state", "line", "assertion", "text", "at")}
                    if interrupted is not None:
                        outcome = {"state": "timeout", "text": line.get("text", "")}
                    outcome["seconds"] = round(time.monotonic() - began, 3)
                    emit(started, outcome)
                    nxt = next(
                        (i for i, s in enumerate(job["sources"]) if s is not None and i > started),
                        None,
                    )
                    started = deadline = None
                elif isinstance(line.get("reached"), list):
                    emit(-2, {"state": "reached", "reached": [str(x) for x in line["reached"]]})
            if deadline is not None and time.monotonic() >= deadline:
                if interrupted is None:
                    os.kill(pid, signal.SIGINT)
                    interrupted = time.monotonic()
                    deadline = interrupted + STOP_GRACE
                else:  # it did not stop when asked: the run ends here
                    os.kill(pid, signal.SIGKILL)
                    emit(started, {"state": "timeout", "stuck": True, "text": ""})
                    stuck = True
                    started = deadline = None
            done, code, usage = os.wait4(pid, os.WNOHANG)
            status = code if done else None
    if not stuck and (started is not None or (nxt is not None and status != 0)):
        cell = started if started is not None else nxt
        emit(cell, {"state": "dead", "line": "the kernel died running this cell"})
    cpu = usage.ru_utime + usage.ru_stime
    _clean(config.get("sandboxed", False), pid)
    out.write(json.dumps({"done": True, "cpu": cpu}) + "\n")
    out.flush()


def _emitter(out: TextIO) -> Any:
    def emit(index: int | None, outcome: dict[str, Any]) -> None:
        out.write(json.dumps({"cell": index, **outcome}) + "\n")
        out.flush()

    return emit


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(line, dict):
        return None
    if "cell" in line:
        state = line.get("state")
        if state not in ("ok", "error"):
            return None
        return {
            "cell": line["cell"],
            "state": state,
            "line": str(line.get("line", "")),
            "assertion": bool(line.get("assertion")),
            "text": str(line.get("text", ""))[-TEXT:],
            "at": line.get("at") if isinstance(line.get("at"), int) else 0,
        }
    return line


def warm() -> list[str]:
    """Import what the notebooks import (those this machine has): the modules missing."""
    import importlib

    missing = []
    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def main() -> int:
    out: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    source = sys.stdin
    config = json.loads(source.readline())
    if config.get("uid") is not None:
        become(int(config["uid"]))
    undumpable()
    os.makedirs(os.environ.get("HOME", "/tmp/home"), exist_ok=True)
    warm()
    import gc

    gc.collect()
    gc.freeze()  # what is imported stays out of the children's collections (and their pages)
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for raw in source:
        job = json.loads(raw)
        serve(job, config, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
