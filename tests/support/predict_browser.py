"""Predict each grad, driven in a real browser as a learner does it (keyboard first): shared by the
page's, the static site's and JupyterLab's widget tests (`scope` is the page, or the widget's
element: Playwright's locators reach into its shadow root). The answers and the wrong numbers are
computed here from the lecture's graph after `backward()`, never copied from the page."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from micrograd.engine import Value
from micrograd.viz.formatting import format_number as fmt

WAIT = 30_000  # ms: a loaded machine, or Python in the browser, answers in its own time


def lecture_reference() -> dict[str, Value]:
    """The lecture's L = (a*b + c)*f, backpropagated by the engine: every node by name."""
    n = {k: Value(x, label=k) for k, x in (("a", 2.0), ("b", -3.0), ("c", 10.0), ("f", -2.0))}
    n["e"] = n["a"] * n["b"]
    n["d"] = n["e"] + n["c"]
    n["L"] = n["d"] * n["f"]
    n["L"].backward()
    return n


def asked(scope: Any) -> str:
    """The node whose grad the box asks for now ('a' for "your a.grad")."""
    label = scope.locator("#predict-label").text_content()
    found = re.fullmatch(r"your (\S+)\.grad", label)
    assert found, label
    return found.group(1)


def answer(scope: Any, value: float) -> str:
    """Type `value` in the box and press Enter; the one line it gets."""
    box = scope.get_by_label(re.compile(r"^your \S+\.grad$"))
    expect(box).to_be_focused(timeout=WAIT)
    feedback = scope.locator("#predict-feedback")
    feedback.evaluate("el => { el.textContent = '' }")  # the next line, even if it is the same
    box.fill(repr(value))
    box.press("Enter")
    expect(feedback).not_to_be_empty(timeout=WAIT)
    return feedback.text_content()


def wrong_answer(scope: Any, value: float) -> str:
    """A wrong answer's line (the box stays, with the same question)."""
    said = answer(scope, value)
    expect(scope.locator("#predict-form")).to_be_visible()
    return said


def next_step(scope: Any, page: Any) -> None:
    """After a right answer that completed a step, the focus is on Backward step: Enter asks the
    next grads."""
    step = scope.get_by_role("button", name="Backward step", exact=True)
    expect(step).to_be_focused(timeout=WAIT)
    page.keyboard.press("Enter")
    expect(scope.locator("#predict-form")).to_be_visible(timeout=WAIT)


