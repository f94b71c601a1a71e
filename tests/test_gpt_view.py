"""The GPT view's frames and actions (issue 42, item 1): the attention maps are the model's own
softmax, the embeddings' principal components are numpy's, a word list out of range is refused
in one line naming the word and the character, on every transport; the engine's name is passed
through, and one the GPT does not train with falls back to eager."""

from __future__ import annotations

import json
import math
import pathlib
import random
import re
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

import micrograd.gpt as gpt_module
from micrograd.gpt import GPT, Tokenizer
from micrograd.playground.errors import ViewError
from micrograd.playground.gpt import gpt_view
from micrograd.playground.gpt.gpt_frames import (
    MAX_WORDS,
    RunningMean,
    attention,
    embedding_2d,
    principal_components,
    word_list,
)
from micrograd.playground.serving.messages import MessageHost
from micrograd.playground.views import Tab
from tests.support.gpt import logits_of

WORDS = ("emma", "olivia", "ava", "mia", "zoe", "isabella")


def model(n_layer: int = 2, n_head: int = 4, seed: int = 3) -> tuple[GPT, Tokenizer]:
    random.seed(seed)
    tok = Tokenizer(WORDS)
    return GPT(tok.vocab_size, n_layer=n_layer, n_embd=8, n_head=n_head, block_size=8), tok


def test_attention_rows_are_the_models_own_softmax(monkeypatch):
    m, tok = model()
    got = attention(m, tok, "emma")
    # the model's own softmax calls as it reads the same tokens: position, layer, head
    seen: list[list[float]] = []
    real = gpt_module.softmax

    def recording(logits):
        out = real(logits)
        seen.append([p.data for p in out])
        return out

    monkeypatch.setattr(gpt_module, "softmax", recording)
    logits = logits_of(m, tok.encode("emma")[:-1])
    monkeypatch.undo()
    assert [[v.data for v in row] for row in logits] == got["logits"]  # the same, to the bit
    n = 5  # BOS e m m a
    assert got["labels"] == [".", "e", "m", "m", "a"]
    assert len(got["maps"]) == 2 and all(len(layer) == 4 for layer in got["maps"])
    for layer in range(2):
        for head in range(4):
            rows = got["maps"][layer][head]
            assert [len(r) for r in rows] == [1, 2, 3, 4, 5]  # the causal triangle
            for i, row in enumerate(rows):
                assert math.fsum(row) == pytest.approx(1.0, abs=1e-12)
                want = seen[(i * 2 + layer) * 4 + head]
                assert row == pytest.approx(want, abs=1e-12, rel=0)
    assert len(seen) == n * 2 * 4


def test_a_word_longer_than_the_block_is_refused_not_read_cut():
    """A word the block does not hold whole is refused in one line (it was read to the block
    size: the attention of its first 8 positions, silently); one that fills it is read whole."""
    m, tok = model(n_layer=1, n_head=2)
    with pytest.raises(ValueError) as e:
        attention(m, tok, "isabella")
    assert str(e.value) == (
        "attention: 'isabella' has 8 characters; a block size of 8 reads words of at most 7 "
        "(a block size of 9 reads it)"
    )
    got = attention(m, tok, "isabell")
    assert len(got["maps"][0][0]) == m.block_size and got["labels"] == [".", *"isabell"]


def test_principal_components_are_numpys_up_to_sign():
    np = pytest.importorskip("numpy")
    m, tok = model()
    rows = [[p.data for p in row] for row in m.sd["wte"]]
    x = np.array(rows) - np.array(rows).mean(axis=0)
    _, s, vt = np.linalg.svd(x)
    assert s[1] - s[2] > 1e-3  # distinct: each component is defined up to its sign
    for got, want in zip(principal_components(rows, 2), vt[:2]):
        sign = 1.0 if np.dot(got, want) > 0 else -1.0
        assert np.abs(np.array(got) - sign * want).max() < 1e-10
    xy = np.array(embedding_2d(m, tok)["xy"])
    proj = x @ vt[:2].T
    for k in range(2):
        assert min(np.abs(xy[:, k] - proj[:, k]).max(), np.abs(xy[:, k] + proj[:, k]).max()) < 1e-10
    assert embedding_2d(m, tok)["labels"] == [*tok.chars, "."]


