"""The GPT view's readouts in Chromium (issue 54, item 4), on the server's page: steps/s beside
the step counter while it plays, "done: step N of N" at the Steps limit, the embedding plot's
labels apart (their boxes, at 1280 and at 390 × 844), the names banner gone once the learner
trains on words of their own, and the model note true after a refused change. Screenshots go
to tests/screenshots/ (gpt-done-1280.png, gpt-done-390.png)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.test_gpt_page import open_gpt

pytestmark = pytest.mark.slow

BOXES = """() => [...document.querySelectorAll('#embedding text.char')].map((t) => {
  const b = t.getBoundingClientRect();
  return [t.dataset.char, b.left, b.top, b.right, b.bottom]; })"""


def overlapping(boxes: list) -> list:
    """Each pair of labels whose boxes (as drawn, in CSS pixels) overlap by more than a pixel."""
    out = []
    for i, (a, l1, t1, r1, b1) in enumerate(boxes):
        for b, l2, t2, r2, b2 in boxes[i + 1 :]:
            if min(r1, r2) - max(l1, l2) > 1 and min(b1, b2) - max(t1, t2) > 1:
                out.append((a, b))
    return out


def play_to_the_end(tab: Any, steps: int) -> None:
    tab.click("#play")
    tab.wait_for_function("() => Number(document.querySelector('#rate-text').dataset.rate) > 0")
    assert re.fullmatch(r"[\d,.]+ steps/s", tab.text_content("#rate-text"))
    tab.wait_for_function(
        "() => document.querySelector('#run-state').textContent === "
        f"'done: step {steps} of {steps}'",
        timeout=180_000,
    )
    assert tab.is_disabled("#pause")
    assert tab.text_content("#step-count") == f"step {steps}"


@pytest.mark.parametrize("size", ["1280", "390"])
def test_rate_done_and_the_embedding_labels_apart(page, phone, playground, screenshot, size):
    tab = page if size == "1280" else phone
    open_gpt(tab, playground, "?data=builtin&steps=400&lr=0.02")
    assert tab.text_content("#rate-text") == "– steps/s"
    play_to_the_end(tab, 400)
    tab.wait_for_function("() => document.querySelectorAll('#embedding text.char').length > 5")
    boxes = tab.evaluate(BOXES)
    assert overlapping(boxes) == []
    tab.locator("#embedding").scroll_into_view_if_needed()
    screenshot(tab, f"gpt-done-{size}")


def test_the_banner_goes_with_own_words_and_the_note_stays_true(page, playground):
    open_gpt(page, playground)
    assert page.is_visible("#names-note")  # (the tests' server has no names: the banner says so)
    page.select_option("#data", "own")
    page.fill("#words", "zed\nzoe\nzara")
    page.click("#use-words")
    page.wait_for_function("() => window.gptView.meta().words === 3")
    assert not page.is_visible("#names-note")
    note = page.text_content("#model-note")
    assert "3 words" in note
    page.fill("#words", "zed\nno way")
    page.click("#use-words")
    page.wait_for_selector("#gpt-error:not([hidden])")
    assert page.text_content("#model-note") == (
        note + " (still the run's: the change above was refused)"
    )
    assert page.evaluate("() => window.gptView.meta().words") == 3


LONG = (
    "The built-in words: 'isabella' has 8 characters; a block size of 8 reads words of at most 7 "
    "(Block size 9 reads it)"
)


def test_a_block_size_too_small_for_a_word_is_refused_as_the_command_refuses_it(page, playground):
    """The command's rule on the page (gpt_frames.check_fits): a Block size that does not read a
    word whole is refused in one line naming the word, the limit and the Block size that reads
    it; the run goes on as it was (the page once trained on the words' first positions). A link
    with it: the line, and the defaults."""
    open_gpt(page, playground, "?data=builtin")
    note = page.text_content("#model-note")
    page.fill("#block_size", "8")
    page.dispatch_event("#block_size", "change")
    page.wait_for_selector("#gpt-error:not([hidden])")
    assert page.text_content("#gpt-error") == LONG
    assert (
        page.text_content("#model-note")
        == note + " (still the run's: the change above was refused)"
    )
    assert page.input_value("#block_size") == "16"
    assert page.evaluate("() => window.gptView.meta().settings.block_size") == 16
    page.fill("#block_size", "9")  # isabella's 8 letters and the end: 9 positions
    page.dispatch_event("#block_size", "change")
    page.wait_for_function("() => window.gptView.meta().settings.block_size === 9")
    assert page.is_hidden("#gpt-error")
    open_gpt(page, playground, "?data=builtin&block_size=8")
    page.wait_for_selector("#gpt-error:not([hidden])")
    assert page.text_content("#gpt-error") == LONG
    assert page.evaluate("() => window.gptView.meta().settings.block_size") == 16
