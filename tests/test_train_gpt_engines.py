"""The GPT run's engines on jit (train_gpt_engines.py): numpy, and JavaScript run by Node.js as
the site's worker runs it. Each takes microgpt's steps: the first 20 losses and the weights after
them are `microgpt(docs, 20, seed)`'s (the eager engine, his arithmetic) to 1e-9, over words of
many lengths (one program each, traced once) and one that fills the smaller GPT's block. A word
longer than the block is refused (`gpt_frames.check_fits`), never read cut."""

from __future__ import annotations

import math
import shutil
from typing import Any

import pytest

from micrograd.gpt import microgpt
from micrograd.playground.gpt import train_gpt_engines
from micrograd.playground.gpt.train_gpt import GPTKind, GPTSettings
from micrograd.playground.training.trainer import Trainer

pytest.importorskip("numpy")
HAS_NODE = shutil.which("node") is not None or shutil.which("nodejs") is not None
ENGINES = [
    "numpy",
    pytest.param(
        "javascript", marks=pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
    ),
]

# 3 to 7 letters (4 lengths: 4 programs); the last fills SMALL's block (8 positions: 7 letters
# and the end)
WORDS = ("emma", "ava", "olivia", "mia", "zoe", "isabel", "abigail")
STEPS = 20
SMALL = {"n_embd": 8, "n_head": 2, "block_size": 8}  # a smaller GPT, for the quicker tests


def run(engine: str, seed: int = 42, steps: int = STEPS, **kw: Any) -> Trainer:
    return Trainer(GPTSettings(docs=WORDS, steps=steps, seed=seed, **kw), engine, kind=GPTKind)


def take(tr: Trainer, n: int, seconds: float = 0.0) -> list[float]:
    """`n` steps by Play's path, the engine's `train` (0 seconds: one step a call; more: as many
    a call as it likes, and so perhaps more than `n`)."""
    losses: list[float] = []
    while len(losses) < n:
        got = tr.kind.train(seconds, lambda: True)
        assert got, "the run stopped early"
        losses.extend(loss for loss, _ in got)
    return losses


def close(a: list[float], b: list[float]) -> float:
    assert len(a) == len(b)
    return max(abs(x - y) for x, y in zip(a, b))


@pytest.mark.parametrize("engine", ENGINES)
def test_the_first_20_steps_are_microgpts_losses_and_weights(engine: str) -> None:
    model, _, want = microgpt(list(WORDS), STEPS, 42)
    tr = run(engine)
    got = take(tr, STEPS, seconds=60.0)  # (all 20 in one call, JavaScript's programs between)
    assert close(got, want) < 1e-9
    assert tr.kind.train(0.5, lambda: True) == []  # the steps are taken: none more
    tr.kind.sync()
    assert tr.kind.adam.t == STEPS
    assert close([p.data for p in tr.params], [p.data for p in model.parameters()]) < 1e-9
    assert all(p.grad == 0.0 for p in tr.params)  # as after his Adam's step


@pytest.mark.parametrize("engine", ENGINES)
def test_each_word_length_is_traced_once(engine: str) -> None:
    tr = run(engine, steps=2 * len(WORDS), **SMALL)
    take(tr, 2 * len(WORDS), seconds=60.0)  # every word twice
    lengths = {len(w) + 2 for w in WORDS}
    if engine == "numpy":
        assert tr.kind.engine.jit.jitted.traces == len(lengths)
    else:
        assert sorted(tr.kind.engine.call("lengths")) == sorted(lengths)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_trainers_steps_and_frames_read_the_engines_weights(engine: str) -> None:
    eager = run("eager", **SMALL)
    want = take(eager, STEPS)
    tr = run(engine, **SMALL)
    for _ in range(3):
        tr.step()  # Step: one at a time
    assert close([tr.loss], [want[2]]) < 1e-9 and tr.step_no == 3
    tr.play()
    while tr.playing:
        tr.advance(0.05)
    assert tr.step_no == STEPS and tr.error is None
    f = tr.latest()
    assert f["step"] == STEPS and f["lr"] == 0.0 and not f["playing"]
    assert close([p.data for p in tr.params], [p.data for p in eager.params]) < 1e-9


@pytest.mark.parametrize("engine", ENGINES)
def test_reset_and_new_weights_start_over_as_microgpt_does(engine: str) -> None:
    tr = run(engine, **SMALL)
    first = take(tr, 5)
    traced = dict(train_gpt_engines._PROGRAMS)
    tr.reset()  # the same initial weights: the same steps again
    assert tr.kind.adam.t == 0 and close(take(tr, 5), first) == 0.0
    if engine == "javascript":  # the same shape: no program traced again
        assert train_gpt_engines._PROGRAMS == traced
    tr.configure(GPTSettings(docs=WORDS, steps=STEPS, seed=7, **SMALL))  # as New weights does
    assert close(take(tr, 8), take(run("eager", seed=7, **SMALL), 8)) < 1e-9
    bigger = {**SMALL, "n_embd": 12}  # another shape: another model, its own programs
    tr.configure(GPTSettings(docs=WORDS, steps=STEPS, seed=7, **bigger))
    assert len(tr.params) > len(run("eager", **SMALL).params)
    assert close(take(tr, 8), take(run("eager", seed=7, **bigger), 8)) < 1e-9


