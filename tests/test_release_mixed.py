"""micrograd-plus and karpathy's micrograd share the import name `micrograd`: installed in one
environment, in either order, their files mix, and uninstalling either breaks the other. Each
mix is named in one line with the command that repairs it (micrograd/core/install.py), and that
command repairs it. His package is his 0.1.0 wheel's three modules and dist-info, written here
(so no network), and installed by pip as pip installs his.

Slow: a wheel build, virtual environments and pip."""

from __future__ import annotations

import base64
import hashlib
import pathlib
import subprocess
import zipfile

import pytest

from micrograd.core.install import REPAIR

from .support.building import clean_env, fresh_venv, venv_bin

pytestmark = pytest.mark.slow
pytest.importorskip("build", reason="the test group's 'build' package builds the wheel")

HIS_ENGINE = '''
class Value:
    """ stores a single scalar value and its gradient """

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
'''


def his_wheel(folder: pathlib.Path) -> pathlib.Path:
    """karpathy's micrograd 0.1.0 as its wheel lays it out: an empty __init__.py, engine.py,
    nn.py, and a dist-info whose RECORD lists the three."""
    files = {
        "micrograd/__init__.py": b"",
        "micrograd/engine.py": HIS_ENGINE.encode(),
        "micrograd/nn.py": b"from micrograd.engine import Value\n",
        "micrograd-0.1.0.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: micrograd\nVersion: 0.1.0\n"
        ),
        "micrograd-0.1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: bdist_wheel (0.34.2)\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
        "micrograd-0.1.0.dist-info/top_level.txt": b"micrograd\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("micrograd-0.1.0.dist-info/RECORD,,")
    files["micrograd-0.1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / "micrograd-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory, built_dist) -> dict[str, pathlib.Path]:
    ours = built_dist["wheel"]  # (the session's, built once)
    return {"ours": ours, "his": his_wheel(tmp_path_factory.mktemp("his"))}


def run(venv: pathlib.Path, args: list[str], cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """A command of the venv (python, pip through python, micrograd), away from the clone."""
    exe = venv_bin(venv) / args[0]
    return subprocess.run(
        [str(exe), *args[1:]], capture_output=True, text=True, env=clean_env(), cwd=cwd, timeout=600
    )


def pip(venv: pathlib.Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv_bin(venv) / "python"), "-m", "pip", *args, "-q", "--no-deps", "--no-index"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


def the_repair_repairs(venv: pathlib.Path, ours: pathlib.Path, away: pathlib.Path) -> None:
    """The line's command, as written (the install from our wheel, here offline)."""
    uninstall, install = REPAIR.split(" && ")
    assert install == "pip install micrograd-plus"
    subprocess.run(
        [str(venv_bin(venv) / "python"), "-m", *uninstall.split()], check=True, env=clean_env()
    )
    pip(venv, "install", str(ours))
    done = run(venv, ["micrograd", "--version"], away)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    done = run(venv, ["python", "-W", "error", "-c", "import micrograd.jit, micrograd"], away)
    assert done.returncode == 0, done.stderr


def test_his_over_ours_is_named_by_our_modules_and_the_command(wheels, tmp_path) -> None:
    venv = tmp_path / "venv"
    fresh_venv(venv)
    pip(venv, "install", str(wheels["ours"]))
    pip(venv, "install", str(wheels["his"]))
    away = tmp_path / "away"
    away.mkdir()
    site = run(
        venv, ["python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], away
    )
    line = (
        f"micrograd: karpathy's micrograd 0.1.0 was installed over micrograd-plus in "
        f"{site.stdout.strip()} and replaced its micrograd/__init__.py, engine.py and nn.py (one "
        f"import name, two packages): run {REPAIR}"
    )
    # the command: one line, status 1 (before: ImportError: cannot import name '__version__')
    done = run(venv, ["micrograd", "--version"], away)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", line + "\n")
    # our modules: an ImportError saying it (his __init__.py and engine.py say nothing)
    done = run(venv, ["python", "-c", "import micrograd.jit"], away)
    assert done.returncode == 1 and done.stderr.splitlines()[-1] == f"ImportError: {line}"
    the_repair_repairs(venv, wheels["ours"], away)


def test_ours_over_his_is_said_once_at_import_and_uninstalling_his_after(wheels, tmp_path) -> None:
    venv = tmp_path / "venv"
    fresh_venv(venv)
    pip(venv, "install", str(wheels["his"]))
    pip(venv, "install", str(wheels["ours"]))
    away = tmp_path / "away"
    away.mkdir()
    site = run(
        venv, ["python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], away
    )
    site = site.stdout.strip()
    # it works, and says once, in one line, what will break and how to repair it
    done = run(venv, ["python", "-c", "import micrograd; print(micrograd.Value(2.0) * 3)"], away)
    assert done.returncode == 0 and "Value(data=6.0" in done.stdout, done.stderr
    said = done.stderr.splitlines()
    assert said == [
        f"{site}/micrograd:0: MixedInstallWarning: micrograd: karpathy's micrograd 0.1.0 is "
        f"installed in {site} under micrograd-plus (one import name: uninstalling either breaks "
        f"the other; micrograd-plus does all his does): run {REPAIR}"
    ], said
    # uninstalling his takes our __init__.py, engine.py and nn.py with it: named, in one line
    subprocess.run(
        [str(venv_bin(venv) / "python"), "-m", "pip", "uninstall", "-y", "-q", "micrograd"],
        check=True,
        env=clean_env(),
    )
    done = run(venv, ["micrograd", "--version"], away)
    assert (done.returncode, done.stderr) == (
        1,
        f"micrograd: micrograd-plus in {site} has lost micrograd/__init__.py (uninstalling "
        f"karpathy's micrograd deletes the files the two share): run {REPAIR}\n",
    )
    the_repair_repairs(venv, wheels["ours"], away)
