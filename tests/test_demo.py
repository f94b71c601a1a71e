"""`micrograd demo`: in-process through `cli.main` (exit status, output, files), plus a few
subprocess smoke tests of the command as a user runs it (progress bar, Ctrl-C, import cost)."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from micrograd import data, optim, train
from micrograd.commands import cli
from micrograd.commands import demo as demo_command
from micrograd.io import load
from micrograd.nn import MLP
from micrograd.train import demo, evaluate, plots
from micrograd.train import jit_step as jit_train
from micrograd.train.demo import PRESETS, DemoConfig, config_for
from tests.support.source import calls, strings

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KARPATHY_FINAL_LOSS = 0.010978370135492717  # step 99 of karpathy's demo.ipynb


@pytest.fixture(autouse=True)
def no_gc_freeze(monkeypatch) -> None:
    """The command freezes the gc for its own process; not for pytest's."""
    monkeypatch.setattr(train, "freeze_gc", lambda: None)


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["demo", "--no-progress", *args])
    out, err = capsys.readouterr()
    return status, out, err


def subprocess_demo(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.Popen(
        [sys.executable, "-m", "micrograd", "demo", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def assert_png(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def final_line(out: str) -> re.Match:
    last = out.strip().splitlines()[-1]
    m = re.fullmatch(
        r"step (\d+)/\1: (batch )?loss (\S+), accuracy (\d+\.\d)% on the whole training set "
        r"\((\d+) samples\)(?:, (\d+\.\d)% on the test set \((\d+)\))?",
        last,
    )
    assert m, last
    return m


# ------------------------------------------------------------------ karpathy's demo, per engine


@pytest.mark.parametrize("engine", ["jit", "eager"])
@pytest.mark.slow
def test_default_demo_is_karpathys(capsys, tmp_path, engine) -> None:
    args = ["--out", str(tmp_path)] + (["--no-jit"] if engine == "eager" else [])
    status, out, err = run(capsys, *args)
    assert status == 0, err
    assert out.splitlines()[0].endswith(f"; {engine} engine")
    assert "MLP 2-16-16-1 (337 parameters, relu); hinge loss, sgd lr 1.0" in out
    m = final_line(out)
    loss = float(m.group(3))
    if engine == "eager":
        assert loss == KARPATHY_FINAL_LOSS  # bit for bit
    else:  # numpy sums in its own order
        assert loss == pytest.approx(KARPATHY_FINAL_LOSS, rel=1e-9, abs=0)
    assert m.group(4) == "100.0" and m.group(5) == "100"
    model = load(tmp_path / "model.json")
    assert evaluate(model, *data.moons(seed=1337), "hinge") == 1.0
    assert_png(tmp_path / "decision_boundary.png")
    assert_png(tmp_path / "training.png")
    assert f"wrote {tmp_path}/model.json, {tmp_path}/training.png, " in out
    if engine == "eager":  # the guide shows this line
        guide = (ROOT / "docs" / "training.md").read_text()
        assert f"```text\n{out.strip().splitlines()[-1]}\n```" in guide


# ------------------------------------------------------------------ as a user runs it


@pytest.mark.slow
def test_smoke_subprocess_progress_and_default_out(tmp_path: Path) -> None:
    p = subprocess_demo(
        "xor", "--steps", "5", "--hidden", "4", "--activation", "tanh", cwd=tmp_path
    )
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert "5/5" in err  # the progress bar
    final_line(out)
    assert sorted(os.listdir(tmp_path / "micrograd-demo")) == [
        "decision_boundary.png",
        "model.json",
        "training.png",
    ]
    model = load(tmp_path / "micrograd-demo" / "model.json")
    assert model.config()["activation"] == "tanh"


@pytest.mark.slow
def test_smoke_ctrl_c_is_one_line_exit_130_and_no_file(tmp_path: Path) -> None:
    p = subprocess_demo("digits", "--steps", "1000000", "--out", "o", cwd=tmp_path)
    seen = ""
    deadline = time.monotonic() + 120
    while "training:" not in seen and time.monotonic() < deadline:  # the bar has started
        char = p.stderr.read(1)
        if not char:  # the process ended early: fail below with what it said
            break
        seen += char
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130
    last = (seen + err).replace("\r", "\n").strip().splitlines()[-1]
    assert re.fullmatch(
        r"micrograd demo: error: interrupted at step \d+/1000000; nothing written", last
    ), last
    assert "Traceback" not in seen + err
    assert not (tmp_path / "o").exists()  # not even the folder the run made


@pytest.mark.slow
def test_smoke_moons_does_not_import_sklearn(tmp_path: Path) -> None:
    code = (
        "import sys; from micrograd import train; from micrograd.commands import cli; "
        "train.freeze_gc = lambda: None; "
        "assert cli.main(['demo', '--steps', '1', '--no-progress', '--out', 'o']) == 0; "
        "assert 'sklearn' not in sys.modules, 'sklearn imported'"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, check=True, capture_output=True
    )


# ------------------------------------------------------------------ bad input: one line, first


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "-3"], "--steps must be at least 1, got -3"),
        (["--steps", "ten"], "--steps needs a whole number"),
        (["mnist"], "invalid choice: 'mnist'"),
        (["--hidden", "16,x"], "--hidden needs comma-separated positive layer sizes"),
        (["--hidden", "0"], "--hidden"),
        (["--lr", "-1"], "--lr must be a positive number"),
        (["--lr", "inf"], "--lr must be a positive number"),
        (["--activation", "gelu"], "invalid choice: 'gelu'"),
        (["--optimizer", "rmsprop"], "invalid choice: 'rmsprop'"),
        (["--seed", "-1"], "--seed must be from 0 to 4294967295, got -1"),
        (["--seed", str(2**32)], "--seed must be from 0 to 4294967295, got 4294967296"),
        (["--seed", "1.5"], "--seed needs a whole number"),
        (["--batch-size", "0"], "--batch-size must be at least 1"),
        (["--max-params", "0"], "--max-params must be at least 1"),
        (
            ["--hidden", "100000,100000"],
            "MLP 2-100000-100000-1 has 10,000,500,001 parameters, more than the cap of 200,000 "
            "(it would need about 7.7 TB of memory); pass --max-params 10000500001",
        ),
        (["digits", "--hidden", "4000"], "MLP 64-4000-10 has 300,010 parameters"),
        (["--hidden", "300,300", "--max-params", "1000"], "more than the cap of 1,000"),
    ],
)
def test_bad_options_exit_2_with_one_line(capsys, tmp_path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("micrograd demo: error: ")
    assert message in err
    assert not (tmp_path / "micrograd-demo").exists()


def test_the_size_cap_has_an_override(capsys, tmp_path) -> None:
    status, out, err = run(
        capsys, "--hidden", "30", "--max-params", "121", "--steps", "1", "--out", str(tmp_path)
    )
    assert status == 0, err
    assert "MLP 2-30-1 (121 parameters" in out


def test_memory_estimate_grows_with_the_model() -> None:
    small, big = DemoConfig(hidden=(16, 16)), DemoConfig(hidden=(160, 160))
    assert 0 < demo.memory_estimate(small) < demo.memory_estimate(big)
    eager = DemoConfig(hidden=(16, 16), jit=False)
    assert demo.memory_estimate(eager) > demo.memory_estimate(small)  # one graph per sample


@pytest.mark.parametrize(
    "setup, out, message",
    [
        (lambda d: (d / "f").write_text("x"), "f", "--out f is a file, not a folder"),
        (
            lambda d: (d / "f").write_text("x"),
            "f/sub",
            "cannot create the folder 'f/sub': Not a directory",
        ),
        (
            lambda d: (d / "o" / "model.json").mkdir(parents=True),
            "o",
            "cannot write o/model.json: it is a folder",
        ),
        (
            lambda d: (d / "o" / "training.png").mkdir(parents=True),
            "o",
            "cannot write o/training.png: it is a folder",
        ),
    ],
)
def test_unwritable_out_is_found_before_training(
    capsys, tmp_path, monkeypatch, setup, out, message
) -> None:
    monkeypatch.chdir(tmp_path)
    setup(tmp_path)
    monkeypatch.setattr(demo, "run_demo", lambda cfg: pytest.fail("trained anyway"))
    status, stdout, err = run(capsys, "--out", out)
    assert status == 2 and stdout == ""
    assert err == f"micrograd demo: error: {message}\n"


def test_a_write_failing_after_training_names_the_file(capsys, tmp_path, monkeypatch) -> None:
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "training.png"))

    monkeypatch.setattr(plots, "training_curves", full_disk)
    status, out, err = run(capsys, "--steps", "2", "--out", str(tmp_path))
    assert status == 1
    assert (
        err == f"micrograd demo: error: cannot write {tmp_path}/training.png: "
        "No space left on device\n"
    )
    assert ".tmp" not in err


