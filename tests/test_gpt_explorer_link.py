"""The GPT view's link into the explorer (issue 42, item 3's last part): "Step through this
position's loss in the explorer". The frame's attention carries each position's logits (the
model's own, `GPT.logits` of the same tokens) and target (the next character, BOS after the
last); gpt-loss.js, run in Node, writes a position's loss as a program that the explorer parses,
whose leaves are the frame's floats exactly, and whose Backward pass gives each logit pᵢ − yᵢ as
the closed form (math.fsum) and PyTorch float64 do; every character a word may have gets a name
Python reads unchanged. In Chromium: from the server's GPT view, a position picked by its row,
the link opens the explorer on that program and Backward pass shows those grads (1280 and 390)."""

from __future__ import annotations

import json
import math
import pathlib
import random
import shutil
import subprocess
import unicodedata
import urllib.parse
from typing import Any

import pytest

from micrograd.gpt import GPT, Tokenizer
from micrograd.playground.gpt.gpt_frames import BOS, MAX_VOCAB, attention, check_char
from micrograd.playground.views import Tab
from tests.support.gpt import logits_of

STATIC = pathlib.Path(__file__).resolve().parents[1] / "micrograd" / "playground" / "static"
WORDS = ("emma", "olivia", "ava", "mia", "zoe", "isabella")


def model(docs: tuple[str, ...] = WORDS, seed: int = 3) -> tuple[GPT, Tokenizer]:
    random.seed(seed)
    tok = Tokenizer(docs)
    return GPT(tok.vocab_size, n_layer=2, n_embd=8, n_head=2, block_size=8), tok


def run_js(call: str, *args: Any) -> Any:
    """`call` (an expression over gpt-loss.js's exports and `args`) evaluated in Node, as JSON."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("needs Node.js (make test installs it)")
    module = (STATIC / "gpt" / "gpt-loss.js").as_uri()
    code = (
        f"const m = await import({json.dumps(module)});\n"
        f"const args = JSON.parse(process.argv[1]);\n"
        f"process.stdout.write(JSON.stringify(((...args) => {call})(...args)));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", code, json.dumps(list(args))],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def closed_form(z: list[float], target: int) -> tuple[float, list[float]]:
    """The loss −log softmax(z)[target] and each pᵢ − yᵢ, by math (not the engine)."""
    top = max(z)
    exps = [math.exp(x - top) for x in z]
    total = math.fsum(exps)
    p = [e / total for e in exps]
    return -math.log(p[target]), [pi - (i == target) for i, pi in enumerate(p)]


def explore(program: str) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """The explorer's nodes by name after Backward pass on `program`, and its loaded state."""
    tab = Tab()
    loaded = tab.call("explorer", "load", {"program": program})
    state = tab.call("explorer", "backward", {})
    ids = {n["name"]: n["id"] for n in loaded["drawing"]["nodes"] if n["kind"] == "value"}
    return {name: state["values"][i] for name, i in ids.items()}, loaded


# ------------------------------------------------------------------ the frame


def test_the_frames_logits_are_the_models_own_and_the_targets_the_next_characters() -> None:
    m, tok = model()
    for word in ("emma", "isabell"):  # (7 letters and the end: the block's 8 positions)
        got = attention(m, tok, word)
        tokens = tok.encode(word)[:-1]
        assert len(tokens) <= m.block_size
        want = [[z.data for z in row] for row in logits_of(m, tokens)]
        assert len(got["logits"]) == len(tokens) and len(got["logits"][0]) == tok.vocab_size
        for ours, theirs in zip(got["logits"], want):
            assert ours == pytest.approx(theirs, abs=1e-12, rel=0)
        assert got["vocab"] == [*tok.chars, BOS]
        targets = [got["vocab"][t] for t in got["targets"]]
        assert targets == [*word, BOS]  # BOS after the last character
        assert got["targets"][-1] == tok.bos
    with pytest.raises(ValueError, match="^attention: 'isabella' has 8 characters"):
        attention(m, tok, "isabella")  # longer than the block: refused, not read cut
    json.dumps(got, allow_nan=False)  # the frame's JSON holds it


