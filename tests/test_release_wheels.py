"""The two kinds of wheel a release ships, each installed alone (no dependencies, no clone) in a
fresh virtual environment: this machine's platform wheel (the compiled core: cibuildwheel builds
PyPI's, pyproject.toml's [tool.cibuildwheel]) and the pure one (py3-none-any, Pyodide's and any
platform's without a wheel). The first has `COMPILED` True, the second False; both compute
karpathy's moons demo and microgpt's first losses to the bit, and pass the engine's tests. The
build says no warning; the sdist carries no tests (they need the clone); the description PyPI
shows has absolute links and images.

Slow: builds, two virtual environments, the engine's tests twice."""

from __future__ import annotations

import email
import json
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from micrograd import data
from micrograd.gpt import microgpt

from .support.building import REPO, build, clean_env, fresh_venv

pytestmark = pytest.mark.slow
pytest.importorskip("build", reason="the test group's 'build' package builds the wheels")

KARPATHY_LOSS = 0.010978370135492717  # step 99 of karpathy's demo.ipynb
MICROGPT_STEP_1 = 3.3659669475848504  # step 1 of karpathy's microgpt.py (seed 42, makemore's names)
CHECK = REPO / "tests" / "support" / "wheel_check.py"


def has_compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "").split()
    return bool(cc) and shutil.which(cc[0]) is not None


@pytest.fixture(scope="module")
def built(request, tmp_path_factory) -> dict:
    """Both wheels and the sdist, built as `make dist` builds them, with the builds' output (the
    pure wheel and the sdist are the session's, conftest's `built_dist`)."""
    if not has_compiler():
        pytest.skip("no C compiler here: no platform wheel to build")
    pure = request.getfixturevalue("built_dist")
    log = [pure["log"].read_text()]
    platform = build(tmp_path_factory.mktemp("platform"), pure=False, log=log)
    return {
        "pure": pure["wheel"],
        "platform": platform["wheel"],
        "sdist": pure["sdist"],
        "log": log,
    }


@pytest.fixture(scope="module")
def venvs(built, tmp_path_factory) -> dict[str, pathlib.Path]:
    """A fresh virtual environment per wheel, holding that wheel alone: its python."""
    out = {}
    for kind in ("pure", "platform"):
        python = fresh_venv(tmp_path_factory.mktemp(f"venv-{kind}") / "venv")
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", built[kind]],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        out[kind] = python
    return out