@pytest.mark.parametrize("engine", [*ENGINES, "eager"])
def test_a_word_longer_than_the_block_is_refused_not_trained_cut(engine: str) -> None:
    """The rule the command keeps (`check_fits`): 'isabella' is read at 9 positions, one more
    than SMALL's block; the run refuses it in one line naming the word, the limit and the block
    size that reads it, on every engine (it once trained on the word's first 8 positions)."""
    with pytest.raises(ValueError) as e:
        GPTKind(GPTSettings(docs=(*WORDS, "isabella"), **SMALL), engine)
    assert str(e.value) == (
        "GPTSettings: docs: 'isabella' has 8 characters; a block size of 8 reads words of at "
        "most 7 (block_size 9 reads it)"
    )
    kind = GPTKind(GPTSettings(docs=(*WORDS, "isabella"), **{**SMALL, "block_size": 9}), engine)
    assert max(train_gpt_engines.lengths_met(kind)) == 10  # the whole word, and its end


def test_an_unknown_engine_is_named_in_one_line() -> None:
    with pytest.raises(ValueError, match="GPTKind: unknown engine 'webgpu'") as e:
        GPTKind(GPTSettings(docs=WORDS), "webgpu")
    assert "\n" not in str(e.value)


@pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
def test_a_diverging_javascript_run_says_so_and_its_weights_come_back_as_they_are() -> None:
    kind = GPTKind(GPTSettings(docs=WORDS, lr=1e6, steps=1000, **SMALL), "javascript")
    losses: list[float] = []
    while all(math.isfinite(x) for x in losses):  # (a call stops at a loss that is not finite)
        got = kind.train(0.5, lambda: True)
        assert got, "the run stopped before it diverged"
        losses.extend(loss for loss, _ in got)
    assert not kind.weights_finite()
    kind.sync()  # NaN and inf weights cross JSON as text, and come back as floats
    assert not math.isfinite(sum(p.data for p in kind.params))


@pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
@pytest.mark.parametrize("shared", [False, True], ids=["own steps", "shared kernels"])
def test_a_batch_of_one_word_runs_the_batchs_arithmetic(shared: bool) -> None:
    """The JavaScript target's kernels for a batch of one (a GPT's step: $layer1 and the rest)
    give the batch kernels' numbers: a word alone, and the same word twice as a batch of two
    (each output the same, each weight's grad twice as much: bit for bit); with its steps as
    kernels shared between programs (what a GPT's engine compiles) too."""
    from micrograd.jit import js_target
    from micrograd.jit.gpt import one_hot, traced_loss
    from micrograd.jit.plan import Graph
    from micrograd.jit.tracing import record

    kind = GPTKind(GPTSettings(docs=WORDS, **SMALL), "eager")
    model, tok = kind.model, kind.tokenizer
    rows = one_hot(tok.encode("olivia"), model.vocab_size)
    graph = Graph(record(lambda x: traced_loss(model, x), [rows]))
    src, captured = js_target.graph_source(graph, shared), graph.captured
    runner = js_target.NodeHost()
    try:
        run = runner.compile(js_target.runner_source(src))
        flat = [x for r in rows for x in r]
        values = [v.data for v in captured]
        one = run("run", {"B": 1, "data": flat, "captured": values, "seed": 1.0})
        two = run("run", {"B": 2, "data": flat + flat, "captured": values, "seed": 1.0})
    finally:
        runner.close()
    assert two["outs"] == one["outs"] * 2
    assert [float(g) for g in two["grads"]] == [2 * float(g) for g in one["grads"]]
    eager = model.loss(tok.encode("olivia"))
    assert abs(float(one["outs"][0]) - eager.data) < 1e-12


