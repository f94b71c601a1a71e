"""Predict each grad (issue 33): the explorer asks each grad a Backward step writes before it shows
it, and names the mistake a wrong number suggests. Without a browser: the questions and the lines
against the engine's own `backward()` and the lecture's numbers, on micrograd's Value and on a
learner's own; then in Chromium on the page, at 1280 and on a phone
(tests/support/predict_browser.py drives it; the static site's and JupyterLab's tests drive the
same)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.playground.errors import ViewError
from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.playground.views import Tab
from micrograd.viz.formatting import format_number as fmt
from tests.support.corpus import LECTURE_VALUE
from tests.test_playground_foreign import learner

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
LECTURE_L, A_PLUS_A = EXAMPLES[1], EXAMPLES[3]
assert "(a*b + c)*f" in LECTURE_L["title"] and "b = a + a" in A_PLUS_A["title"]


def predicting(program: str) -> Tab:
    tab = Tab()
    tab.call("explorer", "load", {"program": program})
    tab.call("explorer", "predict", {"on": True})
    return tab


def backprop_by_answers(tab: Tab, grads: dict[str, float]) -> dict[str, Any]:
    """Step through, answering each grad asked with `grads[name]`; the last state."""
    state = tab.call("explorer", "state", {})
    while state["phase"] != "done":
        state = tab.call("explorer", "step", {})
        while state["predict"]["ask"]:
            name = state["predict"]["ask"]["name"]
            state = tab.call("explorer", "answer", {"value": grads[name]})
            assert state["predict"]["feedback"]["right"], state["predict"]["feedback"]
    return state


def lecture() -> dict[str, Value]:
    n = {k: Value(x, label=k) for k, x in (("a", 2.0), ("b", -3.0), ("c", 10.0), ("f", -2.0))}
    n["e"] = n["a"] * n["b"]
    n["d"] = n["e"] + n["c"]
    n["L"] = n["d"] * n["f"]
    n["L"].backward()
    return n


def test_a_step_asks_before_it_writes_and_right_answers_give_backwards_grads() -> None:
    ref = lecture()
    tab = predicting(LECTURE_L["program"])
    state = tab.call("explorer", "step", {})
    ask = state["predict"]["ask"]
    assert ask["label"] == "your L.grad" and ask["parent"] is None
    assert state["log"] == [] and all(v["grad"] == 0.0 for v in state["values"].values())
    assert tab.call("explorer", "step", {})["predict"]["ask"] == ask  # asked until answered
    state = backprop_by_answers(tab, {k: v.grad for k, v in ref.items()})
    names = {n["id"]: n["name"] for n in state_drawing(tab) if n["kind"] == "value"}
    assert {names[i]: v["grad"] for i, v in state["values"].items()} == {
        k: v.grad for k, v in ref.items()
    }
    assert state["predict"]["score"] == "Right at the first try: 7 of 7 grads"
    # the lines are those of the mode off, step for step
    plain = Tab()
    plain.call("explorer", "load", {"program": LECTURE_L["program"]})
    assert plain.call("explorer", "backward", {})["log"] == state["log"]


def state_drawing(tab: Tab) -> list[dict[str, Any]]:
    return tab.call("explorer", "state", {})["drawing"]["nodes"]


def ask_for(tab: Tab, name: str, ref: dict[str, Value]) -> dict[str, Any]:
    """Answer right until `name`'s grad is asked; the state then."""
    state = tab.call("explorer", "state", {})
    while True:
        ask = state["predict"]["ask"]
        if ask is None:
            state = tab.call("explorer", "step", {})
            continue
        if ask["name"] == name:
            return state
        state = tab.call("explorer", "answer", {"value": ref[ask["name"]].grad})


def line(tab: Tab, value: float) -> str:
    feedback = tab.call("explorer", "answer", {"value": value})["predict"]["feedback"]
    assert not feedback["right"]
    return feedback["text"]


