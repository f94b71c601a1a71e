"""The child process that runs one submission for `micrograd grade`: Jupyter's client and the
learner's kernel, together, inside the sandbox (`grading/sandbox.py` starts it).

    python -m micrograd.grading.runner < job.json > one JSON line per cell

It reads its job from stdin (the notebook to run, each code cell's time limit, the resource
limits and, when it starts as root, the unprivileged uid to become), then runs each code cell in
a fresh kernel in its working folder and writes what became of each cell as soon as it is known
(with the seconds it took, and for an error the line of the cell that raised), one JSON line
each, then ``{"done": true, "cpu": SECONDS}`` (the CPU time it and the kernel used). A cell that
outlives its limit is interrupted, as Jupyter's stop button does, and the run goes on with the
next cell; one that will not stop ends the run. A run cut short (the grader killed the sandbox,
the learner's code killed this process) leaves the lines written so far: the grader reads the
rest as not run.

Kernel and client (jupyter_client's) talk over loopback TCP inside the sandbox (which has a
loopback of its own and no other network), so nothing crosses its walls but this process's
stdin and stdout. The kernel's own stdout and stderr go nowhere: the learner's output comes back
through Jupyter's messages, never onto this process's stdout.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import time
from typing import Any, TextIO


def one_line(text: str) -> str:
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


def undumpable() -> None:
    # The learner's kernel runs as the same uid: keep it from reading or writing this process
    # (its memory, its stdout through /proc/PID/fd) where Linux lets us say so.
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


STOP_GRACE = 5.0  # seconds an interrupted cell has to stop before the run is given up
# Run in the kernel before the learner's first cell: an audit hook (which Python cannot remove)
# noting what reached outside the submission's folder: files written, removed or listed
# elsewhere, other processes' /proc, any socket connected. The sandbox stops all of it; this
# only tells the teacher it was tried. Best effort: code that knows of it can blind it (and a
# blinded watch is said as such). Every check is a type test first: the hook never raises.
WATCH = r"""
def _micrograd_watch():
    import os, sys
    pid = str(os.getpid())
    own = (os.getcwd(), "/tmp/home", "/tmp/ipython", "/tmp/jupyter", "/tmp/matplotlib",
           "/tmp/ipykernel_" + pid,
           "/dev", "/proc/self", "/proc/thread-self", "/proc/" + pid)
    import importlib.util
    spec = importlib.util.find_spec("micrograd")  # an editable install: not on sys.path
    ours = list(spec.submodule_search_locations or ()) if spec else []
    read = ("/usr", "/etc", "/opt", "/lib", "/bin", "/sys", "/proc", *own, *ours,
            *[p for p in sys.path if isinstance(p, str) and p.startswith("/")])
    seen = []
    def under(path, roots):
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)
    def outside(path, roots=own):
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str) or not path:
            return False
        path = os.path.normpath(os.path.join(os.getcwd(), path))
        tmp = path.startswith("/tmp/tmp")  # tempfile's own names
        other_proc = path.startswith("/proc/") and path.split("/")[2].isdigit()
        return (other_proc and not under(path, own)) or not (under(path, roots) or tmp)
    def note(what):
        if len(seen) < 12 and what not in seen:
            seen.append(what)
    def hook(event, args):
        if event == "open" and len(args) == 3:
            path, mode, flags = args
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            writes = writes or (isinstance(flags, int) and bool(flags & 0o3 or flags & 0o100))
            if outside(path, own if writes else read):
                note(("wrote " if writes else "read ") + str(path))
        elif event in ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink",
                       "os.link", "os.chmod", "os.chown", "shutil.rmtree", "os.truncate"):
            if args and outside(args[0]):
                note(event + " " + str(args[0]))
        elif event in ("os.listdir", "os.scandir") and args and outside(args[0], read):
            note(event + " " + str(args[0]))
        elif event == "socket.connect" and len(args) == 2:
            note("socket.connect " + str(args[1])[:60])
    sys.addaudithook(hook)
    return seen
