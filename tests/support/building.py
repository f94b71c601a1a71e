"""Builds this tree's wheel and sdist as a release does, and fresh virtual environments to install
them in: for the tests that run micrograd outside the clone (test_playground_wheel.py,
test_release_install.py). The build runs on a copy, so the checkout gets no build/ or
.egg-info droppings, and without build isolation, so it needs no network."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
# what the build reads: the package (micrograd/notebooks links to notebooks/, copied as files),
# the project's metadata (setup.py: the optional compiled core) and license files, and the
# Jupyter config the wheel installs
PACKAGED = (
    "micrograd",
    "jupyter-config",
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "NOTICE",
)


def clean_env() -> dict[str, str]:
    """This process's environment without PYTHONPATH, which would put the checkout's micrograd
    ahead of the installed one."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def copy_source(dest: pathlib.Path) -> pathlib.Path:
    """A copy of what the build reads (PACKAGED) at dest, as a clone has it; returns dest."""
    for name in PACKAGED:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name,
                dest / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"),
            )
        else:
            shutil.copy(REPO / name, dest / name)
    return dest


def build(
    tmp_path: pathlib.Path, *, sdist: bool = False, pure: bool = True, log: list[str] | None = None
) -> dict[str, pathlib.Path]:
    """Build the wheel (and the sdist, if asked) into tmp_path/dist: {'wheel': ., 'sdist': .}.
    The wheel is the pure one (py3-none-any) unless `pure` is False: then this machine's, with
    the compiled core. The build's output (stdout, then stderr) is appended to `log` if given."""
    src = copy_source(tmp_path / "src")
    dist = tmp_path / "dist"
    kinds = ["--sdist", "--wheel"] if sdist else ["--wheel"]
    env = clean_env()
    env.pop("MICROGRAD_PURE_PYTHON", None)
    if pure:
        env["MICROGRAD_PURE_PYTHON"] = "1"  # as `make dist-pure`
    built = subprocess.run(
        [sys.executable, "-m", "build", *kinds, "--no-isolation", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    if log is not None:
        log += [built.stdout, built.stderr]
    out = {"wheel": next(dist.glob("*.whl"))}
    if sdist:
        out["sdist"] = next(dist.glob("*.tar.gz"))
    return out


def venv_bin(venv: pathlib.Path) -> pathlib.Path:
    """Where a virtual environment keeps its python and its scripts, on this platform."""
    return venv / ("Scripts" if sys.platform == "win32" else "bin")


def fresh_venv(venv: pathlib.Path) -> pathlib.Path:
    """A new virtual environment at venv, made by this Python; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return venv_bin(venv) / ("python.exe" if sys.platform == "win32" else "python")