def test_each_mistake_is_named_from_the_steps_numbers() -> None:
    ref = lecture()
    a, b, e = ref["a"], ref["b"], ref["e"]
    tab = predicting(LECTURE_L["program"])
    ask_for(tab, "d", ref)
    assert line(tab, ref["d"].data * 1.0) == "∂(d·f)/∂d is f, the other factor, not d itself"
    ask_for(tab, "e", ref)
    assert line(tab, 1.0) == "that is ∂d/∂e alone: the chain rule multiplies it by d.grad"
    ask_for(tab, "a", ref)
    assert line(tab, b.data) == "that is ∂e/∂a alone: the chain rule multiplies it by e.grad"
    assert line(tab, e.grad) == (
        "that is e.grad alone: the chain rule multiplies it by ∂e/∂a, the local derivative"
    )
    assert line(tab, a.data * e.grad) == "∂(a·b)/∂a is b, the other factor, not a itself"
    assert line(tab, -a.grad) == (
        "the size is right but not the sign: look again at the signs of ∂e/∂a and e.grad"
    )
    assert line(tab, a.grad * 1.001).startswith("close, but not to 4 decimals")
    assert line(tab, 17.0) == "not yet: try Hint"
    state = tab.call("explorer", "answer", {"value": round(a.grad, 4)})  # 4 decimals are right
    assert state["predict"]["feedback"] == {"right": True, "text": f"Right: a.grad = {fmt(6.0)}."}


def test_a_second_path_forgotten_is_named() -> None:
    tab = predicting(A_PLUS_A["program"])
    tab.call("explorer", "step", {})
    tab.call("explorer", "answer", {"value": 1.0})
    assert tab.call("explorer", "step", {})["predict"]["ask"]["label"] == "your a.grad"
    assert line(tab, 1.0) == (
        "a is used twice: b = a + a adds a grad along each path (+=, once per use)"
    )
    hint = tab.call("explorer", "hint", {})["predict"]["ask"]["hint"]
    assert hint == ["a.grad = a.grad + ∂b/∂a × b.grad, once along each of its 2 paths"]
    # a node reached from two different nodes (d = a*b; e = a + b): its second step adds onto
    # the grad the first gave, which the graph shows
    tab = predicting(EXAMPLES[4]["program"])
    a, b = Value(-2.0, label="a"), Value(3.0, label="b")
    ref = {"a": a, "b": b, "d": a * b, "e": a + b}
    ref["f"] = ref["d"] * ref["e"]
    ref["f"].backward()
    state, said = tab.call("explorer", "state", {}), []
    while state["phase"] != "done":
        state = tab.call("explorer", "step", {})
        while state["predict"]["ask"]:
            ask = state["predict"]["ask"]
            had = state["values"][ask["node"]]["grad"]
            if had != 0.0:  # the second of a's (and b's) steps: the grad the step adds to
                said.append(line(tab, ref[ask["name"]].grad - had))
            state = (
                tab.call("explorer", "answer", {"value": ref[ask["name"]].grad})
                if had
                else tab.call("explorer", "reveal", {})
            )
    assert said and all(s.startswith(("a already has grad", "b already has grad")) for s in said)


def test_hint_show_me_backward_pass_and_the_mode_off() -> None:
    ref = lecture()
    tab = predicting(LECTURE_L["program"])
    ask_for(tab, "c", ref)
    one = tab.call("explorer", "hint", {})["predict"]["ask"]["hint"]
    assert one == ["c.grad = c.grad + ∂d/∂c × d.grad"]
    two = tab.call("explorer", "hint", {})["predict"]["ask"]["hint"]
    assert two == [one[0], f"∂d/∂c = 1.0000; d.grad = {fmt(ref['d'].grad)}; c.grad so far = 0.0000"]
    state = tab.call("explorer", "reveal", {})  # Show me: the step at d is applied
    assert state["predict"]["ask"] is None and state["log"][-1]["lines"][1].startswith("c.grad")
    assert tab.call("explorer", "step", {})["predict"]["ask"]["name"] == "a"
    state = tab.call("explorer", "backward", {})
    assert state["phase"] == "done" and state["predict"]["ask"] is None
    # c shown; a asked and b not yet: both shown by Backward pass
    assert state["predict"]["score"] == "Right at the first try: 4 of 7 grads (3 shown)"
    state = tab.call("explorer", "reset", {})
    assert state["predict"]["score"] == "" and state["predict"]["on"]
    off = tab.call("explorer", "predict", {"on": False})
    assert not off["predict"]["on"]
    assert tab.call("explorer", "step", {})["log"]  # the mode off: a step writes at once
    with pytest.raises(ViewError, match="no grad is asked now"):
        tab.call("explorer", "answer", {"value": 1.0})
    with pytest.raises(ViewError, match="your answer must be a number, got 'x'"):
        predicting(LECTURE_L["program"]).call("explorer", "answer", {"value": "x"})
    with pytest.raises(ViewError, match="predict is true or false"):
        tab.call("explorer", "predict", {"on": "yes"})


