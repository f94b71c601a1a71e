"""The explorer's lecture moves in a real browser: the Expression box and the Examples menu follow
a leaf edit (so Build graph keeps it), gradient steps by hand against the lecture's L worked out
here, each chain-rule line beside the engine's own code for its op, the Train view's chosen point
stepped through in the explorer, and on a phone the children that just got their grads scrolled
into view and the leaf editor on one row."""

from __future__ import annotations

import re
from typing import Any

from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.viz.formatting import format_number as fmt
from tests.test_playground_explorer import build, click, open_explorer, page_nodes, wait_step

LECTURE_L = EXAMPLES[1]["program"]
NEURON = EXAMPLES[0]["program"]


def L(a: float, b: float, c: float, f: float) -> float:
    return (a * b + c) * f


def test_the_box_and_the_menu_follow_a_leaf_edit(page: Any, playground: str) -> None:
    open_explorer(page, playground)
    menu = page.get_by_label("Examples", exact=True)
    menu.select_option(label=EXAMPLES[1]["title"])
    page.wait_for_function("() => document.querySelector('#graph-svg g[data-name=\"f\"]')")
    page.get_by_role("button", name=re.compile(r"^Edit b:")).click()
    page.get_by_label("Value of b").fill("-2.5")
    page.get_by_role("button", name="Set", exact=True).click()
    box = page.get_by_label("Expression", exact=True)
    page.wait_for_function("() => document.querySelector('#program').value.includes('b = -2.5')")
    assert box.input_value() == LECTURE_L.replace("b = -3.0", "b = -2.5")
    assert menu.input_value() == ""  # no longer that example: the menu says so
    # Build graph keeps the edit: the box is what the graph is.
    page.get_by_role("button", name="Build graph").click()
    click(page, "Forward pass")
    page.wait_for_function(
        "() => document.querySelector('#graph-svg g[data-name=\"L\"]').dataset.data !== ''"
    )
    nodes = {n["name"]: n for n in page_nodes(page)}
    assert float(nodes["b"]["data"]) == -2.5
    assert nodes["L"]["dataText"] == f"data {fmt(L(2.0, -2.5, 10.0, -2.0))}"
    # Typing the example's text back names it in the menu again; the box now differs from the
    # graph, and the page says so until Build graph.
    changed = page.locator("#program-changed")
    assert changed.is_hidden()
    box.fill(LECTURE_L)
    assert menu.input_value() == "1" and changed.is_visible()
    page.get_by_role("button", name="Build graph").click()
    changed.wait_for(state="hidden")