_micrograd_reached = _micrograd_watch()
del _micrograd_watch
"""


def run(sources: list[str | None], limits: list[float], emit: Any) -> None:
    """Run each code cell (`sources`: None for a cell that is not code) in a fresh kernel in the
    working folder, each within its `limits` seconds, calling emit(index, outcome) for each cell
    as it ends. Jupyter's client directly, not nbclient: nbformat's import alone takes seconds,
    once per notebook."""
    from jupyter_client.manager import start_new_kernel

    try:
        km, kc = start_new_kernel(
            kernel_name="python3",
            startup_timeout=60.0,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except RuntimeError as exc:  # it died or did not answer in time
        emit(-1, {"state": "dead", "line": f"the kernel failed: {one_line(str(exc))}"})
        return
    try:
        watching = _quietly(kc, WATCH, {}) is not None
        for i, source in enumerate(sources):
            if source is None:
                continue
            started = time.monotonic()
            outcome = _execute(km, kc, source, started + limits[i])
            outcome["seconds"] = round(time.monotonic() - started, 3)
            emit(i, outcome)
            if outcome["state"] == "dead" or outcome.get("stuck"):
                return
        if watching:
            said = _quietly(kc, "", {"reached": "_micrograd_reached"})
            emit(-2, {"state": "reached", "reached": _reached(said)})
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _quietly(kc: Any, source: str, expressions: dict[str, str]) -> dict[str, Any] | None:
    """Run the grader's own code in the kernel, unseen (no output, no history): its reply's
    user expressions, or None if it failed or did not answer within STOP_GRACE."""
    msg_id = kc.execute(source, silent=True, store_history=False, user_expressions=expressions)
    deadline = time.monotonic() + STOP_GRACE
    while (left := deadline - time.monotonic()) > 0:
        try:
            msg = kc.get_shell_msg(timeout=left)
        except queue.Empty:
            return None
        if msg.get("parent_header", {}).get("msg_id") == msg_id:
            content = msg.get("content", {})
            return content.get("user_expressions", {}) if content.get("status") == "ok" else None
    return None


def _reached(said: dict[str, Any] | None) -> list[str]:
    """What the watch noted, from its user expression (a list's repr); its loss said too."""
    import ast

    got = (said or {}).get("reached", {})
    text = got.get("data", {}).get("text/plain", "") if isinstance(got, dict) else ""
    try:
        seen = ast.literal_eval(text) if text else None
    except (ValueError, SyntaxError):
        seen = None
    if not isinstance(seen, list):
        return ["the grader's watch was removed or replaced by the notebook's code"]
    return [str(x)[:200] for x in seen[:12]]


def _execute(km: Any, kc: Any, source: str, deadline: float) -> dict[str, Any]:
    msg_id = kc.execute(source, store_history=True, allow_stdin=False, stop_on_error=False)
    text: list[str] = []
    error: dict[str, Any] | None = None
    interrupted = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            if interrupted:  # it did not stop when asked: the kernel is of no more use
                return {"state": "timeout", "stuck": True, "text": "".join(text)[-4000:]}
            km.interrupt_kernel()
            interrupted, deadline = True, time.monotonic() + STOP_GRACE
            continue
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
    if interrupted:
        return {"state": "timeout", "text": printed}
    if error is not None:
        name = str(error.get("ename", "Error"))
        line = f"{name}: {one_line(str(error.get('evalue', '')))}".rstrip(": ")
        return {
            "state": "error",
            "line": line,
            "assertion": name == "AssertionError",
            "text": printed,
            "at": line_number(error.get("traceback", [])),
        }
    return {"state": "ok", "text": printed}


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_LINE = re.compile(r"(?:Cell In ?\[\d*\]|<ipython-input-[^>]*>), line (\d+)")


def line_number(traceback: Any) -> int:
    """The line of the cell itself that raised (its own frame, the traceback's first), or 0."""
    for entry in traceback if isinstance(traceback, list) else []:
        m = _CELL_LINE.search(_ANSI.sub("", str(entry)))
        if m:
            return int(m.group(1))
    return 0


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
        undumpable()
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
                f"{type(exc).__name__}: {one_line(str(exc))}",
            },
        )
        return 1
    limits = job["timeouts"]
    run(sources, [float(t) if t is not None else 0.0 for t in limits], emit)
    out.write(json.dumps({"done": True, "cpu": _cpu()}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