def test_a_learners_own_value_their_backward_decides_what_is_right() -> None:
    V = learner(LECTURE_VALUE)["Value"]
    a, b, c, f = V(2.0, label="a"), V(-3.0, label="b"), V(10.0, label="c"), V(-2.0, label="f")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    tab = Tab()
    tab.explorer.show(L)
    tab.call("explorer", "predict", {"on": True})
    ref = lecture()
    ask_for(tab, "a", ref)
    assert line(tab, ref["b"].data) == "that is ∂e/∂a alone: the chain rule multiplies it by e.grad"
    # their _prev is a set: the product is written in its order
    assert line(tab, 2.0 * -2.0) in (
        "∂(a·b)/∂a is b, the other factor, not a itself",
        "∂(b·a)/∂a is b, the other factor, not a itself",
    )
    state = backprop_by_answers(tab, {k: v.grad for k, v in ref.items()})
    assert [x.grad for x in (a, b, c, f)] == [6.0, -4.0, -2.0, 4.0]  # their Values, their code
    assert state["predict"]["score"] == "Right at the first try: 6 of 7 grads"


def test_the_numbers_shown_give_a_right_answer() -> None:
    # tanh's local derivative 0.786448... is shown as 0.7864: its product with t.grad = 7, done
    # on the numbers shown (5.5048), is right, as is the exact grad; the box says so
    x, w = Value(0.5, label="x"), Value(7.0, label="w")
    t = x.tanh()
    t.label = "t"
    L = t * w
    L.label = "L"
    L.backward()
    ref = {"x": x, "w": w, "t": t, "L": L}
    tab = predicting("x = 0.5; w = 7.0\nt = tanh(x)\nL = t*w")
    state = ask_for(tab, "x", ref)
    assert "4-decimal numbers shown" in state["predict"]["tolerance"]
    tab.call("explorer", "hint", {})
    hint = tab.call("explorer", "hint", {})["predict"]["ask"]["hint"][1]
    found = re.fullmatch(r"∂t/∂x = 1 - t² = (\S+); t\.grad = (\S+); x\.grad so far = (\S+)", hint)
    assert found, hint
    local, out_grad, had = (float(g) for g in found.groups())
    by_hand = round(had + local * out_grad, 4)
    assert abs(by_hand - x.grad) > 5e-5 * abs(x.grad)  # the case: 4 decimals would refuse it
    state = tab.call("explorer", "answer", {"value": by_hand})
    assert state["predict"]["feedback"] == {
        "right": True,
        "text": f"Right: x.grad = {fmt(x.grad)}.",
    }
    assert (
        state["phase"] == "done"
        and state["predict"]["score"] == "Right at the first try: 4 of 4 grads"
    )
    # the exact grad, to 4 decimals, is right too; a number near neither is not
    for value, right in ((round(x.grad, 4), True), (round(x.grad, 4) + 1e-3, False)):
        tab = predicting("x = 0.5; w = 7.0\nt = tanh(x)\nL = t*w")
        ask_for(tab, "x", ref)
        assert (
            tab.call("explorer", "answer", {"value": value})["predict"]["feedback"]["right"]
            is right
        )


def test_with_the_hints_used_up_the_line_points_to_them() -> None:
    ref = lecture()
    tab = predicting(LECTURE_L["program"])
    ask_for(tab, "c", ref)
    assert line(tab, 17.0) == "not yet: try Hint"
    tab.call("explorer", "hint", {})
    assert line(tab, 17.0) == "not yet: try Hint"  # one hint left
    state = tab.call("explorer", "hint", {})
    assert len(state["predict"]["ask"]["hint"]) == 2  # Hint is used up (the page disables it)
    said = line(tab, 17.0)
    assert "try Hint" not in said and said == (
        "not yet: the hints above give both factors: ∂d/∂c × d.grad, plus c.grad so far"
    )
    tab = predicting(LECTURE_L["program"])  # the seed's hints, used up
    tab.call("explorer", "step", {})
    tab.call("explorer", "hint", {})
    tab.call("explorer", "hint", {})
    assert "try Hint" not in line(tab, 3.0)


