"""The GPT view's Health panel in a real browser (Playwright driving Chromium; see conftest.py),
at 1280 px and on a phone (390 × 844), on the server: each preset that applies to microgpt is
diagnosed by its cause, "Fix it" makes it healthy, the pictures are drawn (train-health.js's
drawing, the Train view's), no sideways scrolling. Screenshots go to tests/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def open_health(tab: Any, playground: str) -> None:
    tab.goto(playground + "gpt?data=builtin")
    tab.wait_for_function("() => window.gptView && window.gptView.frame()")
    tab.get_by_label("Show the GPT's health").check()
    tab.wait_for_function("() => window.gptView.frame().health")
    # (the panel is drawn at the page's next frame, after the frame with the health came)
    tab.wait_for_function(
        "() => document.querySelector('#health-note').textContent.includes('Press Step or Play')"
    )


def steps(tab: Any, n: int) -> None:
    for _ in range(n):
        k = tab.evaluate("() => window.gptView.frame().step")
        tab.get_by_role("button", name="Step", exact=True).click()
        tab.wait_for_function(f"() => window.gptView.frame().step === {k + 1}")


def canvas_inked(tab: Any, cid: str) -> int:
    """Pixels drawn on a canvas (not all transparent)."""
    return tab.evaluate(
        """id => { const c = document.getElementById(id);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }""",
        cid,
    )


@pytest.mark.parametrize(
    "preset, title, cause, words",
    [
        ("dead_relus", "Dead ReLUs", "dead", "ReLUs dead"),
        ("lr_too_high", "Learning rate too high", "update_data", "too high"),
    ],
)
def test_a_gpt_preset_is_diagnosed_and_fix_it_makes_it_healthy(
    page, phone, playground, screenshot, preset, title, cause, words
):
    tab = page if preset == "dead_relus" else phone  # one at 1280, one on a phone
    open_health(tab, playground)
    options = tab.locator("#health-preset option").all_text_contents()
    assert options[1:] == ["Dead ReLUs", "Learning rate too high"]  # no zero_grad, no tanh
    tab.get_by_label("Break it:").select_option(label=title)
    tab.wait_for_function(
        f"() => window.gptView.frame().health.preset === '{preset}' && "
        "window.gptView.frame().step === 0"
    )
    steps(tab, 3)
    item = tab.locator(f"#health-diagnoses li[data-cause={cause}]").first
    item.wait_for(timeout=10_000)
    assert words in item.text_content()
    assert canvas_inked(tab, "health-hist") > 500 and canvas_inked(tab, "health-ud") > 500
    tab.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(tab, f"gpt-health-{preset}", full_page=True)
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= (
        1280 if tab is page else 400
    )
    fix = tab.get_by_role("button", name="Fix it")
    assert fix.is_enabled()
    fix.click()
    tab.wait_for_function(
        "() => window.gptView.frame().health.fixed && window.gptView.frame().step === 0"
    )
    assert tab.evaluate("() => window.gptView.meta().settings.lr") == 0.01
    steps(tab, 12)
    tab.locator("#health-diagnoses li.healthy").wait_for(timeout=10_000)
    assert tab.locator("#health-diagnoses li").count() == 1
    assert not fix.is_enabled()
    assert "fixed:" in tab.locator("#health-fix-text").text_content()
    tab.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(tab, f"gpt-health-{preset}-fixed", full_page=False)


def test_the_gpt_panel_plays_live_and_shut_sends_no_health(page, playground):
    open_health(page, playground)
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => (window.gptView.frame().health || {}).step > 15")
    page.get_by_role("button", name="Pause").click()
    page.locator("#health-diagnoses li.healthy").wait_for(timeout=10_000)  # microgpt: healthy
    assert page.locator("#health-diagnoses li").count() == 1
    page.get_by_label("Show the GPT's health").uncheck()
    page.wait_for_function("() => window.gptView.frame().health === null")
    assert page.locator("#health-body").is_hidden()
