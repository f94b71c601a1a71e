"""The Train view's link and its limits, in a real browser (Playwright driving Debian's Chromium;
see conftest.py): a link whose settings are refused says so, and keeps saying it (and keeps the
link as it was) until the learner changes a setting; a control that cannot act at a limit (a
layer's "+" at the most neurons a layer may have, "Add layer" at the most layers) is disabled.
"""

from __future__ import annotations

import pytest

from micrograd.playground.training.train_settings import MAX_LAYERS, MAX_NEURONS

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def open_ready(page, url):
    """Open the Train view and wait until its start is over (every request it makes at start
    answered: the body says data-ready) and a frame is drawn."""
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    page.wait_for_function("() => window.trainView.frame() && window.trainView.drawn() > 0")
    return page


def test_a_refused_link_setting_stays_said_until_a_setting_changes(page, playground):
    open_ready(page, playground + "train.html?hidden=999&lr=0.1&dataset=circles&activation=zz")
    error = page.locator("#train-error")
    page.wait_for_timeout(3000)  # long after the start's last answer: still said
    assert error.is_visible()
    said = error.text_content()
    assert "The link's settings were refused" in said
    assert f"hidden layer 1 needs 1 to {MAX_NEURONS} neurons, got '999'" in said, said
    assert "zz" in said and "the defaults stand in for hidden, activation" in said, said
    # the link's other settings are kept, not dropped with the refused ones
    settings = page.evaluate("() => window.trainView.meta().settings")
    assert settings["lr"] == 0.1 and settings["dataset"] == "circles", settings
    assert "hidden=999" in page.url  # the link as it came, to be mended, not the defaults
    # Play and Step answer without taking the line away: they change no setting
    page.get_by_role("button", name="Step").click()
    page.wait_for_function("() => window.trainView.frame().step === 1")
    assert error.is_visible() and "hidden=999" in page.url
    # a setting changed: the run is the learner's now, the line goes and the URL says it
    page.get_by_label("Learning rate").fill("0.2")
    page.get_by_label("Learning rate").press("Enter")
    page.wait_for_function("() => window.trainView.meta().settings.lr === 0.2")
    page.wait_for_function("() => document.getElementById('train-error').hidden")
    assert "hidden=999" not in page.url and "lr=0.2" in page.url


def test_controls_that_cannot_act_at_a_limit_are_disabled(page, playground):
    open_ready(page, playground + f"train.html?hidden={MAX_NEURONS},1")
    button = lambda name: page.get_by_role("button", name=name, exact=True)  # noqa: E731
    assert button("More neurons in layer 1").is_disabled()
    assert button("Fewer neurons in layer 1").is_enabled()
    assert button("Fewer neurons in layer 2").is_disabled()  # a layer has one neuron at least
    assert button("More neurons in layer 2").is_enabled()
    assert button("Add layer").is_enabled() and button("Remove layer").is_enabled()
    # one neuron short of the limit: "+" reaches it, and is then disabled, its focus kept in
    # the layer's buttons
    button("Fewer neurons in layer 1").click()
    first = "() => window.trainView.meta().settings.hidden[0]"
    page.wait_for_function(f"{first} === {MAX_NEURONS - 1}")
    button("More neurons in layer 1").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"{first} === {MAX_NEURONS}")
    assert button("More neurons in layer 1").is_disabled()
    assert (
        page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        == "Fewer neurons in layer 1"
    )
    assert not page.locator("#train-error").is_visible()

    open_ready(page, playground + "train.html?hidden=" + ",".join(["2"] * MAX_LAYERS))
    assert button("Add layer").is_disabled() and button("Remove layer").is_enabled()
    button("Remove layer").click()
    layers = "() => window.trainView.meta().settings.hidden.length"
    page.wait_for_function(f"{layers} === {MAX_LAYERS - 1}")
    assert button("Add layer").is_enabled()

    open_ready(page, playground + "train.html?hidden=")  # no hidden layer: a linear model
    assert button("Remove layer").is_disabled() and button("Add layer").is_enabled()