def test_a_grad_from_another_path_the_lines_name_this_paths_term() -> None:
    # f = d*e with d = a*b, e = a + b (a = -2, b = 3): e's step gives a.grad -6 and b.grad -6;
    # d's step then adds b × d.grad = 3 to a (a.grad -3) and a × d.grad = -2 to b (b.grad -8)
    a, b = Value(-2.0, label="a"), Value(3.0, label="b")
    ref = {"a": a, "b": b, "d": a * b, "e": a + b}
    ref["d"].label, ref["e"].label = "d", "e"
    ref["f"] = ref["d"] * ref["e"]
    ref["f"].backward()
    tab = predicting(EXAMPLES[4]["program"])
    for _ in range(5):  # Show me up to d's step, where a is asked with e's share in its grad
        state = tab.call("explorer", "step", {})
        ask = state["predict"]["ask"]
        had = state["values"][ask["node"]]["grad"]
        if ask["name"] == "a" and had != 0:
            break
        tab.call("explorer", "reveal", {})
    term = a.grad - had
    assert (had, term) == (-6.0, 3.0) and ref["d"].grad == 1.0
    # this path's term with its sign flipped: -9; the total's size is not 9
    assert line(tab, had - term) == (
        "the size of this path's term is right but not its sign: "
        "look again at the signs of ∂d/∂a and d.grad"
    )
    assert not line(tab, -a.grad).startswith("the size")  # 3: not this path's term flipped
    # grad so far + d.grad, the local derivative left out: not "d.grad alone"
    assert line(tab, had + ref["d"].grad) == (
        "that is a.grad so far + d.grad: the chain rule "
        "multiplies d.grad by ∂d/∂a, the local derivative, "
        "before adding"
    )
    assert line(tab, ref["d"].grad).startswith("that is d.grad alone")
    state = tab.call("explorer", "answer", {"value": a.grad})
    assert state["predict"]["ask"]["name"] == "b"
    had = state["values"][state["predict"]["ask"]["node"]]["grad"]
    assert had == -6.0 and line(tab, had + ref["d"].grad).startswith(
        "that is b.grad so far + d.grad"
    )
    # no grad so far (a fresh child): the total's sign, as before
    tab = predicting(LECTURE_L["program"])
    ask_for(tab, "f", lecture())
    assert line(tab, -lecture()["f"].grad).startswith("the size is right but not the sign")


def test_the_score_counts_every_grad_shown() -> None:
    # Show me and Backward pass write grads never typed: each counts, as shown and not right
    tab = predicting(LECTURE_L["program"])
    tab.call("explorer", "step", {})
    state = tab.call("explorer", "reveal", {})  # L, shown
    assert state["predict"]["score"] == "Right at the first try: 0 of 1 grad (1 shown)"
    state = tab.call("explorer", "reveal", {})  # the step at L, not asked yet: d and f
    assert state["predict"]["score"] == "Right at the first try: 0 of 3 grads (3 shown)"
    tab.call("explorer", "step", {})
    state = tab.call("explorer", "answer", {"value": -2.0})  # e, right; c asked
    state = tab.call("explorer", "backward", {})  # c, then a and b
    filled = sum(v["grad"] != 0.0 for v in state["values"].values())
    assert (
        filled == 7
        and state["predict"]["score"] == "Right at the first try: 1 of 7 grads (6 shown)"
    )
    # the mode off, Backward pass counts nothing: turned on later, the score starts from there
    tab = Tab()
    tab.call("explorer", "load", {"program": LECTURE_L["program"]})
    tab.call("explorer", "backward", {})
    assert tab.call("explorer", "predict", {"on": True})["predict"]["score"] == ""


