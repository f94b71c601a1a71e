"""`micrograd gpt` as a user runs it: its output against microgpt() and sample(), one-line
errors with exit status 2, Ctrl-C in a real process, and --save read back by io.load."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from micrograd import data
from micrograd.commands import cli
from micrograd.gpt import microgpt, sample
from micrograd.io import load

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "zoe", "lu", "ann", "bob"]


@pytest.fixture
def words(tmp_path: Path) -> Path:
    f = tmp_path / "words.txt"
    f.write_text("\n".join(WORDS) + "\n")
    return f


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["gpt", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_prints_each_step_then_the_samples(capsys, words: Path) -> None:
    status, out, err = run(capsys, "--docs", str(words), "--steps", "4", "--samples", "5")
    assert status == 0 and err == ""
    model, tok, losses = microgpt(docs=WORDS, steps=4, seed=42)
    expected = [f"step {i + 1} / 4 | loss {x:.4f}" for i, x in enumerate(losses)]
    assert out.splitlines() == expected + sample(model, tok, n=5, temperature=0.5)


@pytest.mark.slow
def test_temperature_and_seed_reach_the_run(capsys, words: Path) -> None:
    args = ("--docs", str(words), "--steps", "2", "--samples", "6", "--seed", "3")
    status, out, _ = run(capsys, *args, "--temperature", "1.5")
    assert status == 0
    model, tok, losses = microgpt(docs=WORDS, steps=2, seed=3)
    assert out.splitlines()[0] == f"step 1 / 2 | loss {losses[0]:.4f}"
    assert out.splitlines()[2:] == sample(model, tok, n=6, temperature=1.5)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "0"], "--steps must be at least 1, got 0"),
        (["--steps", "ten"], "--steps needs a whole number, got 'ten'"),
        (["--temperature", "-1"], "--temperature must be a number > 0, got -1"),
        (["--temperature", "inf"], "--temperature must be a number > 0, got inf"),
        (["--samples", "-2"], "--samples must be at least 0, got -2"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_a_bad_option_is_one_line_and_status_2(capsys, words: Path, args, message) -> None:
    status, out, err = run(capsys, "--docs", str(words), *args)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_missing_words_are_one_line_and_status_2(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(data, "NAMES_FILE", tmp_path / "names.txt")
    monkeypatch.delenv(data.NAMES_ENV, raising=False)  # (CI names another file)
    status, out, err = run(capsys, "--steps", "1")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "names.txt is not in this build" in err and "--docs" in err
    status, out, err = run(capsys, "--docs", str(tmp_path / "nope.txt"))
    assert status == 2 and err.strip().endswith("nope.txt: No such file or directory")
    (tmp_path / "empty.txt").write_text("\n\n")
    status, out, err = run(capsys, "--docs", str(tmp_path / "empty.txt"))
    assert status == 2 and "no words in it" in err


@pytest.mark.slow
def test_save_then_load(capsys, words: Path, tmp_path: Path) -> None:
    path = tmp_path / "gpt.json"
    status, out, _ = run(capsys, "--docs", str(words), "--steps", "3", "--save", str(path))
    assert status == 0
    model, _, _ = microgpt(docs=WORDS, steps=3, seed=42)
    back = load(path)
    assert [p.data for p in back.parameters()] == [p.data for p in model.parameters()]
    status, out, err = run(capsys, "--docs", str(words), "--save", str(tmp_path / "no" / "g.json"))
    assert status == 2 and "its folder does not exist" in err and out == ""


def test_ctrl_c_stops_in_one_line_and_samples_the_model_so_far(words: Path, tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(
        [sys.executable, "-m", "micrograd", "gpt", "--docs", str(words), "--steps", "1000000"]
        + ["--samples", "4", "--save", str(tmp_path / "g.json")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = p.stdout.readline()  # a step has been printed: training is under way
    assert first.startswith("step 1 / 1000000 | loss"), first + p.stderr.read()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert re.fullmatch(
        r"micrograd gpt: interrupted at step \d+ / 1000000; nothing saved; "
        r"samples of the model so far:\n",
        err,
    ), err
    lines = out.splitlines()
    samples = [s for s in lines if not s.startswith("step ")]
    assert len(samples) == 4 and lines[-4:] == samples  # the samples come last
    assert not (tmp_path / "g.json").exists()