# ------------------------------------------------------------------ divergence and Ctrl-C


@pytest.mark.parametrize(
    "args",
    [["--lr", "1e10"], ["--hidden", "64,64,64"], ["--lr", "1e10", "--no-jit"]],
    ids=["jit lr", "jit hidden", "eager lr"],
)
def test_divergence_stops_at_its_step_with_one_line(capsys, tmp_path, args) -> None:
    status, out, err = run(capsys, *args, "--out", str(tmp_path))
    assert status == 1
    m = re.fullmatch(
        r"micrograd demo: error: training diverged at step (\d+): (.*) \(try a lower --lr than "
        r"\S+\); wrote the curves up to it: (.*)\n",
        err,
    )
    assert m, err
    assert m.group(3) == str(tmp_path / "training.png")
    assert_png(tmp_path / "training.png")
    assert os.listdir(tmp_path) == ["training.png"]  # no model with nan weights
    assert "Traceback" not in err


def test_divergence_keeps_the_history_up_to_its_step(tmp_path) -> None:
    result = demo.run_demo(
        DemoConfig(lr=1e10, progress=False, out=str(tmp_path)), out=open(os.devnull, "w")
    )
    e = result["diverged"]
    assert isinstance(e, train.Diverged)
    assert len(e.history.loss) == e.step  # the steps before it, all finite
    assert all(v == v and abs(v) != float("inf") for v in e.history.loss)


