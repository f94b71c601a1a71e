"""The explorer as a learner who has just watched the lecture uses it, in Chromium, at 1280×800 and
on a phone (390×844): the chain-rule lines on the page hold (the grad a child had is written out),
on a phone what a tap changed is in view above the bar of buttons, a leaf is switched between
parameter and data and a Gradient step moves the parameters only, the Train view's point whose loss
is 0 says why and opens the nearest point whose loss is not, numbers in the boxes are read as
written (1e400 is too large, 0x10 is refused), the keyboard's focus never drops to the page when a
button disables, and a step on a 460-value graph changes only the nodes it changed. The Train
view's small things: a weight's error goes with the network, the lecture's 3-D set shows its own 4
points."""

from __future__ import annotations

import json
import math
import re
import urllib.request
from typing import Any

from micrograd.playground import Tab
from micrograd.playground.explore.explorer import EXAMPLES
from tests.test_playground_explorer import (
    build,
    click,
    open_explorer,
    page_nodes,
    settle,
    wait_step,
)
from tests.test_playground_explorer_lines import check_lines, hinge_losses

NEURON = EXAMPLES[0]["program"]
TWICE = EXAMPLES[4]["program"]  # a used twice: d = a*b, e = a + b, f = d*e


def step_through(page: Any) -> list[str]:
    """Backward step until the pass is done; every line the log shows."""
    k = 0
    while not page.get_by_role("button", name="Backward step", exact=True).is_disabled():
        click(page, "Backward step")
        k += 1
        wait_step(page, k)
    return page.locator("#log li > div").all_text_contents()


