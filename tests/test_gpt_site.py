"""The static site's GPT view (gpt.html: micrograd on Pyodide in a Web Worker) in Chromium, every
request outside the site aborted, failing on any console error (issue 42, items 1 and 5): Play
trains and the samples change, the Attention map of "emma" is a triangle per head whose rows sum
to 1, Pause answers (its pictures in the worker's next turn), a pasted word list trains; on a
phone, Play and Pause, the samples and the loss in view, no sideways scrolling."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests import test_site_browser
from tests.test_gpt_page import ROWS, SAMPLES
from tests.test_site_browser import START_MS, Visit

# the site that test_site_browser.py builds and serves (its fixtures, used here by name)
site_folder, site_url = test_site_browser.site_folder, test_site_browser.site_url

pytestmark = pytest.mark.slow

STEP = "() => Number(document.querySelector('#step-count').dataset.step)"
# the frame drawn has the pictures of its step (a paused frame's come in the worker's next turn)
PICTURED = "() => { const f = window.gptView.frame(); return f && f.pictures_step === f.step; }"


def test_the_sites_gpt_view_trains_and_pauses_and_shows_the_attention(
    browser: Any, site_url: str, screenshot: Any
) -> None:
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    try:
        page = v.open("gpt.html?n_layer=1&n_head=4")
        v.ready()
        page.wait_for_function("() => document.querySelectorAll('#samples li').length === 20")
        # makemore's names, carried by the site (no banner): 26 letters, the data's default
        assert page.is_hidden("#names-note") and page.input_value("#data") == "names"
        assert page.evaluate("() => window.gptView.meta().vocab") == "abcdefghijklmnopqrstuvwxyz"
        first = page.evaluate(SAMPLES)
        page.click("#play")
        page.wait_for_function(f"() => ({STEP})() >= 10", timeout=START_MS)
        page.click("#pause")
        page.wait_for_function(
            "() => document.querySelector('#run-state').textContent === 'paused'"
        )
        page.wait_for_function(PICTURED)  # (Pause is answered first, its pictures next)
        f = page.evaluate("() => window.gptView.frame()")
        page.wait_for_function(f"() => ({STEP})() === {f['step']}")
        assert not f["playing"] and page.text_content("#loss-text") == f"loss {f['loss']:.4f}"
        assert page.evaluate(SAMPLES) == f["samples"] != first
        rows = page.evaluate(ROWS)
        assert {head for _, head, _, _ in rows} == {0, 1, 2, 3}
        assert page.get_attribute("#attention", "data-word") == "emma"
        for _, _, i, weights in rows:
            assert len(weights) == i + 1 and math.fsum(weights) == pytest.approx(1.0, abs=1e-9)
        screenshot(page, "site-gpt")

        page.select_option("#data", "own")  # a pasted list trains
        page.fill("#words", "anna\nbob\nhannah\nnan")
        page.click("#use-words")
        page.wait_for_function("() => window.gptView.meta().vocab === 'abhno'")
        page.click("#step")
        page.wait_for_function(f"() => ({STEP})() === 1")
        page.wait_for_function(PICTURED)
        assert set("".join(page.evaluate(SAMPLES))) <= set("abhno")
        assert page.input_value("#word") == "anna"
    finally:
        v.close()


def test_the_sites_gpt_view_on_a_phone(browser: Any, site_url: str, screenshot: Any) -> None:
    v = Visit(browser, site_url, viewport={"width": 390, "height": 844}, has_touch=True)
    try:
        page = v.open("gpt.html")
        v.ready()
        page.tap("#play")
        page.wait_for_function(f"() => ({STEP})() >= 3", timeout=START_MS)
        page.tap("#pause")
        page.wait_for_function(
            "() => document.querySelector('#run-state').textContent === 'paused'"
        )
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] == 390
        for sel in ("#play", "#pause", "#loss-text", "#samples", "#curve"):
            box = page.locator(sel).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, sel
            assert box["y"] >= 0 and box["y"] + min(box["height"], 60) <= 844, sel
        screenshot(page, "site-gpt-phone")
    finally:
        v.close()
