"""`micrograd demo` as a user runs it: a subprocess, its exit code, output and files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from micrograd import data
from micrograd.demo import PRESETS, DemoConfig, config_for
from micrograd.nn import MLP
from micrograd.train import evaluate

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def demo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "micrograd", "demo", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )


def assert_png(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_default_demo_is_karpathys(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = demo("--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r".*accuracy \d+\.\d%", last)
    # The default engine is micrograd.jit (numpy sums in its own order): karpathy's loss to 1e-9;
    # test_demo_jit checks that --no-jit (the eager engine) gives it bit for bit.
    m = re.fullmatch(r"step 100/100: loss (\S+), accuracy 100.0%", last)
    assert m, last
    assert float(m.group(1)) == pytest.approx(0.010978370135492717, rel=1e-9, abs=0)
    assert_png(out / "decision_boundary.png")
    assert_png(out / "training.png")
    model = MLP.load(out / "model.json")
    assert len(model.parameters()) == 337
    X, y = data.moons(seed=1337)
    assert evaluate(model, X, y, "hinge") == 1.0
    assert "100/100" in r.stderr  # the progress bar


def test_default_out_dir_and_other_datasets(tmp_path: Path) -> None:
    r = demo("xor", "--steps", "5", "--hidden", "4", "--activation", "tanh", "--lr", "0.5",
             "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"accuracy \d+\.\d%$", r.stdout.strip())
    out = tmp_path / "micrograd-demo"
    assert sorted(os.listdir(out)) == ["decision_boundary.png", "model.json", "training.png"]
    model = MLP.load(out / "model.json")
    assert repr(model) == "MLP of [Layer of [TanhNeuron(2), TanhNeuron(2), TanhNeuron(2), " \
        "TanhNeuron(2)], Layer of [LinearNeuron(4)]]"
    assert r.stderr == ""


def test_digits_reports_test_accuracy(tmp_path: Path) -> None:
    r = demo("digits", "--steps", "3", "--hidden", "4", "--no-progress", "--out", "d",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"test accuracy \d+\.\d%$", r.stdout.strip())
    assert_png(tmp_path / "d" / "training.png")
    assert_png(tmp_path / "d" / "predictions.png")
    assert not (tmp_path / "d" / "decision_boundary.png").exists()  # 64-D: no boundary
    assert len(MLP.load(tmp_path / "d" / "model.json").parameters()) == 64 * 4 + 4 + 4 * 10 + 10


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "-3"], "--steps must be at least 1"),
        (["--steps", "ten"], "--steps needs a whole number"),
        (["mnist"], "invalid choice: 'mnist'"),
        (["--hidden", "16,x"], "--hidden needs comma-separated positive layer sizes"),
        (["--hidden", "0"], "--hidden"),
        (["--lr", "-1"], "--lr must be a positive number"),
        (["--activation", "gelu"], "invalid choice: 'gelu'"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, args: list, message: str) -> None:
    r = demo(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr
    assert not (tmp_path / "micrograd-demo").exists()


def test_out_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    r = demo("--out", "f", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "is a file" in r.stderr


def test_out_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    r = demo("--out", "f/sub", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "cannot create --out 'f/sub'" in r.stderr and "Traceback" not in r.stderr


def test_config_presets() -> None:
    assert config_for("moons") == DemoConfig()
    cfg = config_for("digits", steps=10, hidden=None)
    assert cfg.steps == 10 and cfg.hidden == PRESETS["digits"]["hidden"]
    assert cfg.loss == "cross_entropy"
    with pytest.raises(ValueError, match="unknown dataset"):
        config_for("mnist")


def test_numpy_forward_used_for_plots_matches_the_model() -> None:
    import random

    from micrograd.plots import forward_numpy

    random.seed(0)
    for model in (MLP(2, [5, 5, 1]), MLP(2, [4, 3], activation="tanh", out_activation="sigmoid")):
        points = [[0.5, -1.0], [2.0, 0.25], [-0.3, 0.0]]
        got = forward_numpy(model, points).tolist()
        want = [[o.data for o in model.outputs(p)] for p in points]
        for g, w in zip(got, want):
            assert g == pytest.approx(w, rel=1e-12, abs=1e-12)