def run_alone(python: pathlib.Path, args: list[str], cwd: pathlib.Path, **env: str) -> str:
    """`python args` away from the clone (cwd holds no micrograd/), with no PYTHONPATH and no
    MICROGRAD_PURE_PYTHON: the installed wheel decides."""
    environ = clean_env()
    environ.pop("MICROGRAD_PURE_PYTHON", None)
    environ.pop("MICROGRAD_NAMES_FILE", None)
    environ.update(env)
    done = subprocess.run(
        [str(python), *args], capture_output=True, text=True, env=environ, cwd=cwd, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_build_is_clean_and_each_wheel_is_of_its_kind(built) -> None:
    said = "\n".join(built["log"])
    assert "Package would be ignored" not in said
    # setuptools' and build's warnings (byte-compiling off, PYTHONDONTWRITEBYTECODE, is not one)
    warnings = [
        line
        for line in said.splitlines()
        if re.search(r"warn", line, re.I) and "byte-compiling is disabled" not in line
    ]
    assert not warnings, warnings
    assert built["pure"].name.endswith("-py3-none-any.whl")
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert f"-{tag}-{tag}-" in built["platform"].name, built["platform"].name
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    inside = zipfile.ZipFile(built["platform"]).namelist()
    assert f"micrograd/core/cvalue{suffix}" in inside
    assert not [n for n in zipfile.ZipFile(built["pure"]).namelist() if n.endswith(suffix)]
    # the sdist builds the core (its source and setup.py) and carries no tests
    with tarfile.open(built["sdist"]) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    assert "micrograd/core/cvalue.c" in names and "setup.py" in names
    assert not [n for n in names if n.startswith("tests/")]


def test_pypis_page_has_absolute_links_and_images(built) -> None:
    for wheel in (built["pure"], built["platform"]):
        z = zipfile.ZipFile(wheel)
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        msg = email.message_from_bytes(z.read(meta))
        assert msg["Description-Content-Type"] == "text/markdown"
        text = msg.get_payload()
        assert text.startswith("# ")  # the README, not empty
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        prose = re.sub(r"(?<!\[)`[^`\n]*`(?!\])", "", prose)
        targets = re.findall(r"\]\(([^()\s]+)\)", prose)
        assert targets
        relative = [t for t in targets if not re.match(r"https?://|#", t)]
        assert not relative, relative
        images = re.findall(r"!\[[^\]]*\]\(([^()\s]+)\)", prose)
        assert all(i.startswith("https://raw.githubusercontent.com/") for i in images), images


def test_each_wheel_alone_has_its_engine_and_karpathys_moons_loss(venvs, tmp_path) -> None:
    said = {}
    for kind, flag in (("platform", "--compiled"), ("pure", "--pure")):
        out = run_alone(venvs[kind], [str(CHECK), flag, "--no-gpt"], tmp_path)
        said[kind] = json.loads(out)
    assert said["platform"]["compiled"] is True
    assert said["pure"]["compiled"] is False
    assert said["platform"]["moons"] == said["pure"]["moons"] == repr(KARPATHY_LOSS)


def test_each_wheel_alone_gives_microgpts_first_losses(venvs, tmp_path, names_file) -> None:
    names = str(names_file)  # the suite's shared copy of makemore's names.txt (tests/conftest.py)
    said = {
        kind: json.loads(run_alone(venvs[kind], [str(CHECK)], tmp_path, MICROGRAD_NAMES_FILE=names))
        for kind in ("platform", "pure")
    }
    # this process's engine (the clone's), on the same names, is the reference
    here = [repr(x) for x in microgpt(docs=data.names(names), steps=3, seed=42)[2]]
    assert said["platform"]["gpt"] == said["pure"]["gpt"] == here
    assert here[0] == repr(MICROGPT_STEP_1)


def test_each_wheel_alone_passes_the_engines_tests(venvs, tmp_path) -> None:
    # the tests beside the installed wheel, not the clone (as cibuildwheel's test-sources); their
    # own needs (pytest, hypothesis, numpy, torch) from this environment, after the wheel's
    tests = tmp_path / "copy"
    shutil.copytree(REPO / "tests", tests / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tests / "pyproject.toml")
    ours = sysconfig.get_paths()["purelib"]
    for kind, compiled in (("platform", "True"), ("pure", "False")):
        purelib = run_alone(
            venvs[kind], ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tests
        ).strip()
        pathlib.Path(purelib, "zz-test-tools.pth").write_text(ours + "\n")
        where = run_alone(
            venvs[kind],
            ["-c", "import micrograd.core.compiled as c; print(c.__file__, c.COMPILED)"],
            tests,
        ).split()
        assert where == [str(pathlib.Path(purelib, "micrograd", "core", "compiled.py")), compiled]
        out = run_alone(
            venvs[kind],
            [
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",  # not pyproject's -q: the summary line, read below
                "-x",
                "tests/test_compiled.py",
                "tests/test_engine.py",
            ],
            tests,
            # the pure wheel's run is `make test`'s pure pass: the tests that need a compiled
            # core wherever a C compiler is (a clone's install) say it is the pure one by request
            **({"MICROGRAD_PURE_PYTHON": "1"} if kind == "pure" else {}),
        )
        summary = out.strip().splitlines()[-1]
        assert re.search(r"\d+ passed", summary) and "failed" not in summary, out[-2000:]