def test_ctrl_c_during_training(capsys, tmp_path, monkeypatch) -> None:
    calls = []
    real = jit_train.JitStep.__call__

    def interrupt_at_step_4(self, X, y):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(self, X, y)

    monkeypatch.setattr(jit_train.JitStep, "__call__", interrupt_at_step_4)
    status, out, err = run(capsys, "--out", str(tmp_path))
    assert status == 130
    assert err == "micrograd demo: error: interrupted at step 3/100; nothing written\n"
    assert os.listdir(tmp_path) == []  # a folder that was there stays
    calls.clear()
    status, out, err = run(capsys, "--out", str(tmp_path / "new"))
    assert status == 130 and "nothing written" in err
    assert not (tmp_path / "new").exists()  # "nothing written": not even the folder it made


def test_out_errors_name_the_folder_and_why(capsys, tmp_path) -> None:
    status, out, err = run(capsys, "--out", "")
    assert status == 2 and err == (
        "micrograd demo: error: --out is empty; name a folder, e.g. --out runs/moons\n"
    )
    blocked = tmp_path / "ro"
    blocked.mkdir(mode=0o500)
    if os.access(blocked, os.W_OK):  # root may write anywhere: a file in the way instead
        blocked = tmp_path / "file"
        blocked.write_text("x")
        status, out, err = run(capsys, "--out", str(blocked / "sub"))
        assert status == 2 and f"cannot create the folder '{blocked / 'sub'}'" in err
    else:
        status, out, err = run(capsys, "--out", str(blocked / "sub"))
        assert status == 2 and f"folders cannot be made in {blocked}" in err


