"""The grader's side of the warm workers (`grading/warm_worker.py`): one per parallel job, each in a
sandbox of its own (`grading/sandbox.py`'s bubblewrap command, the same walls) that lives as
long as the grading does and runs that job's notebooks one after another.

Each notebook gets a fresh folder holding only its learner's files, the one writable place the
sandbox binds (the worker's folder, emptied between notebooks; /tmp is emptied inside and every
process of the notebook's killed there before the next starts). A run cut short by the grader
(its time was up) or by the learner's code (it killed the worker) ends as a kernel's would, and
the next notebook starts a new worker.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
from typing import IO, Any, cast

from ..core.atomic import atomic_write
from . import sandbox


class Worker:
    """One warm worker: `run` a notebook in it; `close` ends it."""

    def __init__(self, use_bwrap: bool, uid: int | None) -> None:
        self.use_bwrap, self.uid = use_bwrap, uid
        self.folder = tempfile.mkdtemp(prefix="micrograd-grade-")
        if uid is not None:
            os.chown(self.folder, uid, uid)
        self.said = tempfile.TemporaryFile()
        self.last_words: list[str] = []  # what it said on stderr, read before `close`
        self.p = subprocess.Popen(
            sandbox.command(self.folder, use_bwrap, "micrograd.grading.warm_worker"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.said,
            cwd=self.folder,
            env=sandbox.environment(use_bwrap),
            start_new_session=True,
        )
        sandbox.CHILDREN.add(self.p)
        self.ready = False
        self.runs = 0
        config = {
            "limits": sandbox.limits(0),
            "uid": uid if use_bwrap else None,
            "sandboxed": use_bwrap,
        }
        self._send(config)

    def _send(self, line: dict[str, Any]) -> bool:
        try:
            stdin = cast(IO[bytes], self.p.stdin)
            stdin.write(json.dumps(line).encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):  # it died: its run says so
            return False
        return True

    def alive(self) -> bool:
        return self.p.poll() is None

    def run(
        self, notebook: dict[str, Any], files: dict[str, bytes], timeouts: list[float | None]
    ) -> tuple[dict[int, dict[str, Any]], str]:
        """As `sandbox.run`: each cell's outcome by index, and "done", "expired" or "killed"."""
        self.runs += 1
        here = pathlib.Path(self.folder, f"run-{self.runs}")
        here.mkdir()
        for name, data in files.items():
            target = here / name
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        if self.uid is not None:
            for dirpath, _, filenames in os.walk(here):
                os.chown(dirpath, self.uid, self.uid)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), self.uid, self.uid)
        inside = f"/submission/{here.name}" if self.use_bwrap else str(here)
        timeout = sum(t for t in timeouts if t is not None)
        sources = [
            ("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            if c.get("cell_type") == "code"
            else None
            for c in notebook["cells"]
        ]
        job = {"sources": sources, "timeouts": timeouts, "folder": inside}
        job_limits = sandbox.limits(timeout)
        job["limits"] = job_limits
        outcomes: dict[int, dict[str, Any]] = {}
        end = "killed"
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            sandbox.kill(self.p)

        # as the kernel's run: the cells' limits, a grace per cell, and (the first time) the
        # worker's own start, on a wall clock of their own
        grace = 60 * (not self.ready) + 10 + 10 * sum(t is not None for t in timeouts)
        timer = threading.Timer(timeout + grace, expire)
        timer.start()
        try:
            if self._send(job):
                for raw in cast(IO[bytes], self.p.stdout):
                    try:
                        line = json.loads(raw)
                    except ValueError:  # not the worker's
                        continue
                    if not isinstance(line, dict):
                        continue
                    if line.get("ready") is True:
                        self.ready = True
                    elif line.get("done") is True:
                        end = "done"
                        if isinstance(line.get("cpu"), (int, float)):
                            sandbox.CPU.add(float(line["cpu"]))
                        break
                    elif isinstance(line.get("cell"), int):
                        outcomes[line["cell"]] = line
        finally:
            timer.cancel()
            shutil.rmtree(here, ignore_errors=True)
        if end != "done":
            self.close()
            why = self._why()
            if not outcomes and not expired.is_set() and why and not self.ready:
                where = "the sandbox" if self.use_bwrap else "the notebook's runner"
                fix = " (micrograd grade --no-sandbox runs without it)" if self.use_bwrap else ""
                outcomes[-1] = {
                    "state": "dead",
                    "line": f"{where} did not start: {why[-1][:200]}{fix}",
                }
        return outcomes, ("expired" if expired.is_set() and end != "done" else end)

    def _why(self) -> list[str]:
        """What the worker said on stderr, line by line (kept when `close` closes the file)."""
        if not self.said.closed:
            self.said.seek(0)
            self.last_words = [
                line.strip()
                for line in self.said.read(65536).decode(errors="replace").splitlines()
                if line.strip()
            ]
        return self.last_words

    def close(self) -> None:
        sandbox.kill(self.p)
        self.p.wait()
        sandbox.CHILDREN.discard(self.p)
        for stream in (self.p.stdin, self.p.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # a pipe whose other end is gone
                    pass
        self._why()  # read before the file goes
        self.said.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Workers:
    """A worker per slot (parallel job) and sandboxing, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[tuple[int, bool], Worker] = {}

    def run(
        self,
        slot: int,
        use_bwrap: bool,
        uid: int | None,
        notebook: dict[str, Any],
        files: dict[str, bytes],
        timeouts: list[float | None],
    ) -> tuple[dict[int, dict[str, Any]], str]:
        with self._lock:
            worker = self._live.get((slot, use_bwrap))
            if worker is None or not worker.alive():
                worker = self._live[slot, use_bwrap] = Worker(use_bwrap, uid)
        outcomes, end = worker.run(notebook, files, timeouts)
        if end != "done":
            with self._lock:
                if self._live.get((slot, use_bwrap)) is worker:
                    del self._live[slot, use_bwrap]
        return outcomes, end

    def close(self) -> None:
        """End every worker (the grading is over)."""
        with self._lock:
            live, self._live = list(self._live.values()), {}
        for worker in live:
            worker.close()


WORKERS = Workers()