def test_the_running_mean_is_the_mean_of_the_last_steps():
    r = RunningMean(window=3)
    for x in (3.0, 1.0, 2.0, 6.0):
        r.add(x)
    assert r.means == [3.0, 2.0, 2.0, 3.0] and r.mean == 3.0
    assert r.series(2) == [[1, 3.0], [3, 2.0], [4, 3.0]]  # every second, and the last


@pytest.mark.parametrize(
    "text, message",
    [
        ("emma\nzo€\n", "line 2 ('zo€'): the character '€' (U+20AC) is not allowed"),
        ("ab\n" + "x" * 16, "line 2: 'xxxxxxxxxxxxxxxx' has 16 characters; a word has 1 to 15"),
        ("a b\n", "line 1 ('a b'): the character ' ' (U+0020) is not allowed"),
        ("\n \n", "no words"),
        ("ab\n" * (MAX_WORDS + 1), f"more than {MAX_WORDS} words"),
    ],
)
def test_bad_word_lists_are_refused_naming_the_word(text, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        word_list(text)
    with pytest.raises(ViewError) as e:  # the view's one line, a 400
        Tab().call("gpt", "config", {"data": "own", "words": text})
    assert e.value.status == 400 and e.value.message == f"Your words: {word_list_error(text)}"


def word_list_error(text: str) -> str:
    try:
        word_list(text)
    except ValueError as e:
        return str(e)
    raise AssertionError("not refused")


def test_the_view_trains_the_pasted_words_and_its_frames_carry_the_parts():
    tab = Tab(jit=False)
    a = tab.call("gpt", "config", {"data": "own", "words": "\n".join(WORDS), "n_embd": 8})
    assert a["meta"]["settings"]["n_embd"] == 8 and a["meta"]["words"] == len(WORDS)
    assert a["word"] == "emma"
    f = tab.call("gpt", "control", {"action": "step", "steps": 3})["frame"]
    assert f["step"] == 3 and len(f["samples"]) == 20 and len(f["new"]) == 20
    assert f["new"] == [w not in WORDS for w in f["samples"]]
    assert f["mean"] == pytest.approx([h[1] for h in f["means"]][-1])
    assert len(f["attention"]["maps"][0]) == 4  # the default heads
    f = tab.call("gpt", "attention", {"word": "zoe"})["frame"]
    assert f["attention"]["labels"] == [".", "z", "o", "e"]
    with pytest.raises(ViewError, match="'x' is not in the words' characters"):
        tab.call("gpt", "attention", {"word": "max"})
    tab.call("gpt", "config", {"data": "own", "words": "ab\nba"})  # no "e": the first word
    assert tab.call("gpt", "state", {})["word"] == "ab"


@pytest.mark.parametrize(
    "body, message",
    [
        (
            {"data": "own", "words": "emma\nabigailrose\nsupercali", "block_size": 8},
            "Your words: 'abigailrose' has 11 characters; a block size of 8 reads words of at "
            "most 7 (Block size 12 reads it)",
        ),
        (
            {"block_size": 8},
            "The built-in words: 'isabella' has 8 characters; a block size of 8 reads words of "
            "at most 7 (Block size 9 reads it)",
        ),
    ],
)
def test_a_word_longer_than_the_block_size_is_refused_as_the_command_refuses_it(body, message):
    """The command's rule on the page (gpt_frames.check_fits): one line naming the longest word,
    the limit and the Block size that reads it; the run goes on as it was (it trained on the
    words' first positions, silently). The attention word too."""
    tab = Tab(jit=False)
    before = tab.call("gpt", "config", {"data": "builtin"})["meta"]
    with pytest.raises(ViewError) as e:
        tab.call("gpt", "config", {"data": "builtin", **body})
    assert e.value.status == 400 and e.value.message == message
    assert tab.call("gpt", "state", {})["meta"] == before
    tab.call("gpt", "config", {"data": "builtin", "block_size": 9})  # isabella: 9 positions
    tab.call("gpt", "control", {"action": "step", "steps": 1})
    assert tab.call("gpt", "attention", {"word": "isabella"})["frame"]["attention"]["labels"] == [
        ".",
        *"isabella",
    ]
    tab.call("gpt", "config", {"data": "own", "words": "emma\nisabel\nava", "block_size": 8})
    assert tab.call("gpt", "state", {})["word"] == "emma"  # (isabella: longer than the block)
    with pytest.raises(ViewError) as e:
        tab.call("gpt", "attention", {"word": "isabella"})
    assert e.value.message == (
        "the attention word: 'isabella' has 8 characters; a block size of 8 reads words of at "
        "most 7 (Block size 9 reads it)"
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ({"n_embd": 10}, "Embedding size (10) must be a multiple of Heads (4)"),
        ({"n_layer": 3}, "Layers must be a whole number from 1 to 2, got '3'"),
        ({"lr": "fast"}, "Learning rate must be a number from 1e-05 to 1, got 'fast'"),
        ({"data": "poems"}, "Words must be one of names, builtin, own, got 'poems'"),
        ({"depth": 3}, "no GPT setting 'depth'"),
    ],
)
def test_bad_settings_are_refused_by_name(body, message):
    with pytest.raises(ViewError, match=re.escape(message)):
        Tab().call("gpt", "config", {"data": "builtin", **body})