def test_an_edit_or_a_gradient_step_asks_the_grads_again() -> None:
    tab = predicting(LECTURE_L["program"])
    backprop_by_answers(tab, {k: v.grad for k, v in lecture().items()})
    names = {n["id"]: n["name"] for n in state_drawing(tab) if n["kind"] == "value"}
    ids = {name: i for i, name in names.items()}
    state = tab.call("explorer", "set", {"node": ids["a"], "value": 3.0})
    assert state["phase"] == "forward" and state["step"] == 0 and state["predict"]["on"]
    assert all(v["grad"] == 0.0 for v in state["values"].values())  # nothing shown yet
    assert state["predict"]["score"] == "" and "asks for each grad again" in state["note"]
    assert state["values"][ids["L"]]["data"] == (3.0 * -3.0 + 10.0) * -2.0
    state = tab.call("explorer", "step", {})
    assert state["predict"]["ask"]["label"] == "your L.grad"
    ref = {k: Value(x, label=k) for k, x in (("a", 3.0), ("b", -3.0), ("c", 10.0), ("f", -2.0))}
    ref["e"] = ref["a"] * ref["b"]
    ref["d"] = ref["e"] + ref["c"]
    ref["L"] = ref["d"] * ref["f"]
    ref["L"].backward()
    state = backprop_by_answers(tab, {k: v.grad for k, v in ref.items()})
    assert {names[i]: v["grad"] for i, v in state["values"].items()} == {
        k: v.grad for k, v in ref.items()
    }
    # a gradient step: the same, at the point it moves to
    state = tab.call("explorer", "descend", {"lr": 0.01})
    assert state["phase"] == "forward" and state["predict"]["ask"] is None
    assert all(v["grad"] == 0.0 for v in state["values"].values())
    assert "asks for each grad again" in state["note"]
    assert tab.call("explorer", "step", {})["predict"]["ask"]["label"] == "your L.grad"
    # the mode off, both passes run again, as before
    tab.call("explorer", "predict", {"on": False})
    state = tab.call("explorer", "set", {"node": ids["a"], "value": 2.0})
    assert state["phase"] == "done" and state["values"][ids["L"]]["grad"] == 1.0
    assert state["log"][0]["lines"][0] == "a = 2.0000: the forward and backward passes ran again"


# ------------------------------------------------------------------ in Chromium, on the page

VALUES = "(n) => document.querySelectorAll('#graph-svg g.node.value').length === n"


def test_predict_the_lectures_grads_on_the_page(
    page: Any, playground: str, screenshot: Any
) -> None:
    from tests.support.predict_browser import predict_a_plus_a, predict_lecture

    page.goto(playground)
    page.wait_for_selector("body[data-ready='1']")
    page.get_by_label("Examples").select_option(label=LECTURE_L["title"])
    page.wait_for_function(VALUES, arg=7)

    def shoot() -> None:
        path = screenshot(page, "predict-1280")
        if os.environ.get("MICROGRAD_UPDATE_DOCS"):
            shutil.copyfile(path, DOCS / "playground-predict.png")

    predict_lecture(page, page, shoot=shoot)
    page.get_by_label("Examples").select_option(label=A_PLUS_A["title"])
    page.wait_for_function(VALUES, arg=2)
    predict_a_plus_a(page)


def test_on_a_phone_the_box_is_in_view(phone: Any, playground: str, screenshot: Any) -> None:
    from playwright.sync_api import expect

    phone.goto(playground)
    phone.wait_for_selector("body[data-ready='1']")
    phone.get_by_label("Examples").select_option(label=LECTURE_L["title"])
    phone.wait_for_function(VALUES, arg=7)
    phone.get_by_label("Predict each grad").check()
    for _ in range(3):  # the seed, then L = d*f: d and f
        phone.get_by_role("button", name="Backward step", exact=True).click()
        box = phone.get_by_label(re.compile(r"^your \S+\.grad$"))
        expect(box).to_be_focused()
        name = phone.locator("#predict-label").text_content().split()[1][:-5]
        want = {"L": 1.0, "d": -2.0, "f": 4.0}[name]
        if name == "f":
            break
        box.fill(str(want))
        box.press("Enter")
        if name == "d":
            expect(phone.locator("#predict-label")).to_have_text("your f.grad")
            break
    phone.get_by_role("button", name="Hint", exact=True).click()
    expect(phone.locator("#predict-hints li")).to_have_count(1)
    # the box, its buttons and the node asked are all on the screen
    for el in (
        phone.get_by_label("your f.grad"),
        phone.get_by_role("button", name="Show me"),
        phone.locator("#predict-hints"),
    ):
        r = el.bounding_box()
        assert r and 0 <= r["y"] and r["y"] + r["height"] <= 844 and r["x"] + r["width"] <= 390, r
    node = phone.locator("g.node.asked[data-name='f']").bounding_box()
    bar = phone.locator("#pass-panel").bounding_box()
    assert node and 0 <= node["y"] and node["y"] + node["height"] <= bar["y"], (node, bar)
    screenshot(phone, "predict-390")