def test_ctrl_c_while_writing_leaves_whole_files(capsys, tmp_path, monkeypatch) -> None:
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "training_curves", interrupt)
    status, out, err = run(capsys, "--steps", "3", "--out", str(tmp_path))
    assert status == 130
    assert err == (
        "micrograd demo: error: interrupted while writing the results (wrote "
        f"{tmp_path}/model.json; the rest of {tmp_path} is as it was)\n"
    )
    assert os.listdir(tmp_path) == ["model.json"]
    load(tmp_path / "model.json")  # whole


# ------------------------------------------------------------------ what the summary says


@pytest.mark.slow
def test_accuracy_is_on_the_whole_training_set(capsys, tmp_path) -> None:
    status, out, err = run(capsys, "--batch-size", "10", "--steps", "20", "--out", str(tmp_path))
    assert status == 0, err
    m = final_line(out)
    assert m.group(2) == "batch "
    model = load(tmp_path / "model.json")
    whole = evaluate(model, *data.moons(seed=1337), "hinge")
    assert m.group(4) == f"{100 * whole:.1f}" and m.group(5) == "100"


@pytest.mark.slow
def test_digits_reports_training_and_test_accuracy(capsys, tmp_path) -> None:
    status, out, err = run(
        capsys, "digits", "--steps", "3", "--hidden", "4", "--out", str(tmp_path)
    )
    assert status == 0, err
    m = final_line(out)
    X, y = data.digits()
    X_train, X_test, y_train, y_test = data.train_test_split(X, y, 0.2, 1337)
    model = load(tmp_path / "model.json")
    assert m.group(4) == f"{100 * evaluate(model, X_train, y_train, 'cross_entropy'):.1f}"
    assert m.group(6) == f"{100 * evaluate(model, X_test, y_test, 'cross_entropy'):.1f}"
    assert (m.group(5), m.group(7)) == (str(len(X_train)), str(len(X_test)))
    assert_png(tmp_path / "predictions.png")
    assert not (tmp_path / "decision_boundary.png").exists()  # 64-D: no boundary


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw"])
@pytest.mark.slow
def test_optimizer_option(capsys, tmp_path, name) -> None:
    status, out, err = run(
        capsys, "--optimizer", name, "--lr", "0.05", "--steps", "3", "--out", str(tmp_path)
    )
    assert status == 0, err
    assert f"hinge loss, {name} lr 0.05" in out
    opt, _ = demo.make_optimizer(DemoConfig(optimizer=name), MLP(2, [1]))
    assert type(opt) is {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW}[name]


def test_plot_titles_name_the_network(capsys, tmp_path, monkeypatch) -> None:
    titles = []
    real = plots.training_curves
    monkeypatch.setattr(
        plots,
        "training_curves",
        lambda h, p, title: (titles.append(title), real(h, p, title=title)),
    )
    assert run(capsys, "xor", "--hidden", "4", "--steps", "2", "--out", str(tmp_path))[0] == 0
    assert titles == ["xor: MLP 2-4-1"]
    assert demo.shape_name([64, 64, 10]) == "MLP 64-64-10"


def test_a_reused_out_folder_is_explained(capsys, tmp_path) -> None:
    (tmp_path / "predictions.png").write_bytes(PNG_SIGNATURE)  # as an earlier digits run left
    status, out, err = run(capsys, "--steps", "1", "--out", str(tmp_path))
    assert status == 0
    assert (
        f"wrote {tmp_path}/model.json, {tmp_path}/training.png, "
        f"{tmp_path}/decision_boundary.png\n" in out
    )
    assert f"note: predictions.png in {tmp_path} is from an earlier run, not this one" in out


