"""Every file the package writes goes through `atomic_write`: all of it, or the old file intact."""

from __future__ import annotations

import ast
import os
import pathlib

import pytest

from micrograd.commands import cli
from micrograd.core.atomic import atomic_write, check_writable, describe

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "micrograd"


def test_writes_and_replaces(tmp_path) -> None:
    path = tmp_path / "f.txt"
    atomic_write(path, "héllo")
    assert path.read_bytes() == "héllo".encode()
    atomic_write(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    assert os.listdir(tmp_path) == ["f.txt"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # not mkstemp's 0o600


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Torn(OSError):
    pass


def half_then_fail(monkeypatch) -> None:
    """The next write puts half its bytes on disk, then fails as a full disk does."""
    real = os.fdopen

    class Half:
        def __init__(self, f):
            self.f = f

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 2])
            self.f.flush()
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Half(real(fd, *a, **k)))


def test_a_write_failing_half_way_keeps_the_old_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "g.svg"
    atomic_write(path, "<svg>the good one</svg>")
    half_then_fail(monkeypatch)
    with pytest.raises(OSError) as info:
        atomic_write(path, "<svg>" + "x" * 10000 + "</svg>")
    assert info.value.filename == str(path) and info.value.errno == 28
    assert describe(info.value) == f"cannot write {path}: No space left on device"
    assert path.read_text() == "<svg>the good one</svg>"
    assert os.listdir(tmp_path) == ["g.svg"]


def test_errors_name_the_users_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        check_writable(tmp_path / "missing" / "f.png")
    assert info.value.filename == str(tmp_path / "missing" / "f.png")
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        atomic_write(tmp_path / "dir.png", b"x")
    assert describe(info.value) == f"cannot write {tmp_path / 'dir.png'}: it is a folder"
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(PermissionError) as info:
            atomic_write(ro / "f.txt", b"x")
        assert info.value.filename == str(ro / "f.txt")
        assert ".tmp" not in str(info.value)


def test_graph_output_failing_half_way_keeps_the_old_file(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "g.txt"
    assert cli.main(["graph", "x = 2; y = x * 3", "-o", str(out)]) == 0
    good = out.read_text()
    half_then_fail(monkeypatch)
    assert cli.main(["graph", "x = 5; y = x * x * x + x", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and str(out) in err
    assert out.read_text() == good
    assert os.listdir(tmp_path) == ["g.txt"]


@pytest.mark.slow
def test_plot_failing_half_way_keeps_the_old_png(tmp_path, monkeypatch) -> None:
    from micrograd.train import History, plots

    path = tmp_path / "training.png"
    plots.training_curves(History(loss=[1.0, 0.5], accuracy=[0.5, 1.0]), path)
    good = path.read_bytes()
    assert good[:8] == b"\x89PNG\r\n\x1a\n"
    half_then_fail(monkeypatch)
    with pytest.raises(OSError):
        plots.training_curves(History(loss=[3.0, 0.1], accuracy=[0.1, 0.9]), path)
    assert path.read_bytes() == good


METHODS = {"write_bytes", "write_text", "render"}  # pathlib's writers; graphviz's render
MODULE_CALLS = {
    ("os", "replace"),
    ("os", "rename"),
    ("shutil", "copy"),
    ("shutil", "copyfile"),
    ("shutil", "copy2"),
    ("shutil", "move"),
}


def _writes(call: ast.Call) -> bool:
    f = call.func
    if not isinstance(f, (ast.Attribute, ast.Name)):
        return False
    name = f.attr if isinstance(f, ast.Attribute) else f.id
    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
    if name in METHODS or (owner, name) in MODULE_CALLS:
        return True
    if name == "savefig":  # only into memory (then atomic_write)
        first = call.args[0] if call.args else None
        return not (isinstance(first, ast.Name) and first.id == "buffer")
    if name in ("open", "fdopen"):
        target = ast.unparse(call.args[0]) if call.args else ""
        if target == "os.devnull" or target.startswith("os.dup("):
            return False  # nowhere, or a copy of an open stream (stdout): no file is written
        modes = call.args[1:2] + [k.value for k in call.keywords if k.arg == "mode"]
        return any(
            not isinstance(m, ast.Constant) or set(str(m.value)) & set("wax+") for m in modes
        )
    return False


@pytest.mark.slow
def test_no_module_writes_a_file_any_other_way() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _writes(node):
                where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                offenders.append(f"{where}: {ast.unparse(node)}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.slow
def test_curves_of_a_run_that_blew_up_still_draw(tmp_path) -> None:
    from micrograd.train import History, plots

    for loss in ([1.0, 1e300, 1e-300], [0.5, 1e308, 1.7e308], [1.0, 0.0, -2.0]):
        path = tmp_path / "t.png"
        plots.training_curves(History(loss=loss, accuracy=[0.5] * 3), path)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