def test_the_views_frame_carries_its_models_logits() -> None:
    tab = Tab()
    frame = tab.call("gpt", "attention", {"word": "ava"})["frame"]
    kind = tab.gpt.trainer.kind
    kind.sync()
    tokens = kind.tokenizer.encode("ava")[:-1]
    want = [[z.data for z in row] for row in logits_of(kind.model, tokens)]
    got = frame["attention"]
    assert len(got["logits"]) == 4 and got["targets"] == kind.tokenizer.encode("ava")[1:]
    for ours, theirs in zip(got["logits"], want):
        assert ours == pytest.approx(theirs, abs=1e-12, rel=0)


# ------------------------------------------------------------------ the program


@pytest.mark.parametrize("pos", [0, 2, 4])
def test_a_positions_program_gives_each_logit_p_minus_y(pos: int) -> None:
    m, tok = model()
    a = json.loads(json.dumps(attention(m, tok, "emma")))  # as the page receives it
    program = run_js("m.lossProgram(args[0], args[1])", a, pos)
    names = run_js("m.charNames(args[0])", a["vocab"])
    nodes, loaded = explore(program)
    assert loaded["params"] == []  # the logits are the model's outputs: data, not parameters
    z, target = a["logits"][pos], a["targets"][pos]
    loss, grads = closed_form(z, target)
    assert nodes["L"]["data"] == pytest.approx(loss, rel=1e-12)
    for i, name in enumerate(names):
        leaf = nodes[f"logit_{name}"]
        assert leaf["data"] == z[i]  # the frame's float itself, not a rounding of it
        assert leaf["grad"] == pytest.approx(grads[i], rel=1e-9, abs=1e-12)
    torch = pytest.importorskip("torch")
    zt = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.cross_entropy(zt.unsqueeze(0), torch.tensor([target])).backward()
    ours = [nodes[f"logit_{n}"]["grad"] for n in names]
    assert ours == pytest.approx(zt.grad.tolist(), rel=1e-9, abs=1e-12)


