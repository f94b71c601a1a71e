"""The child process that runs one submission for `micrograd grade`: Jupyter's client and the
learner's kernel, together, inside the sandbox (`grading/sandbox.py` starts it).

    python -m micrograd.grading.runner < job.json > one JSON line per cell

It reads its job from stdin (the notebook to run, the time limit, the resource limits and, when
it starts as root, the unprivileged uid to become), then runs each code cell in a fresh kernel
in its working folder and writes what became of each cell as soon as it is known, one JSON line
each, then ``{"done": true, "cpu": SECONDS}`` (the CPU time it and the kernel used). A run cut
short (the grader killed the sandbox, the learner's code killed this process) leaves the lines
written so far: the grader reads the rest as not run.

Kernel and client (jupyter_client's) talk over loopback TCP inside the sandbox (which has a
loopback of its own and no other network), so nothing crosses its walls but this process's
stdin and stdout. The kernel's own stdout and stderr go nowhere: the learner's output comes back
through Jupyter's messages, never onto this process's stdout.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import time
from typing import Any, TextIO


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def limit(limits: dict[str, int]) -> None:
    """Set the resource limits by name (RLIMIT_AS, ...), those this platform has."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits (the grader says the submissions run unconfined)
        return
    for name, value in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


def become(uid: int) -> None:
    """Drop root for `uid` (its own group, no others): from here on the learner's code is
    subject to RLIMIT_NPROC, which the kernel does not apply to root."""
    os.makedirs("/tmp/home", exist_ok=True)
    for path in ("/tmp", "/tmp/home"):
        os.chown(path, uid, uid)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit(f"micrograd grade: could not drop to uid {uid}")


def _undumpable() -> None:
    # The learner's kernel runs as the same uid: keep it from reading or writing this process
    # (its memory, its stdout through /proc/PID/fd) where Linux lets us say so.
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


def run(sources: list[str | None], timeout: float, emit: Any) -> None:
    """Run each code cell (`sources`: None for a cell that is not code) in a fresh kernel in the
    working folder, within `timeout` seconds in all, calling emit(index, outcome) for each cell
    as it ends. Jupyter's client directly, not nbclient: nbformat's import alone takes seconds,
    once per notebook."""
    from jupyter_client.manager import start_new_kernel

    deadline = time.monotonic() + timeout
    try:
        km, kc = start_new_kernel(
            kernel_name="python3",
            startup_timeout=max(1.0, timeout),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except RuntimeError as exc:  # it died or did not answer in time
        emit(-1, {"state": "dead", "line": f"the kernel failed: {_one_line(str(exc))}"})
        return
    try:
        for i, source in enumerate(sources):
            if source is None:
                continue
            outcome = _execute(km, kc, source, deadline)
            emit(i, outcome)
            if outcome["state"] in ("timeout", "dead"):
                return
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _execute(km: Any, kc: Any, source: str, deadline: float) -> dict[str, Any]:
    msg_id = kc.execute(source, store_history=True, allow_stdin=False, stop_on_error=False)
    text: list[str] = []
    error: dict[str, Any] | None = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return {"state": "timeout", "text": "".join(text)[-4000:]}
        try:
            msg = kc.get_iopub_msg(timeout=min(left, 1.0))
        except queue.Empty:
            if not km.is_alive():
                return {"state": "dead", "line": "the kernel died running this cell"}
            continue
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            text.append(content.get("text", ""))
        elif kind == "error":
            error = content
        elif kind == "status" and content.get("execution_state") == "idle":
            break
    printed = "".join(text)[-4000:]
    if error is not None:
        name = str(error.get("ename", "Error"))
        line = f"{name}: {_one_line(str(error.get('evalue', '')))}".rstrip(": ")
        return {
            "state": "error",
            "line": line,
            "assertion": name == "AssertionError",
            "text": printed,
        }
    return {"state": "ok", "text": printed}


def _cpu() -> float:
    """CPU seconds this process and the kernel it waited for used (none where unknown)."""
    try:
        import resource
    except ImportError:
        return 0.0
    return sum(
        u.ru_utime + u.ru_stime
        for u in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )


def main() -> int:
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    # Our stdout is the grader's: keep it for the results, and send fd 1 and 2 nowhere, so that
    # nothing else (a library's warning, a stray kernel write) can land among them.
    out: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)

    def emit(index: int, outcome: dict[str, Any]) -> None:
        out.write(json.dumps({"cell": index, **outcome}) + "\n")
        out.flush()

    try:
        limit(job.get("limits", {}))
        if job.get("uid") is not None:
            become(int(job["uid"]))
        _undumpable()
        os.makedirs(os.environ.get("HOME", "/tmp/home"), exist_ok=True)
        sources = [
            c["source"] if c.get("cell_type") == "code" else None for c in job["notebook"]["cells"]
        ]
        sources = [("".join(s) if isinstance(s, list) else s) for s in sources]
    except Exception as exc:  # the grader's fault, not the learner's: said as such
        emit(
            -1,
            {
                "state": "dead",
                "line": f"the grader could not start the notebook: "
                f"{type(exc).__name__}: {_one_line(str(exc))}",
            },
        )
        return 1
    run(sources, float(job["timeout"]), emit)
    out.write(json.dumps({"done": True, "cpu": _cpu()}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
