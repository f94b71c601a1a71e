"""A warm worker for `micrograd grade`: one long-lived process inside the sandbox that runs many
notebooks, one after another, each in a child forked from it, so that no notebook pays for a
Jupyter kernel's start, for importing numpy, matplotlib, PyTorch and micrograd again, or for
building an IPython shell.

    python -m micrograd.grading.warm_worker < config, then one job per line > JSON lines

It reads one line of configuration (the resource limits, the uid to become when it starts as
root, whether it is in bubblewrap's sandbox), builds an IPython shell (the interpreter a Jupyter
kernel wraps: magics, ``display``, tracebacks naming ``Cell In[n], line k`` alike) that never
runs a cell itself, imports what the course's notebooks import, says ``{"ready": true}``, then
for each job line (the notebook's code cells, each cell's time limit, the fresh folder holding
its learner's files) forks a child that runs the cells in its own copy of that shell (as fresh
as a new kernel's: no cell run, a namespace of its own), in that folder, under the limits.
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

import functools
import io
import json
import os
import select
import shutil
import signal
import sys
import time
from typing import Any, TextIO

from .runner import STOP_GRACE, WATCH, become, limit, line_number, one_line, undumpable

WARM = (  # what the course's notebooks import, imported once, before any fork
    "IPython.core.interactiveshell",
    "bdb",  # (IPython's debugger's: its first cell imports it)
    "numpy",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",  # what plt.show() and a figure's display load
    "contourpy",  # plt.contourf's (notebook 4's picture)
    "PIL.features",
    "graphviz",  # micrograd.viz.draw_dot's, on its first call
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
# Imported, in a second template process (a child of the worker), only for the notebooks that
# use them: a child forked from a process that holds them is five times the size, and its own
# forks (a learner's os.fork, subprocess) cost five times as much.
HEAVY = (
    "torch",
    "torch.fx.experimental.symbolic_shapes",  # (and sympy: 480 modules, about a second) what a
    # torch.autograd.Function's first use imports (notebook 5)
    "sklearn.datasets",
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


@functools.lru_cache(maxsize=1)
def _shell() -> Any:
    """The IPython shell that shows nothing (a kernel's display and results are messages, not
    printed text) and keeps each error as a kernel's error message has it. Built once, in the
    template (`main`), before any fork: each child runs its notebook in its own copy of it,
    as fresh as a new kernel's (no cell run, an empty namespace), without paying its build."""
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
    config.HistoryManager.enabled = False  # (In, Out and _i still are): no SQLite across fork
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
    shell.history_manager.dir_hist[:] = [os.getcwd()]  # _dh: this notebook's folder
    os.makedirs(shell.profile_dir.location, exist_ok=True)  # as a new shell makes it: the
    shell.profile_dir.check_dirs()  # last notebook's /tmp (and HOME in it) is gone
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


def _clean(sandboxed: bool, pid: int, keep: set[int]) -> None:
    """After a notebook: its processes gone (in the sandbox: every one but this and `keep`;
    else the child's session), its /tmp and /dev/shm emptied (in the sandbox)."""
    if sandboxed:  # the sandbox's own PID namespace: every process in it is the notebook's
        spare = {1, os.getpid(), *keep}
        for _ in range(1000):  # a fork bomb's new ones are found on the next round
            others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in spare]
            for other in others:
                try:
                    os.kill(other, signal.SIGKILL)
                except ProcessLookupError:  # gone by itself
                    pass
            _reap()
            if not others:
                break
            time.sleep(0.01)
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
            if pid > 1:
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


def serve(
    job: dict[str, Any], config: dict[str, Any], out: TextIO, close: tuple[int, ...] = ()
) -> tuple[int, float]:
    """Run one job in a forked child and write its lines but the last: the child's pid and the
    CPU seconds it used. The child closes `out` and the fds `close` first: nothing of the
    grader's (its pipe, the next jobs) is left open to the learner's code."""
    timeouts = [float(t) if t is not None else 0.0 for t in job["timeouts"]]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read)
            for fd in (out.fileno(), *close):
                os.close(fd)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.setsid()
            mine = os.getpid()
            os.register_at_fork(after_in_child=lambda: os.close(write))

            def send(line: dict[str, Any]) -> None:
                if os.getpid() == mine:  # not from a process the learner's code forked
                    data = (json.dumps(line) + "\n").encode()
                    while data:  # the pipe to the worker, not a file: a long line goes in parts
                        data = data[os.write(write, data) :]

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
    return pid, usage.ru_utime + usage.ru_stime


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


def warm(names: tuple[str, ...]) -> None:
    """Import what the notebooks import (those this machine has), then keep it out of the
    children's garbage collections (and so out of their copied pages)."""
    import gc
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # the notebook that needs it says so (PyTorch: skipped)
            continue
    gc.collect()
    gc.freeze()


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
    _shell()  # before any fork (and warm's freeze): every child's copy of it
    warm(WARM)
    heavy: Heavy | None = None
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    sandboxed = bool(config.get("sandboxed"))
    for raw in source:
        job = json.loads(raw)
        if any(s and any(m.split(".")[0] in s for m in HEAVY) for s in job["sources"]):
            if heavy is None or not heavy.alive():
                heavy = Heavy(config, out)
            pid, cpu = heavy.serve(raw)
        else:
            pid, cpu = serve(job, config, out, heavy.fds() if heavy else ())
        _clean(sandboxed, pid, {heavy.pid} if heavy and heavy.alive() else set())
        out.write(json.dumps({"done": True, "cpu": cpu}) + "\n")
        out.flush()
    return 0


class Heavy:
    """The second template: a child of the worker that holds `HEAVY` too and serves the jobs
    that use them, one at a time, as the worker asks."""

    def __init__(self, config: dict[str, Any], out: TextIO) -> None:
        jobs_r, self.jobs = os.pipe()
        self.acks, acks_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the template: serves until the worker closes its pipe
            status = 0
            try:
                os.close(self.jobs)
                os.close(self.acks)
                warm(HEAVY)
                with os.fdopen(jobs_r, "rb") as jobs:
                    for raw in jobs:
                        done = serve(json.loads(raw), config, out, (acks_w, jobs_r))
                        os.write(acks_w, json.dumps(done).encode() + b"\n")
            except BaseException:  # noqa: BLE001 the worker sees its pipe close
                status = 1
            os._exit(status)
        os.close(jobs_r)
        os.close(acks_w)
        self.answers = os.fdopen(self.acks, "rb")

    def fds(self) -> tuple[int, ...]:
        return (self.jobs, self.acks)

    def alive(self) -> bool:
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return done == 0

    def serve(self, raw: str) -> tuple[int, float]:
        """Have it run the job: (the notebook's child's pid, the CPU seconds it used); the
        worker ends if the template died under it (the grader reads the run as killed)."""
        os.write(self.jobs, raw.encode() if raw.endswith("\n") else raw.encode() + b"\n")
        said = self.answers.readline()
        try:
            pid, cpu = json.loads(said)
        except ValueError:
            os._exit(1)
        return int(pid), float(cpu)


if __name__ == "__main__":
    sys.exit(main())
