"""The Train view's Health panel in a real browser (Playwright driving Chromium; see conftest.py),
at 1280 px and on a phone (390 px), on the server: a preset broken on purpose is diagnosed by its
cause, "Fix it" makes it healthy, the pictures are drawn. Screenshots go to tests/screenshots/."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def open_health(page, playground):
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_label("Show the network's health").check()
    page.wait_for_function("() => window.trainView.frame().health")
    # (the panel is drawn at the page's next frame, after the frame with the health came)
    page.wait_for_function(
        "() => document.querySelector('#health-note').textContent.includes('Press Step or Play')"
    )


def steps(page, n):
    for _ in range(n):
        k = page.evaluate("() => window.trainView.frame().step")
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => window.trainView.frame().step === {k + 1}")


def canvas_inked(page, cid):
    """Pixels drawn on a canvas (not all transparent)."""
    return page.evaluate(
        """id => { const c = document.getElementById(id);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }""",
        cid,
    )


@pytest.mark.parametrize(
    "preset, title, cause",
    [("dead_relus", "Dead ReLUs", "dead"), ("saturated_tanh", "Saturated tanh", "saturated")],
)
def test_a_preset_is_diagnosed_and_fix_it_makes_it_healthy(
    page, phone, playground, screenshot, preset, title, cause
):
    tab = page if preset == "dead_relus" else phone  # one at 1280, one on a phone
    open_health(tab, playground)
    tab.get_by_label("Break it:").select_option(label=title)
    tab.wait_for_function(
        f"() => window.trainView.frame().health.preset === '{preset}' && "
        "window.trainView.frame().step === 0"
    )
    assert tab.evaluate("() => window.trainView.meta().settings.hidden") == [16, 16]
    steps(tab, 5)
    item = tab.locator(f"#health-diagnoses li[data-cause={cause}]").first
    item.wait_for(timeout=5000)
    assert title.split()[-1].lower().rstrip("s") in item.text_content().lower()  # relu / tanh
    assert canvas_inked(tab, "health-hist") > 500 and canvas_inked(tab, "health-ud") > 500
    tab.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(tab, f"train-health-{preset}", full_page=True)
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= (
        1280 if tab is page else 400
    )
    fix = tab.get_by_role("button", name="Fix it")
    assert fix.is_enabled()
    fix.click()
    tab.wait_for_function(
        "() => window.trainView.frame().health.fixed && window.trainView.frame().step === 0"
    )
    steps(tab, 12)
    tab.locator("#health-diagnoses li.healthy").wait_for(timeout=5000)
    assert tab.locator("#health-diagnoses li").count() == 1
    assert not fix.is_enabled()
    assert "fixed:" in tab.locator("#health-fix-text").text_content()
    screenshot(tab, f"train-health-{preset}-fixed", full_page=True)


def test_the_panel_plays_live_and_shut_sends_no_health(page, playground):
    open_health(page, playground)
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => (window.trainView.frame().health || {}).step > 20")
    page.get_by_role("button", name="Pause").click()
    assert page.locator("#health-diagnoses li.healthy").count() == 1  # the default is healthy
    page.get_by_label("Show the network's health").uncheck()
    page.wait_for_function("() => window.trainView.frame().health === null")
    assert page.locator("#health-body").is_hidden()