def test_the_largest_vocabulary_fits_the_explorer() -> None:
    # 64 characters, those with the longest names first (a word, or a code point: ² is u00b2),
    # and BOS; numbers written at their longest
    coded = [chr(c) for c in range(0x80, 0x250) if unicodedata.normalize("NFKC", chr(c)) != chr(c)]
    coded = [ch for ch in coded if _allowed(ch)]
    chars = [*"-'.", *coded, *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"][:MAX_VOCAB]
    assert len(chars) == MAX_VOCAB and "²" in chars
    vocab = [*chars, BOS]
    z = [(-1) ** i * 1.2345678901234567e-05 * (1 + i / 100) for i in range(len(vocab))]
    word = "'-." * 5 + "a"
    a = {"word": word, "labels": [BOS], "logits": [z], "targets": [3], "vocab": vocab}
    program = run_js("m.lossProgram(args[0], 0)", a)
    nodes, loaded = explore(program)
    _, grads = closed_form(z, 3)
    names = run_js("m.charNames(args[0])", vocab)
    assert names[-1] == "BOS" and names[chars.index("²")] == "u00b2" and names[2] == "dot"
    for i, name in enumerate(names):
        assert nodes[f"logit_{name}"]["grad"] == pytest.approx(grads[i], rel=1e-9, abs=1e-12)
    assert loaded["program"] == program


def _allowed(ch: str) -> bool:
    try:
        check_char(ch, "test")
    except ValueError:
        return False
    return True


def test_every_character_a_word_may_have_gets_a_name_python_reads_unchanged() -> None:
    allowed = [chr(code) for code in range(0x250) if _allowed(chr(code))]
    names = run_js("m.charNames(args[0])", [*allowed, BOS])
    assert len(set(names)) == len(names)  # no two characters' leaves share a name
    for ch, name in zip(allowed, names):
        full = f"logit_{name}"
        assert full.isidentifier() and unicodedata.normalize("NFKC", full) == full, (ch, name)


def test_a_position_out_of_the_word_or_a_diverged_logit_is_refused_in_one_line() -> None:
    m, tok = model()
    a = json.loads(json.dumps(attention(m, tok, "ava")))
    with pytest.raises(subprocess.CalledProcessError) as info:
        run_js("m.lossProgram(args[0], 4)", a)
    assert 'the word "ava" has no position 4' in info.value.stderr
    a["logits"][1][0] = None  # what JSON makes of an infinite logit
    with pytest.raises(subprocess.CalledProcessError) as info:
        run_js("m.lossProgram(args[0], 1)", a)
    assert 'position 1\'s logit of "a" is null: the model has diverged' in info.value.stderr


# ------------------------------------------------------------------ in Chromium


def test_the_gpt_views_link_opens_the_positions_loss_in_the_explorer(
    page: Any, playground: str, screenshot: Any
) -> None:
    from tests.test_gpt_page import open_gpt

    open_gpt(page, playground, "?data=builtin&n_layer=1&n_head=2&n_embd=8")
    page.click("#step")
    page.wait_for_function("() => document.querySelector('#step-count').dataset.step === '1'")
    page.click("#attention table tr[data-row='2'] th")  # the row of "m" in ".emm": reading "em"
    assert page.input_value("#loss-pos") == "2"
    assert page.locator("#attention tr.picked").count() == 2  # the row, in each head
    f = page.evaluate("() => window.gptView.frame()")
    a = f["attention"]
    assert a["word"] == "emma" and a["vocab"][a["targets"][2]] == "m"
    href = page.get_attribute("#open-loss", "href")
    program = urllib.parse.parse_qs(urllib.parse.urlsplit(href).fragment)["program"][0]
    assert program == run_js("m.lossProgram(args[0], 2)", a)
    page.locator("#loss-details summary").click()
    assert page.input_value("#loss-program") == program
    screenshot(page, "gpt-loss-link-1280")

    with page.context.expect_page() as opened:
        page.get_by_role("link", name="Step through this position's loss in the explorer").click()
    tab = opened.value
    tab.route(
        "**/*", lambda r: r.continue_() if r.request.url.startswith(playground) else r.abort()
    )
    from tests.conftest import watch_errors

    errors = watch_errors(tab)
    tab.wait_for_selector("body[data-ready='1']")
    assert tab.input_value("#program") == program
    _, grads = closed_form(a["logits"][2], a["targets"][2])
    names = run_js("m.charNames(args[0])", a["vocab"])
    assert tab.locator("#graph-svg g.node.value[data-name='logit_a']").count() == 1
    tab.get_by_role("button", name="Backward pass", exact=True).click()
    tab.wait_for_function(
        "() => document.querySelector('#status').textContent.includes('Backward pass done')"
    )
    shown = tab.evaluate(
        """(names) => names.map((n) => {
             const g = document.querySelector(`#graph-svg g.node.value[data-name='logit_${n}']`);
             return [Number(g.dataset.grad), g.querySelector('text.grad').textContent];
           })""",
        names,
    )
    from micrograd.viz.formatting import format_number as fmt

    for name, (grad, text), want in zip(names, shown, grads):
        assert grad == pytest.approx(want, rel=1e-9, abs=1e-12), name
        assert text == f"grad {fmt(want)}", name
    screenshot(tab, "gpt-loss-explorer-1280")
    tab.set_viewport_size({"width": 390, "height": 844})
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    screenshot(tab, "gpt-loss-explorer-390")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#open-loss").scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "gpt-loss-link-390")
    assert not errors, errors