def test_the_pages_chain_rule_lines_hold_and_are_the_views(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    tab = Tab()
    for example in (EXAMPLES[3], EXAMPLES[4], EXAMPLES[5]):  # each has a child used twice
        build(page, example["program"])
        lines = step_through(page)
        assert check_lines(lines) == len(lines) - 1
        tab.call("explorer", "load", {"program": example["program"]})
        view = tab.call("explorer", "backward")
        assert lines == [line for entry in view["log"] for line in entry["lines"]]
        if example is EXAMPLES[4]:
            assert (
                "a.grad = -6.0000 + 3.0000 × 1.0000 = -3.0000   (∂d/∂a = b = 3.0000, "
                "d.grad = 1.0000)" in lines
            )
            settle(page)
            screenshot(page, "explorer-used-twice")


# ------------------------------------------------------------------ a phone shows what changed

IN_VIEW = """([sel, barSel]) => {
  const el = typeof sel === 'string' ? document.querySelector(sel) : sel;
  const bar = document.querySelector(barSel).getBoundingClientRect();
  const frame = document.querySelector('#graph').getBoundingClientRect();
  let r = el.getBoundingClientRect();
  let top = r.top, bottom = r.bottom, left = r.left, right = r.right;
  if (document.querySelector('#graph').contains(el)) {  // what the graph's frame shows of it
    top = Math.max(top, frame.top); bottom = Math.min(bottom, frame.bottom);
    left = Math.max(left, frame.left); right = Math.min(right, frame.right);
  }
  return {shown: bottom - top, wide: right - left, top, bottom, barTop: bar.top,
          inView: top >= 0 && bottom <= bar.top + 0.5 && bottom - top > 8 && right - left > 8};
}"""


def in_view(page: Any, selector: str) -> dict[str, Any]:
    return page.evaluate(IN_VIEW, [selector, "#pass-panel"])


def test_on_a_phone_the_node_and_its_line_are_in_view_after_every_tap(
    phone: Any, playground: str, screenshot: Any
) -> None:
    page = phone
    open_explorer(page, playground)  # the lecture's neuron
    bar = page.locator("#pass-panel").bounding_box()
    assert bar["y"] + bar["height"] <= 844.5 and bar["y"] > 844 * 0.7  # a bar at the bottom
    for name in ("Forward pass", "Backward step", "Backward pass", "Reset"):
        box = page.get_by_role("button", name=name, exact=True).bounding_box()
        assert box["y"] >= bar["y"] and box["x"] + box["width"] <= 390 and box["height"] >= 32
    page.get_by_role("button", name="Forward pass").tap()
    page.wait_for_function(
        "() => document.querySelector('#status').textContent.startsWith('Forward pass done')"
    )
    settle(page)
    output = page.evaluate("() => document.querySelector('#graph-svg g.node.value').dataset.id")
    assert in_view(page, f"#graph-svg g[data-id='{output}']")["inView"]  # o got its data
    status = page.locator("#status").bounding_box()  # in the bar, under the buttons
    assert status["y"] >= bar["y"] and status["y"] + status["height"] <= 844
    screenshot(page, "phone-forward")
    for k in range(1, 5):
        page.get_by_role("button", name="Backward step", exact=True).tap()
        wait_step(page, k)
        current = in_view(page, "#graph-svg g.node.current")
        line = in_view(page, "#log li.latest")
        assert current["inView"], (k, current)
        assert line["top"] >= 0 and line["top"] + 16 <= line["barTop"], (k, line)  # its 1st line
        if k == 3:
            screenshot(page, "phone-step3")
    # A leaf tapped during the pass: it stays in view, with its editor and the nudge line
    page.locator("#graph-svg g.node.leaf[data-name='x2']").tap()
    page.locator("#nudge").wait_for()
    page.wait_for_function("() => document.querySelector('#nudge').textContent.includes('x2')")
    assert in_view(page, "#graph-svg g.node.leaf[data-name='x2']")["inView"]
    assert in_view(page, "#leaf-value")["inView"]
    screenshot(page, "phone-leaf-during-pass")
    # ... and Set keeps it there, with its nudge
    page.get_by_label("Value of x2").fill("0.5")
    page.get_by_role("button", name="Set", exact=True).tap()
    page.wait_for_function(
        "() => document.querySelector('#graph-svg g[data-name=\"x2\"]').dataset.data === '0.5'"
    )
    assert in_view(page, "#graph-svg g.node.leaf[data-name='x2']")["inView"]
    # nothing of the page is hidden under the bar for good: the page ends below it
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    last = page.locator("#descend-hint").bounding_box()
    assert last["y"] + last["height"] <= page.locator("#pass-panel").bounding_box()["y"]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


# ------------------------------------------------------------------ parameters and data


def tags(page: Any) -> dict[str, str]:
    return page.eval_on_selector_all(
        "#graph-svg g.node.leaf",
        "els => Object.fromEntries(els.map(g => [g.dataset.name,"
        " g.querySelector('text.role').textContent]))",
    )


def test_a_leaf_is_switched_on_the_page_and_a_gradient_step_moves_parameters_only(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)  # the lecture's neuron: w1, w2, b parameters; x1, x2 data
    assert tags(page) == {"x1": "data", "x2": "data", "w1": "param", "w2": "param", "b": "param"}
    page.get_by_role("button", name=re.compile(r"^Edit x1:.*data$")).click()
    switch = page.get_by_label("Parameter: a Gradient step moves it")
    assert not switch.is_checked()
    switch.check()
    box = page.get_by_label("Expression", exact=True)
    page.wait_for_function(
        "() => document.querySelector('#program').value.startsWith('x1: param = 2.0')"
    )
    assert tags(page)["x1"] == "param"
    assert "x1 is a parameter" in page.locator("#status").text_content()
    screenshot(page, "explorer-leaf-switch")
    page.get_by_role("button", name=re.compile(r"^Edit w2:")).click()
    page.get_by_label("Parameter: a Gradient step moves it").uncheck()
    page.wait_for_function("() => document.querySelector('#program').value.includes('w2: data')")
    before = {n["name"]: float(n["data"]) for n in page_nodes(page) if n["data"]}
    page.get_by_role("button", name="Gradient step", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#status').textContent.startsWith('Gradient step 1')"
    )
    after = {n["name"]: float(n["data"]) for n in page_nodes(page)}
    assert after["x2"] == before["x2"] and after["w2"] == before["w2"]  # data: never moved
    assert after["x1"] != before["x1"] and after["w1"] != before["w1"]
    head = page.locator("#log li div").first.text_content()
    assert "the parameters x1, w1, b move" in head and "the data x2, w2 stay" in head
    assert box.input_value().startswith("x1: param = ")
    screenshot(page, "explorer-gradient-step-params")


# ------------------------------------------------------------------ a point whose loss is 0


# the page's own transport (common.js is a module: imported here as the page imports it)
COMMON = "(await import('./static/common.js'))"


def session_post(page: Any, action: str, body: dict[str, Any]) -> Any:
    return page.evaluate(
        f"async ([a, b]) => {COMMON}.httpTransport().call('train', a, b)", [action, body]
    )


def test_a_point_whose_loss_is_0_says_why_and_opens_the_nearest_in_one_click(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    session_post(page, "config", {"hidden": [4], "dataset": "moons"})
    session_post(page, "control", {"action": "step", "steps": 300})
    points = session_post(page, "state", {})["meta"]["points"]
    model = session_post(page, "model", {})
    loss = hinge_losses(model, points)  # each point's loss, computed here
    zero = next(i for i, v in enumerate(loss) if v == 0.0)
    near = min(
        (i for i, v in enumerate(loss) if v != 0.0),
        key=lambda i: math.dist(points[i][:-1], points[zero][:-1]),
    )
    session_post(page, "pick", {"index": zero})
    page.evaluate(
        f"async () => sessionStorage.setItem({COMMON}.POINT_KEY, JSON.stringify("
        f"await {COMMON}.httpTransport().call('train', 'point', {{}})))"
    )
    page.goto(playground + "?from=train")
    page.wait_for_selector("body[data-ready='1']")
    notice = page.locator("#notice")
    assert notice.is_visible() and "past the margin" in notice.text_content()
    offer = page.get_by_role("button", name=f"Step through point {near} instead")
    assert offer.is_visible()
    screenshot(page, "explorer-zero-loss")
    offer.click()
    page.wait_for_function(
        "(k) => document.querySelector('#program').value"
        ".startsWith(`# the Train view's point ${k} `)",
        arg=near,
    )
    assert notice.is_hidden()
    click(page, "Backward pass")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    nodes = {n["name"]: n for n in page_nodes(page)}
    assert float(nodes["loss"]["data"]) == loss[near]
    assert any(float(n["grad"]) != 0 for name, n in nodes.items() if name.startswith("w"))


# ------------------------------------------------------------------ numbers, focus, speed


def test_numbers_in_the_boxes_are_read_as_written(page: Any, playground: str) -> None:
    open_explorer(page, playground)
    build(page, "a = 2.0; b = a*3")
    page.get_by_role("button", name=re.compile(r"^Edit a:")).click()
    value = page.get_by_label("Value of a")
    error = page.locator("#leaf-error")
    for typed, words in (
        ("1e400", "1e400 is too large"),
        ("0x10", "0x10 is a hexadecimal number (16 in decimal)"),
        ("0b11", "0b11 is a binary number (3 in decimal)"),
        ("Infinity", "must be a number"),
    ):
        value.fill(typed)
        value.press("Enter")
        page.wait_for_function(
            "(w) => document.querySelector('#leaf-error').textContent.includes(w)", arg=words
        )
        assert page.locator("#graph-svg g[data-name='a']").get_attribute("data-data") == "2"
    value.fill("16")
    value.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#graph-svg g[data-name=\"a\"]').dataset.data === '16'"
    )
    assert error.is_hidden()
    page.get_by_label("Step size (lr)").fill("0x1")
    page.get_by_role("button", name="Gradient step", exact=True).click()
    assert "hexadecimal" in page.locator("#descend-error").text_content()
    # the program: refused in one short line, the page's hint not repeated
    page.get_by_label("Expression", exact=True).fill("a = 0x10; b = a*2")
    page.get_by_role("button", name="Build graph").click()
    alert = page.locator("#program-error")
    alert.wait_for()
    assert "hexadecimal" in alert.text_content()
    page.get_by_label("Expression", exact=True).fill("a = 2.0; b = a.__class__")
    page.get_by_role("button", name="Build graph").click()
    page.wait_for_function(
        "() => document.querySelector('#program-error').textContent.includes('attribute access')"
    )
    lines = page.evaluate("""() => { const e = document.querySelector('#program-error');
        return e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight); }""")
    assert lines <= 2.6, lines  # was 7 lines, with the language's hint said twice
    assert page.locator("body").text_content().count("separated by") == 1


def test_the_keyboards_focus_never_drops_to_the_page(page: Any, playground: str) -> None:
    def focused() -> str:
        return page.evaluate(
            "() => { const e = document.activeElement;"
            " return e.getAttribute('aria-label') || e.textContent.trim(); }"
        )

    open_explorer(page, playground)
    page.get_by_role("button", name="Backward pass").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#backward').disabled")
    assert focused() == "Reset"  # Backward step and Backward pass are done: Reset is next
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('#backward').disabled")
    page.get_by_role("button", name="Forward pass").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#forward').disabled")
    assert focused() == "Backward step"

    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_role("button", name="Play").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#play').disabled")
    assert focused() == "Pause"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#pause').disabled")
    assert focused() == "Play"
    # Clear points, once they are cleared; a layer's + button, made again with the network
    page.locator("#plot").click(position={"x": 200, "y": 200})
    page.wait_for_function("() => !document.querySelector('#clear-points').disabled")
    page.get_by_role("button", name="Clear points").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#clear-points').disabled")
    assert focused() == "New data"
    page.get_by_role("button", name="More neurons in layer 1").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.trainView.meta().settings.hidden[0] === 9")
    assert focused() == "More neurons in layer 1"


def test_a_step_on_a_460_value_graph_changes_only_what_it_changed(
    page: Any, playground: str
) -> None:
    # The page patches the nodes whose numbers changed, not all 460 (which took 0.93 s a step)
    open_explorer(page, playground)
    settings = {"hidden": [16, 16], "features": ["x1", "x2", "x1sq", "x2sq", "x1x2"]}
    session_post(page, "config", settings)
    page.evaluate(
        f"async () => sessionStorage.setItem({COMMON}.POINT_KEY, JSON.stringify("
        f"await {COMMON}.httpTransport().call('train', 'point', {{}})))"
    )
    page.goto(playground + "?from=train")
    page.wait_for_selector("body[data-ready='1']")
    values = len(page_nodes(page))
    assert values >= 450
    click(page, "Forward pass")
    page.wait_for_function("() => document.querySelector('#forward').disabled")
    for k in range(1, 5):
        changed = page.evaluate(
            """async (k) => {
            const records = [];
            const obs = new MutationObserver((rs) => records.push(...rs));
            obs.observe(document.querySelector('#graph-svg'), {subtree: true, childList: true,
                        attributes: true, characterData: true});
            document.querySelector('#step').click();
            while (document.querySelectorAll('#log li').length < k) {
              await new Promise((r) => setTimeout(r, 10));
            }
            obs.disconnect();
            return {records: records.length,
                    touched: document.querySelectorAll('#graph-svg .touched').length};
        }""",
            k,
        )
        # a few records for each node that changed: the node, its op, its children, their edges
        assert changed["records"] <= 10 * (changed["touched"] + 2), changed
        assert changed["records"] < values, changed


# ------------------------------------------------------------------ the Train view's small things


def test_a_weights_error_goes_with_new_data(page: Any, playground: str) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    ends = page.eval_on_selector_all(
        "#net canvas:not(#net-links)",
        "els => els.slice(0, 3).map(c => { const r = c.getBoundingClientRect();"
        " return [r.right, r.top + r.height / 2, r.left]; })",
    )
    (x1, y1, _), _, (_, y2, x2) = ends
    page.mouse.click(x1 + 0.5 * (x2 - x1), y1 + 0.5 * (y2 - y1))
    weight = page.get_by_label("w (layer 1, neuron 1, input 1)")
    # The box is ready once Python's exact value of the link is in it (the answer to the click):
    # filled before, that answer replaced the learner's text (a red run on a loaded machine).
    page.wait_for_function("() => document.getElementById('weight-value').value !== ''")
    weight.fill("0x10")
    weight.press("Enter")
    error = page.locator("#weight-error")
    error.wait_for()
    assert "hexadecimal" in error.text_content()
    page.get_by_role("button", name="New data").click()
    error.wait_for(state="hidden")
    assert page.locator("#weight-form").is_hidden()


def test_the_lectures_set_shows_its_own_four_points(
    page: Any, playground: str, screenshot: Any
) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_label("Dataset").select_option("lecture")
    page.wait_for_function("() => window.trainView.meta().points.length === 4")
    points = page.get_by_label("Points", exact=True)
    noise = page.get_by_label("Noise", exact=True)
    assert (points.input_value(), noise.input_value()) == ("4", "0")
    assert points.is_disabled() and noise.is_disabled()
    assert page.get_by_role("button", name="New data").is_disabled()
    screenshot(page, "train-lecture-set")
    page.get_by_label("Dataset").select_option("moons")  # the settings' count comes back
    page.wait_for_function("() => window.trainView.meta().points.length === 100")
    assert (points.input_value(), noise.input_value()) == ("100", "0.1")
    assert points.is_enabled()


def test_the_model_file_of_the_point_route_is_json(playground: str) -> None:
    # the nearest point travels inside the Train view's point: the payload stays JSON
    req = urllib.request.Request(
        playground + "api/train/point",
        data=b"{}",
        headers={"Content-Type": "application/json", "X-Session": "learner-point-json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        payload = json.loads(r.read())
    assert set(payload) >= {"model", "x", "target", "loss", "names", "nearest"}