@pytest.mark.slow
def test_digit_pictures_show_the_mistakes(tmp_path) -> None:
    assert plots.pick_digits([1, 2, 3, 4], [1, 0, 3, 0], n=4) == [1, 3, 0, 2]
    assert plots.pick_digits([0] * 40, [1] * 40, n=32) == list(range(32))  # all wrong
    assert plots.pick_digits([5] * 40, [5] * 40, n=8) == list(range(8))  # all right
    X, y = data.digits()
    import random

    random.seed(0)
    model = MLP(64, [10])  # untrained: mostly wrong
    shown = plots.digit_predictions(model, X[:100], y[:100], tmp_path / "p.png")
    guesses = jit_train.forward_numpy(model, X[:100]).argmax(axis=1)
    wrong = [i for i in shown if guesses[i] != y[i]]
    right = [i for i in shown if guesses[i] == y[i]]
    assert len(shown) == 32 and wrong and shown[: len(wrong)] == wrong and right == shown[16:]
    assert_png(tmp_path / "p.png")


# ------------------------------------------------------------------ configuration


def test_config_presets() -> None:
    assert config_for("moons") == DemoConfig()
    cfg = config_for("digits", steps=10, hidden=None)
    assert cfg.steps == 10 and cfg.hidden == PRESETS["digits"]["hidden"]
    assert cfg.loss == "cross_entropy"
    with pytest.raises(ValueError, match="unknown dataset"):
        config_for("mnist")


def test_activation_choices_are_the_librarys() -> None:
    import argparse

    from micrograd.nn import ACTIVATIONS

    parser = argparse.ArgumentParser()
    sub = demo_command.add_demo_command(parser.add_subparsers())
    choices = next(a.choices for a in sub._actions if a.dest == "activation")
    assert list(choices) == [a for a in ACTIVATIONS if a != "linear"]  # one map, no copy


def test_the_demo_module_does_one_job() -> None:
    import ast

    tree = ast.parse((ROOT / "micrograd" / "train/demo.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "gc" not in imported  # the gc freeze is train.freeze_gc, named and documented
    path = ROOT / "micrograd" / "train/demo.py"
    assert not calls(path, "relu")  # no loss formula of its own
    assert not [s for s in strings(path) if "labels must be" in s]  # nor a check of its own


def test_digits_without_sklearn_is_one_line(capsys, tmp_path, monkeypatch) -> None:
    def missing():
        raise ImportError('digits needs scikit-learn: pip install "micrograd-plus[data]"')

    digits = dataclasses.replace(data.DATASETS["digits"], make=missing)  # its one declaration
    monkeypatch.setitem(data.DATASETS, "digits", digits)
    status, out, err = run(capsys, "digits", "--out", str(tmp_path))
    assert status == 1
    said = 'digits needs scikit-learn: pip install "micrograd-plus[data]"'
    assert err == f"micrograd demo: error: {said}\n"


def test_ctrl_c_anywhere_in_a_command_is_one_line(capsys, monkeypatch) -> None:
    from micrograd.commands import graph as graph_command

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(graph_command, "run_graph", interrupted)
    assert cli.main(["graph", "x = 1"]) == 130
    assert capsys.readouterr().err == "micrograd graph: interrupted\n"


@pytest.mark.slow
def test_a_finite_but_exploded_loss_is_called_out(capsys, tmp_path) -> None:
    status, out, err = run(capsys, "--lr", "1e3", "--out", str(tmp_path))
    first, last = (float(x) for x in re.search(r"loss rose from (\S+) to (\S+);", out).groups())
    assert status == 0 and last > demo.EXPLODED * first and "lower --lr than 1000" in out
    status, out, err = run(capsys, "--steps", "5", "--out", str(tmp_path))  # a healthy run
    assert status == 0 and "loss rose" not in out