def test_gradient_steps_move_the_output_downhill(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    build(page, LECTURE_L)
    a, b, c, f, lr = 2.0, -3.0, 10.0, -2.0, 0.01
    page.get_by_label("Step size (lr)").fill(str(lr))
    for k in range(1, 4):
        before = L(a, b, c, f)
        # dL/da = b*f, dL/db = a*f, dL/dc = f, dL/df = a*b + c: the step, worked by hand
        a, b, c, f = a - lr * b * f, b - lr * a * f, c - lr * f, f - lr * (a * b + c)
        page.get_by_role("button", name="Gradient step", exact=True).click()
        page.wait_for_function(
            "(k) => document.querySelector('#status').textContent"
            ".startsWith(`Gradient step ${k}:`)",
            arg=k,
        )
        nodes = {n["name"]: n for n in page_nodes(page)}
        for name, want in {"a": a, "b": b, "c": c, "f": f, "L": L(a, b, c, f)}.items():
            assert abs(float(nodes[name]["data"]) - want) <= 1e-12 * max(1.0, abs(want)), name
        status = page.locator("#status").text_content()
        assert f"from {fmt(before)} to {fmt(L(a, b, c, f))}" in status
        assert L(a, b, c, f) < before
    assert f"a = {a!r}" in page.get_by_label("Expression", exact=True).input_value()
    lines = page.locator("#log li div").all_text_contents()
    assert lines[0].startswith("Gradient step 3 (lr = 0.01)") and lines[-1].startswith("L: ")
    screenshot(page, "explorer-gradient-step")
    page.get_by_label("Step size (lr)").fill("fast")
    page.get_by_role("button", name="Gradient step", exact=True).click()
    assert "step size" in page.locator("#descend-error").text_content()


def test_each_step_shows_the_engines_code_for_its_op(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)  # the lecture's neuron: o = tanh(n)
    click(page, "Backward step")
    click(page, "Backward step")
    wait_step(page, 2)
    latest = page.locator("#log li.latest")
    assert latest.locator("div").first.text_content().startswith("n.grad = 0.0000 + ")
    summary = latest.locator("summary")
    assert re.fullmatch(r"the code: micrograd/engine\.py, lines \d+–\d+", summary.text_content())
    summary.click()
    code = latest.locator("pre").text_content()
    assert '"tanh"' in code and "def tanh(self)" in code and "1.0 - t * t" in code
    screenshot(page, "explorer-code")


def test_the_train_views_point_steps_through_in_the_explorer(
    page: Any, playground: str, screenshot: Any
) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_role("link", name="Step through this point's graph in the explorer").click()
    # The Train page is itself data-ready: wait for the explorer's address first, then its page.
    page.wait_for_url(re.compile(r"/\?from=train$"))
    page.wait_for_selector("body[data-ready='1']")
    assert (
        page.get_by_label("Expression", exact=True)
        .input_value()
        .startswith("# the Train view's point 0")
    )
    names = {n["name"] for n in page_nodes(page)}
    assert {"x1", "x2", "w1.1.1", "a1.1", "h1.1", "s", "loss"} <= names
    click(page, "Backward pass")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    lines = page.locator("#log li div").all_text_contents()
    assert any(
        line.startswith("w1.1.1.grad = 0.0000 + ") and "(∂a1.1/∂w1.1.1 = x1 = " in line
        for line in lines
    )
    screenshot(page, "explorer-train-point")


def test_on_a_phone_the_children_that_got_grads_are_in_view(
    phone: Any, playground: str, screenshot: Any
) -> None:
    page = phone
    open_explorer(page, playground)  # the lecture's neuron: wider than the phone
    steps = page.evaluate("() => document.querySelectorAll('#graph-svg g.node.value').length")
    for k in range(1, steps):
        page.get_by_role("button", name="Backward step", exact=True).tap()
        wait_step(page, k)
        if "done" in page.locator("#status").text_content():
            break
        seen = page.evaluate("""() => {
            const box = document.querySelector('#graph').getBoundingClientRect();
            const inside = (el) => { const r = el.getBoundingClientRect();
              return r.left >= box.left - 1 && r.right <= box.right + 1; };
            const cur = document.querySelector('#graph-svg g.node.current');
            const kids = [...document.querySelectorAll('#graph-svg g.node.touched')];
            const c = cur.getBoundingClientRect();
            const span = (el) => { const r = el.getBoundingClientRect();
              return Math.max(r.right, c.right) - Math.min(r.left, c.left); };
            return {current: inside(cur), kids: kids.map(inside), widths: kids.map(span),
                    room: box.width - 48};
        }""")
        assert seen["current"], k
        for fits, width in zip(seen["kids"], seen["widths"]):
            if width <= seen["room"] and len(seen["kids"]) == 1:
                assert fits, (k, seen)
        if seen["kids"] and min(seen["widths"]) <= seen["room"]:
            assert any(seen["kids"]), (k, seen)  # at least one child beside its parent
    # The leaf editor on one row: its input, Set and ×.
    page.locator("#graph-svg g.node.leaf").first.tap()
    controls = ("#leaf-value", "#leaf-set", "#leaf-close")
    boxes = [page.locator(sel).bounding_box() for sel in controls]
    centers = {round(b["y"] + b["height"] / 2) for b in boxes}
    assert max(centers) - min(centers) <= 2, boxes
    assert all(b["x"] + b["width"] <= 390 for b in boxes)
    screenshot(page, "explorer-phone-leaf", full_page=True)