def test_with_the_names_the_view_trains_on_them_and_says_nothing(names_file) -> None:
    gpt_view.read_names.cache_clear()  # (what an earlier test read, or failed to)
    tab = Tab(jit=False)
    assert tab.call("gpt", "options", {})["names"] is None  # no banner
    meta = tab.call("gpt", "state", {})["meta"]
    assert meta["settings"]["data"] == "names" and meta["vocab"] == "abcdefghijklmnopqrstuvwxyz"
    tab.call("gpt", "control", {"action": "step", "steps": 1})
    gpt_view.read_names.cache_clear()


def test_without_the_names_the_view_says_so_and_starts_on_the_built_in_words(monkeypatch):
    def missing():
        raise FileNotFoundError("names: could not download … set MICROGRAD_NAMES_FILE …")

    monkeypatch.setattr(gpt_view.data, "names", missing)
    gpt_view.read_names.cache_clear()  # (names an earlier test read are not asked again)
    tab = Tab(jit=False)
    line = tab.call("gpt", "options", {})["names"]
    assert line.startswith("names: could not download") and "\n" not in line
    assert line.endswith("(or choose the built-in words, or paste your own)")
    assert tab.call("gpt", "state", {})["meta"]["settings"]["data"] == "builtin"
    with pytest.raises(ViewError, match="^names: could not download"):
        tab.call("gpt", "config", {"data": "names"})


def test_the_tabs_engine_is_passed_through_and_an_unknown_one_falls_back(monkeypatch):
    asked: list[str] = []
    real = gpt_view.GPTKind

    def kind(settings, engine_name):
        asked.append(engine_name)
        if engine_name != "eager":
            raise ValueError(f"GPTKind: no {engine_name} engine")
        return real(settings, engine_name)

    monkeypatch.setattr(gpt_view, "GPTKind", kind)
    tab = Tab(jit="javascript")  # type: ignore[arg-type]
    tab.call("gpt", "config", {"data": "builtin"})
    assert tab.call("gpt", "control", {"action": "step"})["frame"]["step"] == 1
    assert asked == ["javascript", "eager"]