def predict_lecture(
    scope: Any, page: Any, checkbox: bool = True, shoot: Any = None
) -> dict[str, float]:
    """Backpropagate the lecture's L by typing each grad: the four mistakes at a.grad and the
    two hints at c.grad on the way. Returns the grads the graph shows at the end, by name."""
    ref = lecture_reference()
    if checkbox:
        scope.get_by_label("Predict each grad").check()
    expect(scope.get_by_label("Predict each grad")).to_be_checked(timeout=WAIT)
    scope.get_by_role("button", name="Backward step", exact=True).click()
    expect(scope.locator("#predict-label")).to_have_text("your L.grad", timeout=WAIT)
    # the node asked is lit, and the box says how exact an answer must be
    expect(scope.locator("g.node.asked[data-name='L']")).to_have_count(1)
    assert "4 decimals" in scope.locator("#predict-tolerance").text_content()
    seen = []
    while True:
        name = asked(scope)
        seen.append(name)
        node = ref[name]
        expect(scope.locator(f"g.node.asked[data-name='{name}']")).to_have_count(1)
        if name != "L":  # and the node whose step writes it
            expect(scope.locator("g.node.value.asked-parent")).to_have_count(1)
        if name == "a":  # e = a*b: each mistake its own line
            e, b = ref["e"], ref["b"]
            said = {
                "local": wrong_answer(scope, b.data),
                "out": wrong_answer(scope, e.grad),
                "other": wrong_answer(scope, node.grad + 0.5),
                "sign": wrong_answer(scope, -node.grad),
                "swap": wrong_answer(scope, node.data * e.grad),  # last: the screenshot's
            }
            assert said["local"] == "that is ∂e/∂a alone: the chain rule multiplies it by e.grad"
            assert said["out"].startswith("that is e.grad alone: the chain rule multiplies it by")
            assert said["swap"] == "∂(a·b)/∂a is b, the other factor, not a itself"
            assert said["sign"].startswith("the size is right but not the sign")
            assert said["other"] == "not yet: try Hint"
            expect(scope.locator("g.node.asked-parent[data-name='e']")).to_have_count(1)
            if shoot is not None:  # the box, a mistake's line, the node and its parent lit
                shoot()
            # a number the page refuses: its error replaces the line above, one line at a time
            box = scope.get_by_label("your a.grad")
            box.fill("2,0")
            box.press("Enter")
            expect(scope.locator("#predict-error")).to_be_visible(timeout=WAIT)
            assert "2,0" in scope.locator("#predict-error").text_content()
            expect(scope.locator("#predict-feedback")).to_be_hidden()
        if name == "c":  # Hint: the line's shape, then its factors
            scope.get_by_role("button", name="Hint", exact=True).click()
            hints = scope.locator("#predict-hints li")
            expect(hints).to_have_count(1, timeout=WAIT)
            assert hints.first.text_content() == "c.grad = c.grad + ∂d/∂c × d.grad"
            scope.get_by_role("button", name="Hint", exact=True).click()
            expect(hints).to_have_count(2, timeout=WAIT)
            assert hints.nth(1).text_content() == (
                f"∂d/∂c = {fmt(1.0)}; d.grad = {fmt(ref['d'].grad)}; c.grad so far = {fmt(0.0)}"
            )
            scope.get_by_label("your c.grad").focus()
        said = answer(scope, node.grad)
        assert said == f"Right: {name}.grad = {fmt(node.grad)}.", said
        if scope.locator("#predict-form").is_hidden():  # the step is applied
            if scope.get_by_role("button", name="Backward step", exact=True).is_disabled():
                break
            next_step(scope, page)
    assert seen == ["L", "d", "f", "e", "c", "a", "b"], seen
    expect(scope.locator("#predict-score")).to_have_text(
        "Right at the first try: 6 of 7 grads", timeout=WAIT
    )  # a.grad took five tries
    grads = scope.locator("g.node.value").evaluate_all(
        "els => Object.fromEntries(els.map(g => [g.dataset.name, Number(g.dataset.grad)]))"
    )
    assert grads == {k: ref[k].grad for k in "abcdefL"}, grads
    # the chain-rule lines are shown, as without the mode
    assert (
        "a.grad = 0.0000 + (-3.0000) × (-2.0000) = 6.0000" in scope.locator("#log").text_content()
    )

    # Show me: the step asked is applied, its line shown
    scope.get_by_role("button", name="Reset", exact=True).click()
    expect(scope.locator("#log li")).to_have_count(0, timeout=WAIT)
    scope.get_by_role("button", name="Backward step", exact=True).click()
    expect(scope.locator("#predict-label")).to_have_text("your L.grad", timeout=WAIT)
    scope.get_by_role("button", name="Show me", exact=True).click()
    expect(scope.locator("#log li")).to_have_count(1, timeout=WAIT)
    assert scope.locator("#log li").first.text_content().startswith("L.grad = 1.0000")
    expect(scope.locator("#predict-score")).to_have_text(
        "Right at the first try: 0 of 1 grad (1 shown)", timeout=WAIT
    )
    # Backward pass reveals the rest
    scope.get_by_role("button", name="Backward step", exact=True).click()
    expect(scope.locator("#predict-label")).to_have_text("your d.grad", timeout=WAIT)
    scope.get_by_role("button", name="Backward pass", exact=True).click()
    expect(scope.locator("#predict-form")).to_be_hidden(timeout=WAIT)
    expect(scope.locator("#log li")).to_have_count(4, timeout=WAIT)
    # every grad the pass wrote is in the score: those shown count as not right
    expect(scope.locator("#predict-score")).to_have_text(
        "Right at the first try: 0 of 7 grads (7 shown)", timeout=WAIT
    )
    return grads


def predict_a_plus_a(scope: Any) -> None:
    """b = a + a: a.grad = 1 is the second path forgotten (the lecture's `=` for `+=`)."""
    scope.get_by_role("button", name="Backward step", exact=True).click()
    expect(scope.locator("#predict-label")).to_have_text("your b.grad", timeout=WAIT)
    assert answer(scope, 1.0) == "Right: b.grad = 1.0000."
    scope.get_by_role("button", name="Backward step", exact=True).click()
    expect(scope.locator("#predict-label")).to_have_text("your a.grad", timeout=WAIT)
    said = answer(scope, 1.0)
    assert said == "a is used twice: b = a + a adds a grad along each path (+=, once per use)"
    assert answer(scope, 2.0) == "Right: a.grad = 2.0000."
