"""`micrograd gpt` as a user runs it: its output against microgpt() and sample(), one-line
errors with exit status 2, Ctrl-C in a real process, and --save read back by io.load."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from micrograd import gpt
from micrograd.commands import cli
from micrograd.gpt import microgpt, sample
from micrograd.io import dumps, load, load_gpt

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
    header = ["num docs: 10", f"vocab size: {tok.vocab_size}", "num params: 3808"]
    assert len(model.parameters()) == 3808  # microgpt's header, as his script prints it
    expected = [f"step {i + 1} / 4 | loss {x:.4f}" for i, x in enumerate(losses)]
    assert out.splitlines() == header + expected + sample(model, tok, n=5, temperature=0.5)


@pytest.mark.slow
def test_temperature_and_seed_reach_the_run(capsys, words: Path) -> None:
    args = ("--docs", str(words), "--steps", "2", "--samples", "6", "--seed", "3")
    status, out, _ = run(capsys, *args, "--temperature", "1.5")
    assert status == 0
    model, tok, losses = microgpt(docs=WORDS, steps=2, seed=3)
    assert out.splitlines()[3] == f"step 1 / 2 | loss {losses[0]:.4f}"
    assert out.splitlines()[5:] == sample(model, tok, n=6, temperature=1.5)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "ten"], "--steps needs a whole number, got 'ten'"),
        (["--temperature", "-1"], "--temperature must be a finite number > 0, got -1"),
        (["--temperature", "inf"], "--temperature must be a finite number > 0, got inf"),
        (["--samples", "-2"], "--samples must be at least 0, got -2"),
        (["--steps", "-1"], "--steps must be at least 0, got -1"),
        (["--n-embd", "0"], "--n-embd must be from 1 to 512, got 0"),
        (["--n-layer", "two"], "--n-layer needs a whole number, got 'two'"),
        (["--n-head", "0"], "--n-head must be from 1 to 64, got 0"),
        (["--n-head", "3"], "--n-head 3 must divide --n-embd 16"),
        (["--n-embd", "12", "--n-head", "8"], "--n-head 8 must divide --n-embd 12"),
        (["--block-size", "0"], "--block-size must be from 1 to 1024, got 0"),
        (["--lr", "0"], "--lr must be a finite number > 0, got 0"),
        (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
        (
            ["--block-size", "5"],
            "'isabella' has 8 characters; a block size of 5 reads words of at most 4 "
            "(--block-size 9 reads it)",
        ),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_a_bad_option_is_one_line_and_status_2(capsys, words: Path, args, message) -> None:
    status, out, err = run(capsys, "--docs", str(words), *args)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    flag = args[-2] if len(args) == 2 else args[0]
    assert err.count(flag) == message.count(flag)  # the flag once: not "argument --x: --x must"


def test_missing_words_are_one_line_and_status_2(capsys, tmp_path: Path) -> None:
    status, out, err = run(capsys, "--steps", "1")  # (no names: conftest's _names_isolated)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "MICROGRAD_NAMES_FILE" in err
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
    try:
        header = [p.stdout.readline() for _ in range(3)]  # microgpt's header, flushed at once
        assert header[0] == "num docs: 10\n" and header[2].startswith("num params: "), header
        first = p.stdout.readline()  # a step has been printed: training is under way
        assert first.startswith("step 1 / 1000000 | loss"), first
    except AssertionError:
        p.kill()
        p.communicate()
        raise
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


def test_a_word_longer_than_the_block_is_refused_not_cut(capsys, tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_text("emma\nsupercalifragilistic\n")
    status, out, err = run(capsys, "--docs", str(f), "--steps", "1")
    assert status == 2 and out == ""
    assert err == (
        "micrograd gpt: error: --docs: 'supercalifragilistic' has 20 characters; a block size of "
        "16 reads words of at most 15 (--block-size 21 reads it)\n"
    )
    status, out, err = run(capsys, "--docs", str(f), "--steps", "1", "--block-size", "21")
    assert status == 0 and err == ""
    docs, tok, model = gpt.prepare(["emma", "supercalifragilistic"], 42, block_size=21)
    losses = gpt.train(model, tok, docs, 1)  # the whole word: its 21 positions
    assert out.splitlines()[3] == f"step 1 / 1 | loss {losses[0]:.4f}"


def test_the_sizes_and_lr_reach_the_model(capsys, words: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    args = ["--n-embd", "8", "--n-layer", "2", "--n-head", "2", "--block-size", "9"]
    status, out, err = run(
        capsys,
        "--docs",
        str(words),
        "--steps",
        "2",
        "--lr",
        "0.02",
        "--samples",
        "0",
        "--save",
        str(path),
        *args,
    )
    assert status == 0 and err == ""
    model, tok = load_gpt(path)
    assert model.config() == dict(
        vocab_size=tok.vocab_size, n_layer=2, n_embd=8, n_head=2, block_size=9
    )
    docs, tok2, ref = gpt.prepare(WORDS, 42, n_layer=2, n_embd=8, n_head=2, block_size=9)
    losses = gpt.train(ref, tok2, docs, 2, lr=0.02)
    assert [p.data for p in ref.parameters()] == [p.data for p in model.parameters()]
    assert out.splitlines()[2:] == ["num params: 1848"] + [
        f"step {i + 1} / 2 | loss {x:.4f}" for i, x in enumerate(losses)
    ]


def test_jit_trains_as_eager_does(capsys, words: Path) -> None:
    pytest.importorskip("numpy")
    from micrograd.jit.gpt import train as jit_train

    docs, tok, model = gpt.prepare(WORDS, 7, n_embd=8, n_head=2)
    eager = gpt.train(model, tok, docs, 6)
    docs, tok, model2 = gpt.prepare(WORDS, 7, n_embd=8, n_head=2)
    jitted = jit_train(model2, tok, docs, 6)
    assert jitted == pytest.approx(eager, abs=1e-9, rel=0)
    assert max(abs(a.data - b.data) for a, b in zip(model.parameters(), model2.parameters())) < 1e-9
    args = [
        "--docs",
        str(words),
        "--steps",
        "4",
        "--samples",
        "0",
        "--n-embd",
        "8",
        "--n-head",
        "2",
    ]
    status, out_jit, err = run(capsys, *args, "--jit")
    assert status == 0 and err == ""
    status, out_eager, err = run(capsys, *args)
    assert out_jit == out_eager  # the header and each step's loss to 4 decimals


def test_save_then_load_samples_without_the_word_list(capsys, words: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    status, out, _ = run(capsys, "--docs", str(words), "--steps", "3", "--save", str(path))
    assert status == 0
    # no word list now: conftest hides the names, and no --docs
    status, out, err = run(capsys, "--load", str(path), "--steps", "0", "--samples", "5")
    assert status == 0 and err == ""
    model, tok, _ = microgpt(docs=WORDS, steps=3, seed=42)
    random.seed(42)
    lines = out.splitlines()
    assert lines[:2] == [f"vocab size: {tok.vocab_size}", f"num params: {len(model.parameters())}"]
    assert lines[2:] == sample(model, tok, 5) and len(lines[2:]) == 5
    # and trains on: the words again, from the loaded weights
    status, out, err = run(
        capsys, "--load", str(path), "--docs", str(words), "--steps", "2", "--samples", "0"
    )
    assert status == 0 and out.splitlines()[0] == "num docs: 10"
    assert out.splitlines()[3].startswith("step 1 / 2 | loss ")


def test_load_refuses_in_one_line(capsys, words: Path, tmp_path: Path) -> None:
    from micrograd.io import save
    from micrograd.nn import MLP

    mlp = tmp_path / "mlp.json"
    save(MLP(2, [3, 1]), mlp)
    status, out, err = run(capsys, "--load", str(mlp), "--steps", "0")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "mlp.json: not a valid micrograd model file: it holds an MLP, not a GPT" in err
    random.seed(1)
    g = gpt.GPT(5, n_embd=4, n_head=2, block_size=4)
    newer = tmp_path / "newer.json"
    newer.write_text(
        dumps(g, tokenizer=gpt.Tokenizer(["abcd"])).replace('"version": 2', '"version": 3')
    )
    status, out, err = run(capsys, "--load", str(newer), "--steps", "0")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "version 3 is newer than this micrograd reads (up to 2): upgrade it" in err
    old = tmp_path / "old.json"
    old.write_text(dumps(g))  # as saved before GPT files carried their characters
    status, out, err = run(capsys, "--load", str(old), "--steps", "0")
    assert (
        status == 2
        and out == ""
        and err
        == (
            f"micrograd gpt: error: --load {old} was saved without its characters (an older file): "
            "give the word list it was trained on with --docs FILE\n"
        )
    )
    abcd = tmp_path / "abcd.txt"
    abcd.write_text("abc\ndab\n")
    status, out, err = run(
        capsys, "--load", str(old), "--docs", str(abcd), "--steps", "0", "--samples", "2"
    )
    assert status == 0 and err == "" and len(out.splitlines()) == 5
    xyz = tmp_path / "xyz.txt"
    xyz.write_text("xy\nz\n")
    status, out, err = run(capsys, "--load", str(old), "--docs", str(xyz), "--steps", "0")
    assert status == 2 and err == (
        f"micrograd gpt: error: --docs {xyz}: its words have 3 characters; --load {old} reads 4\n"
    )
    status, out, err = run(capsys, "--load", str(old), "--n-embd", "8", "--docs", str(abcd))
    assert status == 2 and "--n-embd: the model's shape is --load" in err
    status, out, err = run(capsys, "--load", str(tmp_path / "none.json"))
    assert status == 2 and err.strip().endswith("none.json: No such file or directory")
