"""scripts/ensure-graphviz, which `make demo` and `make test` run: it asks before any sudo, never
uses sudo without a terminal to ask at (it says in one line how instead), and says once that
pictures use the built-in layout until Graphviz is there. Run on a PATH of stand-ins that record
what they were asked to do (no `dot` on it)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "ensure-graphviz"
BASH = "/bin/bash"

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not os.path.exists(BASH), reason="a bash script"
)
pty = pytest.importorskip("pty", reason="a terminal of its own (POSIX)")


def stand_ins(tmp_path: pathlib.Path, uid: int) -> tuple[dict[str, str], pathlib.Path]:
    """A PATH holding only id (saying uid), sudo and apt-get, each logging its arguments."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "calls"
    scripts = {
        "id": f"#!{BASH}\necho {uid}\n",
        "sudo": f'#!{BASH}\necho "sudo $*" >> {log}\n',
        "apt-get": f'#!{BASH}\necho "apt-get $*" >> {log}\n',
    }
    for name, text in scripts.items():
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    return {"PATH": str(bin_), "HOME": str(tmp_path), "LANG": "C.UTF-8"}, log


def calls(log: pathlib.Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_without_a_terminal_it_never_sudoes_and_says_how_in_one_line(
    tmp_path: pathlib.Path,
) -> None:
    env, log = stand_ins(tmp_path, uid=1000)
    done = subprocess.run(
        [BASH, str(SCRIPT)], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert calls(log) == []  # no sudo, not even `sudo -n true`; no apt-get
    assert done.stderr == ""
    (line,) = done.stdout.splitlines()
    assert "sudo apt-get install graphviz" in line and "built-in layout" in line


def _at_a_terminal(env: dict[str, str], answer: bytes) -> str:
    """Run the script with a terminal as its stdin and stdout, answer its question; its output."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the script, on the terminal
        os.execve(BASH, [BASH, str(SCRIPT)], env)
    out = b""
    answered = False
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # the child has gone: the terminal is closed
            break
        if not chunk:
            break
        out += chunk
        if not answered and b"[y/N]" in out:
            os.write(fd, answer + b"\n")
            answered = True
    os.waitpid(pid, 0)
    assert answered, out
    return out.decode()


def test_at_a_terminal_it_asks_first_and_a_no_means_no_sudo(tmp_path: pathlib.Path) -> None:
    env, log = stand_ins(tmp_path, uid=1000)
    out = _at_a_terminal(env, b"n")
    assert "install it now with 'sudo apt-get install graphviz'? [y/N]" in out
    assert calls(log) == []
    assert out.count("built-in layout") == 1


def test_at_a_terminal_a_yes_runs_sudo_apt_get(tmp_path: pathlib.Path) -> None:
    env, log = stand_ins(tmp_path, uid=1000)
    _at_a_terminal(env, b"y")
    assert calls(log) == ["sudo apt-get update -qq", "sudo apt-get install -y -qq graphviz"]


def test_as_root_it_installs_with_apt_get_and_no_sudo(tmp_path: pathlib.Path) -> None:
    env, log = stand_ins(tmp_path, uid=0)
    done = subprocess.run(
        [BASH, str(SCRIPT)], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0
    assert calls(log) == ["apt-get update -qq", "apt-get install -y -qq graphviz"]
    # the stand-in installed nothing, so `dot` is still missing: said once, in one line
    assert done.stdout.splitlines()[-1].count("built-in layout") == 1
