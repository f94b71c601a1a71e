"""Where `micrograd grade` runs a submission: a sandbox on Linux, resource limits everywhere.

A submission is code the teacher did not write. Each notebook runs (Jupyter's client and the
kernel together, `grading/runner.py`) as one child process, or, by default, in a child of a
warm worker that lives in such a sandbox of its own (`grading/warm_worker.py`,
`grading/workers.py`):

- on Linux with bubblewrap (`bwrap`, Debian's `bubblewrap`), in a sandbox: a root of its own in
  which the system and the Python environment are read-only, the submission's folder (a fresh
  copy holding only its learner's files) the one writable place, its own /tmp, no network (a
  loopback of its own, for the kernel), its own process tree, killed with everything in it when
  the run ends or the grader dies (a `setsid` child included); the teacher's files, the class
  folder and the other submissions are not in it at all. Run as root, the child drops to an
  unprivileged uid of its own (one per parallel job) before any learner code runs, so that the
  process limit holds (Linux does not apply it to root);
- everywhere, limits on memory (address space), processes, file size and CPU time.

Without bubblewrap, or where it cannot make a sandbox (it runs once to see: AppArmor forbids its
namespaces on Ubuntu 23.10 and later), the grader refuses to run submissions (`refusal`), in
one line naming the cause, unless the teacher says
``--no-sandbox``: then only the limits apply, the submissions run with the teacher's
permissions, and the grader says so once.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from typing import IO, Any, cast

MEMORY = 2 << 30  # bytes of address space: the course's kernels (PyTorch's too) peak near 1 GiB
PROCESSES = 256  # a kernel and its threads use a few dozen
FILE_SIZE = 64 << 20  # bytes: the course writes a few kilobytes
CPU_SLACK = 30  # CPU seconds beyond the notebook's time limits (per process)
UID_BASE = 64100  # root's runs become uid UID_BASE + job slot (no user of that uid needed)
INSTALL = (
    "install bubblewrap for the sandbox (Debian/Ubuntu: sudo apt install bubblewrap; "
    "Fedora: sudo dnf install bubblewrap)"
)


def bwrap() -> str | None:
    """The bubblewrap binary, or None where there is none (or not on Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    return shutil.which("bwrap")


def unconfined_note(no_sandbox: bool) -> str | None:
    """The one line the grader says when submissions run without the sandbox (None if not)."""
    if no_sandbox:
        return (
            "--no-sandbox: the submissions run with your permissions (they can read and "
            "write your files, and use the network); only resource limits apply"
        )
    return None


UNSANDBOXED = "or pass --no-sandbox to run them with your own permissions (they could read and "
UNSANDBOXED += "write your files)"
# Ubuntu 23.10 and later (GitHub's ubuntu-24.04 runner too): AppArmor forbids the unprivileged
# user namespaces bwrap makes, and bwrap fails ("setting up uid map: Permission denied")
APPARMOR = "kernel.apparmor_restrict_unprivileged_userns"
_PROBED: dict[str, str | None] = {}  # bwrap's path: why it cannot make a sandbox (None: it can)


def _probe(path: str) -> str | None:
    """Run bubblewrap once (the namespaces the sandbox asks for, around `true`): None where it
    works, else its last line. Once per bwrap per process."""
    if path not in _PROBED:
        cmd = [path, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _PROBED[path] = f"{type(exc).__name__}: {exc}"
        else:
            said = [line.strip() for line in (done.stderr + done.stdout).splitlines()]
            said = [line for line in said if line] or [f"exit status {done.returncode}"]
            _PROBED[path] = None if done.returncode == 0 else said[-1][:200]
    return _PROBED[path]


def refusal() -> str | None:
    """Why the grader will not run submissions here, in one line (None where it will): there
    is no sandbox (bubblewrap is missing, or it is there and cannot make one: it runs once to
    see), and running learners' code with the teacher's permissions is a choice the teacher
    makes (``--no-sandbox``), never a default."""
    path = bwrap()
    if path is not None:
        why = _probe(path)
        if why is None:
            return None
        return (
            f"bubblewrap cannot make a sandbox here ({path}: {why}), so no submission was run: "
            f"where AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later), "
            f"sudo sysctl {APPARMOR}=0 lifts it; {UNSANDBOXED}"
        )
    where = (
        INSTALL if sys.platform.startswith("linux") else "the sandbox needs Linux and bubblewrap"
    )
    missing = "no sandbox here (bubblewrap is missing), so no submission was run"
    return f"{missing}: {where}; {UNSANDBOXED}"


def limits(timeout: float) -> dict[str, int]:
    return {
        "RLIMIT_AS": MEMORY,
        "RLIMIT_NPROC": PROCESSES,
        "RLIMIT_FSIZE": FILE_SIZE,
        "RLIMIT_CPU": int(timeout) + CPU_SLACK,
        "RLIMIT_CORE": 0,
    }


def names_copy() -> str | None:
    """Where `micrograd.data.names()` finds makemore's names.txt here (downloading it once), for
    the child to read; None where it cannot be had: a notebook that reads the names then fails
    with names()'s own line, naming MICROGRAD_NAMES_FILE, in its row. Asked once a process (for
    the same settings: every submission of a class)."""
    keys = ("MICROGRAD_NAMES_FILE", "MICROGRAD_CACHE", "MICROGRAD_NAMES_URL")
    return _names_copy(tuple(os.environ.get(k) for k in keys))


@functools.lru_cache(maxsize=4)
def _names_copy(settings: tuple[str | None, ...]) -> str | None:
    from ..data import names_file

    try:
        return os.path.abspath(names_file())
    except FileNotFoundError:
        return None


def _readable_roots() -> list[str]:
    """What the child needs to see, read-only: the Python it runs on and its packages."""
    import micrograd

    paths = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *site.getsitepackages(),
        str(pathlib.Path(micrograd.__file__).resolve().parent),
        str(pathlib.Path(sys.executable).resolve().parent.parent),
    }
    paths.update(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    paths.update(p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p)
    names = names_copy()  # data.names()'s file (chapters 7 and 8): read-only
    if names:
        paths.add(os.path.dirname(names))
    if site.ENABLE_USER_SITE and site.USER_SITE:
        paths.add(site.USER_SITE)
    real = sorted(
        {os.path.realpath(p) for p in paths if os.path.isdir(p)}
        | {os.path.abspath(p) for p in paths if os.path.isdir(p)}
    )
    system = ("/usr", "/etc", "/opt")
    return [p for p in real if not any(p == s or p.startswith(s + "/") for s in system)]


def command(folder: str, use_bwrap: bool, module: str = "micrograd.grading.runner") -> list[str]:
    """The command that runs `module` (grading.runner, or grading.warm_worker) with `folder` as its
    working folder."""
    runner = [sys.executable, "-m", module]
    if not use_bwrap:
        return runner
    cmd = [
        bwrap() or "bwrap",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "grader",
    ]
    for top in ("/usr", "/etc", "/opt"):
        if os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    # Its own /tmp first: a Python that lives under /tmp (a clone there, its .venv) is bound on
    # top of it below, not hidden by it (bwrap mounts in the order given).
    cmd += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
    ]
    roots = _readable_roots()
    made: set[str] = {"/tmp"}  # a folder of its own, writable by all: never made again
    for path in roots:
        # bwrap makes the folders on the way to a bound one private to root: open them
        for parent in reversed(pathlib.PurePosixPath(path).parents):
            anc = str(parent)
            if (
                anc == "/"
                or anc in made
                or any(
                    anc == r or anc.startswith(r + "/") for r in (*roots, "/usr", "/etc", "/opt")
                )
            ):
                continue
            made.add(anc)
            cmd += ["--perms", "0755", "--dir", anc]
        cmd += ["--ro-bind", path, path]
    cmd += ["--bind", folder, "/submission", "--chdir", "/submission", "--", *runner]
    return cmd


def environment(use_bwrap: bool) -> dict[str, str]:
    """The child's environment: no teacher's secrets, Jupyter's and matplotlib's state in /tmp."""
    keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "JUPYTER_PATH", "SYSTEMROOT", "TZ")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    names = names_copy()
    if names:  # the child reads the teacher's copy (it may have no network, and its own HOME)
        env["MICROGRAD_NAMES_FILE"] = names
    env.update(MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    if use_bwrap:
        env.update(
            HOME="/tmp/home",
            JUPYTER_RUNTIME_DIR="/tmp/jupyter",
            JUPYTER_CONFIG_DIR="/tmp/jupyter-config",
            JUPYTER_DATA_DIR="/tmp/jupyter-data",
            IPYTHONDIR="/tmp/ipython",
            MPLCONFIGDIR="/tmp/matplotlib",
            TMPDIR="/tmp",
            JUPYTER_PLATFORM_DIRS="0",
        )
    else:
        env.update(
            {
                k: os.environ[k]
                for k in ("HOME", "USERPROFILE", "TMPDIR", "TEMP", "TMP")
                if k in os.environ
            }
        )
    return env


class Children:
    """The child processes running now, so that Ctrl-C or the end can stop every one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()

    def add(self, p: subprocess.Popen) -> None:
        with self._lock:
            self._live.add(p)

    def discard(self, p: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(p)

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for p in live:
            kill(p)
        for p in live:
            p.wait()


CHILDREN = Children()


class _Cpu:
    """CPU seconds the finished runs used (the runner's own count: the sandbox hides it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds


CPU = _Cpu()


def kill(p: subprocess.Popen) -> None:
    """Kill the child and its process group (bwrap's own kills everything in the sandbox)."""
    if hasattr(os, "killpg") and p.returncode is None:
        try:  # the group outlives its leader until the leader is waited for
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:  # nothing of it is left: nothing to kill
            return
    elif p.poll() is None:
        p.kill()


def run(
    notebook: dict[str, Any],
    folder: str,
    timeouts: list[float | None],
    *,
    use_bwrap: bool,
    uid: int | None,
) -> tuple[dict[int, dict[str, Any]], str]:
    """Run the notebook (nbformat's dict) in `folder`, each code cell within its `timeouts`
    seconds (None for a cell that is not code): each cell's outcome by index, and how the run
    ended: "done", "expired" (killed when its time was up) or "killed" (the child died: the
    learner's code took it down). Returns only once the child, and with the sandbox everything
    it started, is gone."""
    timeout = sum(t for t in timeouts if t is not None)
    job = {
        "notebook": notebook,
        "timeouts": timeouts,
        "limits": limits(timeout),
        "uid": uid if use_bwrap else None,
    }
    # The child's stderr says why it could not start (bwrap's own errors); once started, the
    # runner sends its stderr nowhere.
    said = tempfile.TemporaryFile()
    p = subprocess.Popen(
        command(folder, use_bwrap),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=said,
        cwd=folder,
        env=environment(use_bwrap),
        start_new_session=True,
    )
    CHILDREN.add(p)
    outcomes: dict[int, dict[str, Any]] = {}
    end = "killed"
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        kill(p)

    # The kernel's start and stop, and a grace to stop each interrupted cell, are outside the
    # cells' time: a wall-clock bound of its own.
    timer = threading.Timer(timeout + 60 + 10 * sum(t is not None for t in timeouts), expire)
    timer.start()
    try:
        stdin, stdout = cast(IO[bytes], p.stdin), cast(IO[bytes], p.stdout)  # both PIPEs
        try:
            stdin.write(json.dumps(job).encode())
            stdin.close()
        except BrokenPipeError:  # the child died before reading its job: no outcomes, not run
            end = "killed"
        for line in _lines(stdout):
            if line.get("done") is True:
                end = "done"
                if isinstance(line.get("cpu"), (int, float)):
                    CPU.add(float(line["cpu"]))
            elif isinstance(line.get("cell"), int):
                outcomes[line["cell"]] = line
    finally:
        timer.cancel()
        kill(p)  # whatever it left behind (outside the sandbox: its process group)
        p.wait()
        CHILDREN.discard(p)
        said.seek(0)
        why = [
            line.strip()
            for line in said.read(65536).decode(errors="replace").splitlines()
            if line.strip()
        ]
        said.close()
    if not outcomes and end == "killed" and not expired.is_set() and why:
        where = "the sandbox" if use_bwrap else "the notebook's runner"
        fix = " (micrograd grade --no-sandbox runs without it)" if use_bwrap else ""
        outcomes[-1] = {"state": "dead", "line": f"{where} did not start: {why[-1][:200]}{fix}"}
    return outcomes, ("expired" if expired.is_set() and end != "done" else end)


def _lines(stream: Iterable[bytes]) -> Iterable[dict[str, Any]]:
    for raw in stream:
        try:
            line = json.loads(raw)
        except ValueError:  # not the runner's: nothing the learner writes is believed
            continue
        if isinstance(line, dict):
            yield line