def test_the_gpt_views_frames_come_over_messages():
    tab = Tab(jit=False)
    host = MessageHost(tab)
    host.receive({"id": 1, "view": "gpt", "action": "config", "body": {"data": "builtin"}})
    first = host.receive({"frames": True, "fresh": True, "view": "gpt"})
    assert first and first[0]["frame"]["full"] and "samples" in first[0]["frame"]
    out = host.receive({"id": 2, "view": "gpt", "action": "control", "body": {"action": "step"}})
    assert out[0]["answer"]["frame"]["step"] == 1 and out[1]["frame"]["step"] == 1
    assert not out[1]["frame"]["full"]  # a second frame: only what changed (no heat maps here)


def post(url: str, body: object) -> tuple[int, dict]:
    req = urllib.request.Request(
        url,
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "X-Session": "gpt-view-test-1"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_server_answers_the_gpt_view_and_refuses_a_bad_word_in_one_line(playground):
    for path in ("gpt", "gpt.html"):
        with urllib.request.urlopen(playground + path, timeout=30) as r:
            assert b'data-view="gpt"' in r.read()
    status, answer = post(playground + "api/gpt/config", {"data": "own", "words": "ab\nc d"})
    assert status == 400
    assert answer == {"error": f"Your words: {word_list_error('ab' + chr(10) + 'c d')}"}
    status, answer = post(playground + "api/gpt/control", {"action": "step", "steps": 2})
    assert status == 200 and answer["frame"]["step"] == 2


def test_gpt_html_has_a_control_for_every_setting():
    from importlib import resources

    static = resources.files("micrograd.playground") / "static"
    html = (static / "gpt.html").read_text("utf-8")
    for name in gpt_view.FIELDS:
        assert f'id="{name}"' in html, name


def test_the_sites_worker_trains_a_playing_gpt_view():
    from micrograd.playground.serving.worker import Host

    host = Host(Tab(jit=False))
    send = lambda msg: json.loads(host.receive(json.dumps(msg)))  # noqa: E731
    send({"id": 1, "view": "gpt", "action": "config", "body": {"data": "builtin"}})
    send({"frames": True, "fresh": True, "view": "gpt"})
    assert host.due_in() == 0.0 and host.advance(0.05) == "[]"  # (eager: nothing to trace)
    assert host.due_in() == -1.0  # paused: the worker's timer waits for a message
    send({"id": 2, "view": "gpt", "action": "control", "body": {"action": "play"}})
    frames: list[dict] = []
    while not any(f["step"] >= 2 for f in frames):
        assert host.due_in() >= 0
        frames += [m["frame"] for m in json.loads(host.advance(0.05))]
    # Pause is answered without the pictures (a forward pass a letter: seconds in Pyodide,
    # once), which come in the worker's next turn, of the step it stopped at
    out = send({"id": 3, "view": "gpt", "action": "control", "body": {"action": "pause"}})
    paused = out[0]["answer"]["frame"]
    assert not paused["playing"] and "pictures_step" not in paused and host.due_in() == 0.0
    (msg,) = json.loads(host.advance(0.05))
    assert msg["frame"]["pictures_step"] == paused["step"] and len(msg["frame"]["samples"]) == 20
    assert host.due_in() == -1.0 and host.advance(0.05) == "[]"


def test_reset_keeps_the_weights_new_weights_draws_others_the_temperature_is_live():
    tab = Tab(jit=False)
    tab.call("gpt", "config", {"data": "builtin", "n_embd": 8})
    first = tab.call("gpt", "control", {"action": "step"})["frame"]["loss_exact"]
    tab.call("gpt", "control", {"action": "reset"})
    assert tab.call("gpt", "control", {"action": "step"})["frame"]["loss_exact"] == first
    a = tab.call("gpt", "config", {"data": "builtin", "n_embd": 8, "temperature": 1.5})
    assert a["frame"]["step"] == 1 and a["meta"]["change"].startswith("Temperature: applied")
    a = tab.call("gpt", "control", {"action": "new_weights"})
    assert a["frame"]["step"] == 0 and a["meta"]["settings"]["seed"] != 42
    assert a["meta"]["settings"]["temperature"] == 1.5  # the page's other settings kept
    again = tab.call("gpt", "control", {"action": "step"})["frame"]["loss_exact"]
    assert again != first


def test_the_sites_worker_traces_a_waiting_gpt_runs_lengths_one_a_turn_then_stops():
    pytest.importorskip("numpy")
    from micrograd.playground.gpt.train_gpt_engines import lengths_met
    from micrograd.playground.serving.worker import Host

    host = Host(Tab(jit="numpy"))  # type: ignore[arg-type]
    send = lambda msg: json.loads(host.receive(json.dumps(msg)))  # noqa: E731
    body = {"data": "builtin", "n_embd": 4, "n_head": 1}
    send({"id": 1, "view": "gpt", "action": "config", "body": body})
    kind = host.tab.gpt.trainer.kind
    traced: list[set[int]] = []
    while host.due_in() == 0.0:  # the run waits, lengths are left: work now
        before = set(kind.engine.lengths)
        assert host.advance(0.0) == "[]"
        traced.append(set(kind.engine.lengths) - before)
        # between two traces the page's message is answered
        assert send({"id": 2, "view": "gpt", "action": "state", "body": {}})[0]["answer"]
    assert traced and all(len(t) == 1 for t in traced)  # one length a turn
    assert set().union(*traced) == set(lengths_met(kind))  # every length its words meet
    assert host.due_in() == -1.0  # all ready: the timer waits for a message
    send({"id": 3, "view": "gpt", "action": "control", "body": {"action": "play"}})
    before = set(kind.engine.lengths)
    while kind.adam.t < 20:
        host.advance(0.05)
    assert set(kind.engine.lengths) == before  # Play traced nothing more
    send({"id": 4, "view": "gpt", "action": "control", "body": {"action": "pause"}})
    send({"id": 5, "view": "gpt", "action": "config", "body": {**body, "n_embd": 8}})
    assert host.due_in() == 0.0  # a new shape: its lengths are traced again


@pytest.mark.parametrize("spread", ["piled", "one far", "spread"])
def test_the_embedding_labels_are_kept_apart(spread):
    """gpt-draw.js's placeEmbedding, in Node: 27 labels (the names' characters and ".") of
    12 × 18 each (a glyph's box) on the 300 × 300 picture, none overlapping another, inside it,
    each label moved from its point only as the others make it (points apart: not at all)."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("needs Node.js")
    rng = random.Random(5)
    if spread == "piled":  # after 10,000 steps on names: the letters near one another
        xy = [[rng.gauss(0, 0.01), rng.gauss(0, 0.01)] for _ in range(26)] + [[0.0, 0.0]]
    elif spread == "one far":  # and "." far to the right
        xy = [[rng.gauss(0, 0.05), rng.gauss(0, 0.05)] for _ in range(26)] + [[3.0, 0.1]]
    else:
        xy = [[i % 6 * 1.0, i // 6 * 1.0] for i in range(27)]
    static = pathlib.Path(gpt_view.__file__).parents[1] / "static"
    module = (static / "gpt" / "gpt-draw.js").as_uri()
    code = (
        f"const m = await import({json.dumps(module)});\n"
        "process.stdout.write(JSON.stringify(m.placeEmbedding(JSON.parse(process.argv[1]))));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", code, json.dumps(xy)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    placed = json.loads(done.stdout)
    pos, at = placed["pos"], placed["at"]
    for i, (x, y) in enumerate(pos):
        assert 6 <= x <= 294 and 9 <= y <= 291
        for x2, y2 in pos[i + 1 :]:
            assert abs(x - x2) >= 12 - 1e-9 or abs(y - y2) >= 18 - 1e-9  # no two boxes overlap
    xs, ys = [p[0] for p in at], [p[1] for p in at]
    assert min(xs) == pytest.approx(18) and max(xs) == pytest.approx(282)  # the points' extent
    assert min(ys) == pytest.approx(18) and max(ys) == pytest.approx(282)
    if spread == "spread":
        assert pos == at  # nothing to push apart
