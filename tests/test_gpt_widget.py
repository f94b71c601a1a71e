"""`micrograd.widgets.gpt(...)` (issue 42, item 1): the GPT view in a notebook cell, the page's own
files over the widget's messages. In the kernel: its settings checked as the page's, it trains on
the kernel's thread and sends the GPT view's frames; in JupyterLab: Play trains, the samples
and the attention of "emma" are drawn, Pause answers, a position's loss is shown as its program
(no explorer page beside a notebook: no link), whose grads are pᵢ − yᵢ."""

from __future__ import annotations

import math
import re
import time
from typing import Any

import pytest

pytest.importorskip("anywidget")

from micrograd.expr import parse_program  # noqa: E402
from micrograd.widgets import PlaygroundWidget, gpt  # noqa: E402
from tests.conftest import SCREENSHOTS, watch_errors  # noqa: E402
from tests.support.jupyterlab import jupyterlab  # noqa: E402


class Wire:
    """The widget's page, played by hand: what the view sends, and what comes back."""

    def __init__(self, widget: PlaygroundWidget) -> None:
        self.widget = widget
        self.sent: list[dict[str, Any]] = []
        widget.send = self.sent.append  # type: ignore[method-assign]
        self.next_id = 0

    def call(self, action: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg = {"id": self.next_id, "view": "gpt", "action": action, "body": body or {}}
        self.widget._on_message(self.widget, msg, [])
        reply = next(m for m in self.sent if m.get("id") == self.next_id)
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["answer"]

    def frames(self) -> list[dict[str, Any]]:
        return [m["frame"] for m in self.sent if "frame" in m]


def test_a_bad_setting_is_refused_in_the_pages_words():
    with pytest.raises(ValueError, match=r"^gpt: Embedding size \(10\) must be a multiple of"):
        gpt(data="builtin", n_embd=10)
    with pytest.raises(ValueError, match=r"^gpt: Your words: line 2 \('b c'\): the character ' '"):
        gpt(data="own", words="a\nb c")


@pytest.mark.slow
def test_the_gpt_widget_trains_on_the_kernels_thread_and_sends_frames():
    widget = gpt(data="own", words="anna\nbob\nhannah", n_embd=8, n_head=2)
    wire = Wire(widget)
    widget._on_message(widget, {"frames": True, "fresh": True, "view": "gpt"}, [])
    assert wire.frames() and wire.frames()[0]["step"] == 0
    assert wire.call("state")["meta"]["vocab"] == "abhno"
    wire.call("control", {"action": "play"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(f["step"] >= 5 for f in wire.frames()):
        time.sleep(0.05)
    wire.call("control", {"action": "pause"})
    trained = [f for f in wire.frames() if f["step"] >= 5]
    assert trained and len(trained[-1]["samples"]) == 20  # frames came, unasked, as it trained
    trainer = widget.tab.gpt.trainer
    widget.close()
    assert trainer.closed


@pytest.fixture(scope="module")
def lab(tmp_path_factory: Any) -> Any:
    with jupyterlab(tmp_path_factory.mktemp("jupyterlab")) as running:
        yield running


@pytest.mark.slow
def test_the_gpt_widget_in_jupyterlab(lab: Any, browser: Any) -> None:
    name = lab.notebook(
        "gpt.ipynb", ["from micrograd.widgets import gpt\ngpt(data='builtin', n_embd=8, n_head=2)"]
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(180_000)  # (a loaded machine: JupyterLab and a kernel)
    page = context.new_page()
    errors = watch_errors(page)
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(lab.url) and not r.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    root = "document.querySelector('.micrograd-widget').shadowRoot"
    try:
        lab.open_and_run(page, name)
        page.wait_for_function(
            "() => document.querySelector('.micrograd-widget')?.dataset.ready === '1'",
            polling=200,
            timeout=300_000,
        )
        widget = page.locator(".micrograd-widget")
        first = widget.locator("#samples li").all_text_contents()
        widget.locator("#play").click()
        page.wait_for_function(
            f"() => Number({root}.querySelector('#step-count').dataset.step) >= 5", timeout=300_000
        )
        widget.locator("#pause").click()
        page.wait_for_function(f"() => {root}.querySelector('#run-state').textContent === 'paused'")
        assert widget.locator("#samples li").all_text_contents() != first
        rows = page.evaluate(f"""() => [...{root}.querySelectorAll('#attention tr[data-row]')]
            .map(tr => [...tr.querySelectorAll('td[data-w]')].map(td => Number(td.dataset.w)))""")
        assert len(rows) == 2 * 5  # two heads, "emma" read as . e m m a
        assert all(math.isclose(math.fsum(r), 1.0, abs_tol=1e-9) for r in rows)
        # a position's loss: no explorer page beside a notebook, so its program, for explore()
        widget.locator("#attention tr[data-row='1'] th").first.click()
        assert widget.locator("#loss-pos").input_value() == "1"
        assert widget.locator("#open-loss").is_hidden()
        widget.locator("#loss-details summary").click()
        program = widget.locator("#loss-program").input_value()
        assert program.startswith('# "emma", position 1: having read ".e"') and "explore(" in (
            widget.locator("#loss-where").text_content() or ""
        )
        names = parse_program(program)
        names["L"].backward()
        z = {k: v for k, v in names.items() if k.startswith("logit_")}
        total = math.fsum(math.exp(v.data) for v in z.values())
        for k, v in z.items():  # pᵢ − yᵢ, the target "m" (the closed form, not the engine)
            want = math.exp(v.data) / total - (k == "logit_m")
            assert math.isclose(v.grad, want, rel_tol=1e-9, abs_tol=1e-12), k
        SCREENSHOTS.mkdir(exist_ok=True)
        widget.scroll_into_view_if_needed()
        page.locator(".jp-Cell").first.screenshot(path=str(SCREENSHOTS / "widget-gpt.png"))
    finally:
        context.close()
    assert not errors, errors
    assert not outside, outside


def test_a_word_longer_than_the_block_is_refused_in_the_widget_as_on_the_page():
    """The command's rule (gpt_frames.check_fits) in a notebook too: one line naming the word,
    the limit and the block size that reads it (it once trained on the word's beginning)."""
    with pytest.raises(ValueError) as e:
        gpt(data="own", words="emma\nabigailrose", block_size=8)
    assert str(e.value) == (
        "gpt: Your words: 'abigailrose' has 11 characters; a block size of 8 reads words of at "
        "most 7 (Block size 12 reads it)"
    )


READOUT_STEPS = 400
READOUTS = {"n_embd": 8, "n_head": 2, "steps": READOUT_STEPS, "lr": 0.02}


def python_samples() -> list[str]:
    """`micrograd.gpt.sample`'s 20 words at the weights the widget's run has at its last step
    (the built-in words, READOUTS' settings, the seed 42, temperature 0.5), the rng seeded with
    the step, as the page's samples are drawn: computed here, eagerly, apart from the kernel."""
    import random

    from micrograd.gpt import sample
    from micrograd.playground.gpt.train_gpt import SAMPLES, WORDS, GPTKind, GPTSettings

    kind = GPTKind(GPTSettings(docs=WORDS, **READOUTS), "eager")  # type: ignore[arg-type]
    while kind.train(0.0, lambda: True):
        pass
    assert kind.adam.t == READOUT_STEPS
    s = kind.settings
    return sample(kind.model, kind.tokenizer, SAMPLES, s.temperature, rng=random.Random(s.steps))


@pytest.mark.slow
def test_the_gpt_widgets_readouts_in_jupyterlab(lab: Any, browser: Any) -> None:
    """Issue 54, item 4, in the notebook widget (the page's and the site's: test_gpt_page_
    readouts.py): steps/s beside the step counter, "done: step N of N" at the Steps limit, the
    embedding's labels apart (their boxes, at 1280 and at 390 wide), the two lines on what a head
    is and what a row and a column are, the loss's logits as data (not parameters), the samples
    `sample()`'s at the same weights, seed and temperature; a block size too small for a word
    refused in one line with the model note still true; the names banner gone with the
    learner's words. Screenshots: tests/screenshots/widget-gpt-readouts-{1280,390}.png."""
    from micrograd.playground.gpt.train_gpt import WORDS
    from tests.test_gpt_page_readouts import overlapping

    want, chars = python_samples(), set("".join(WORDS))
    settings = ", ".join(f"{k}={v!r}" for k, v in READOUTS.items())
    name = lab.notebook(
        "gpt_readouts.ipynb",
        [f"from micrograd.widgets import gpt\ngpt(data='builtin', {settings})"],
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(180_000)
    page = context.new_page()
    errors = watch_errors(page)
    root = "document.querySelector('.micrograd-widget').shadowRoot"
    boxes = f"""() => [...{root}.querySelectorAll('#embedding text.char')].map((t) => {{
      const b = t.getBoundingClientRect();
      return [t.dataset.char, b.left, b.top, b.right, b.bottom]; }})"""
    samples = f"() => [...{root}.querySelectorAll('#samples li')].map((li) => li.dataset.sample)"
    try:
        lab.open_and_run(page, name)
        page.wait_for_function(
            "() => document.querySelector('.micrograd-widget')?.dataset.ready === '1'",
            polling=200,
            timeout=300_000,
        )
        w = page.locator(".micrograd-widget")
        # the kernel has no names (the suite's environment): the banner says so, on builtin words
        assert w.locator("#names-note").is_visible()
        assert w.locator("#rate-text").text_content() == "– steps/s"
        head = w.locator("#head-what").text_content() or ""
        assert "q·k/√d" in head and "softmax over those positions" in head
        assert "weighted sum of their values" in head
        assert "a row is the position reading" in (
            w.locator("#head-what + p.hint").text_content() or ""
        )
        w.locator("#play").click()
        page.wait_for_function(
            f"() => Number({root}.querySelector('#rate-text').dataset.rate) > 0", timeout=300_000
        )
        rate = w.locator("#rate-text")
        assert re.fullmatch(r"[\d,.]+ steps/s", rate.text_content() or "")
        # beside the step counter: on its line, to its right
        counter, beside = w.locator("#step-count").bounding_box(), rate.bounding_box()
        assert counter and beside and beside["x"] > counter["x"]
        assert abs(
            (beside["y"] + beside["height"] / 2) - (counter["y"] + counter["height"] / 2)
        ) < max(counter["height"], beside["height"])
        done = f"done: step {READOUT_STEPS} of {READOUT_STEPS}"
        page.wait_for_function(
            f"() => {root}.querySelector('#run-state').textContent === {done!r}", timeout=300_000
        )
        assert w.locator("#pause").is_disabled()
        assert w.locator("#step-count").text_content() == f"step {READOUT_STEPS}"
        # the samples of the last step: sample()'s (the pictures of a paused frame come next)
        deadline = time.monotonic() + 60
        while page.evaluate(samples) != want and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        assert page.evaluate(samples) == want
        # the loss of a position: the logits are data, the model's outputs, not parameters
        w.locator("#attention tr[data-row='1'] th").first.click()
        w.locator("#loss-details summary").click()
        program = w.locator("#loss-program").input_value()
        logit_lines = [x for x in program.replace(";", "\n").splitlines() if "logit_" in x]
        declared = [x.strip() for x in logit_lines if ": " in x and "=" in x and "exp(" not in x]
        assert declared and all(": data = " in x for x in declared), declared
        assert "param" not in program
        # the embedding's labels apart, at 1280 and at 390 wide
        page.wait_for_function(
            f"() => {root}.querySelectorAll('#embedding text.char').length > 5", timeout=60_000
        )
        SCREENSHOTS.mkdir(exist_ok=True)
        w.locator("#run-state").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "widget-gpt-readouts-top-1280.png"))
        for width in (1280, 390):
            if width == 390:  # the file browser folded away: the notebook has the width
                page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
            page.set_viewport_size({"width": width, "height": 1200 if width == 1280 else 844})
            page.wait_for_timeout(500)  # (JupyterLab lays itself out again)
            cell = page.locator(".jp-Notebook").bounding_box()
            assert cell and cell["width"] > (800 if width == 1280 else 300), cell
            w.locator("#embedding").scroll_into_view_if_needed()
            got = page.evaluate(boxes)
            assert len(got) == len(chars) + 1 and overlapping(got) == [], (width, got)  # and "."
            page.screenshot(path=str(SCREENSHOTS / f"widget-gpt-readouts-{width}.png"))
        w.locator("#run-state").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "widget-gpt-readouts-top-390.png"))
        page.set_viewport_size({"width": 1280, "height": 1200})
        # a block size the words do not fit: refused in one line, the run and its note kept
        note = w.locator("#model-note").text_content() or ""
        w.locator("#block_size").fill("8")
        w.locator("#block_size").dispatch_event("change")
        error = w.locator("#gpt-error")
        error.wait_for(state="visible")
        assert error.text_content() == (
            "The built-in words: 'isabella' has 8 characters; a block size of 8 reads words of "
            "at most 7 (Block size 9 reads it)"
        )
        assert w.locator("#model-note").text_content() == (
            note + " (still the run's: the change above was refused)"
        )
        assert w.locator("#block_size").input_value() == "16"  # the run's, back in its control
        # the learner's words: the banner goes, and a refused list keeps the note true
        w.locator("#data").select_option("own")
        w.locator("#words").fill("zed\nzoe\nzara")
        w.locator("#use-words").click()
        page.wait_for_function(
            f"() => {root}.querySelector('#model-note').textContent.includes('3 words')"
        )
        assert error.is_hidden() and w.locator("#names-note").is_hidden()
        note = w.locator("#model-note").text_content() or ""
        w.locator("#words").fill("zed\nno way")
        w.locator("#use-words").click()
        error.wait_for(state="visible")
        assert (error.text_content() or "").startswith("Your words: line 2 ('no way')")
        assert w.locator("#model-note").text_content() == (
            note + " (still the run's: the change above was refused)"
        )
        assert w.locator("#names-note").is_hidden()
    finally:
        context.close()
    assert not errors, errors