@pytest.mark.parametrize("engine", [*ENGINES, "eager"])
def test_prepare_traces_the_lengths_ahead_in_the_order_the_run_meets_them(engine: str) -> None:
    kind = GPTKind(GPTSettings(docs=WORDS, **SMALL), engine)
    if engine == "eager":
        assert kind.prepare(0.0)  # nothing to trace
        return
    order = train_gpt_engines.lengths_met(kind)
    assert sorted(order) == [5, 6, 8, 9]  # ava, emma, olivia and isabel, abigail (the block's 8)
    firsts = [next(i for i, w in enumerate(kind.docs) if len(w) + 2 == n) for n in order]
    assert firsts == sorted(firsts)  # in the order the steps meet them
    assert not kind.prepare(0.0) and kind.engine.lengths == {order[0]}  # one at least
    assert kind.prepare(60.0) and kind.engine.lengths == set(order)
    traces = kind.engine.jit.jitted.traces if engine == "numpy" else None
    take_steps = [loss for loss, _ in kind.train(0.0, lambda: True)]
    assert len(take_steps) == 1  # and a step traces nothing more
    if engine == "numpy":
        assert kind.engine.jit.jitted.traces == traces
    else:
        assert sorted(kind.engine.call("lengths")) == sorted(order)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_step_feeds_the_running_mean(engine: str) -> None:
    """The frame's running mean is the mean of the losses the engine's steps gave (a merge once
    fed it from eager steps only: on numpy and JavaScript it stayed empty)."""
    kind = GPTKind(GPTSettings(docs=WORDS, steps=STEPS, **SMALL), engine)
    losses: list[float] = []
    while len(losses) < 5:
        losses += [loss for loss, _ in kind.train(0.0, lambda: True)]
    assert kind.running.mean == pytest.approx(math.fsum(losses) / len(losses), rel=1e-12)
    assert kind.frame(playing=False)["mean"] == kind.running.mean


def test_a_playing_frame_draws_its_pictures_only_when_due(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sampling 20 words costs a forward pass a letter: while playing, frames between two
    pictures carry the loss alone; paused, every frame has them (read on a fake clock)."""
    from micrograd.playground.gpt import train_gpt

    now = [100.0]
    monkeypatch.setattr(train_gpt.time, "monotonic", lambda: now[0])
    kind = GPTKind(GPTSettings(docs=WORDS, steps=STEPS, **SMALL), "eager")
    kind.train(0.0, lambda: True)
    first = kind.frame(playing=True)  # the first frame: its pictures are due (a half of them)
    assert len(first["samples"]) == train_gpt.SAMPLES and "attention" in first
    assert "embedding" not in first  # (the other half, the next time)
    assert kind.pictures_cost == 0.0  # (the fake clock stood still while it sampled)
    kind.pictures_cost = 0.5  # as if they had taken half a second
    now[0] += 1.0
    between = kind.frame(playing=True)
    assert "samples" not in between and between["mean"] == kind.running.mean
    paused = kind.frame(playing=False)  # paused: always, both halves
    assert "samples" in paused and "embedding" in paused
    halves = []
    for _ in range(3):
        now[0] += train_gpt.PICTURES_EVERY * 0.5 + 0.01
        kind.pictures_cost = 0.5
        f = kind.frame(playing=True)
        halves.append(("samples" in f and "attention" in f, "embedding" in f))
    assert halves == [(False, True), (True, False), (False, True)]  # by turns


def test_a_diverged_model_gives_a_frame_without_samples() -> None:
    """Weights gone to NaN: the frame has the loss and no samples, instead of sampling's
    'Total of weights must be finite' ending the site's worker."""
    kind = GPTKind(GPTSettings(docs=WORDS, steps=STEPS, **SMALL), "eager")
    kind.params[0].data = math.nan
    frame = kind.frame(playing=False)
    assert "samples" not in frame and "mean" in frame


def test_a_frames_self_paced_part_is_left_out_of_its_cost() -> None:
    """The GPT's pictures are kept to a share of the time by their own clock: the publisher's
    frame cost, which spaces the frames (`Pacer.advance`: at least twice it), leaves them out
    (counted in, one 5 s picture frame held the next frames seconds apart: 2-5 drawn a second)."""
    from micrograd.playground.training.train_publish import Publisher

    ticks = iter([0.0, 5.25, 10.0, 10.5])
    pub = Publisher()
    pub.clock = lambda: next(ticks)
    cost = pub.publish("k", dict, lambda: {"a": 1, "self_paced": 5.0}, 0, [])
    assert cost == pytest.approx(0.3 * 0.25) and "self_paced" not in pub.published()[0]
    cost = pub.publish("k", dict, lambda: {"a": 2}, 0, [])  # a frame without: all of it counts
    assert cost == pytest.approx(0.7 * 0.3 * 0.25 + 0.3 * 0.5)


def test_only_a_frame_with_pictures_says_how_long_they_took(monkeypatch) -> None:
    from micrograd.playground.gpt import train_gpt

    now = [100.0]
    monkeypatch.setattr(train_gpt.time, "monotonic", lambda: now[0])
    kind = GPTKind(GPTSettings(docs=WORDS, steps=STEPS, **SMALL), "eager")
    kind.train(0.0, lambda: True)
    first = kind.frame(playing=True)
    assert first["self_paced"] == kind.pictures_cost
    kind.pictures_cost = 0.5
    now[0] += 1.0
    assert "self_paced" not in kind.frame(playing=True)
