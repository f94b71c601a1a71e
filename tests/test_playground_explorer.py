"""The backprop explorer in a real browser (Playwright on Debian's Chromium), found by role and
accessible name as a screen reader would: grads on the page against `backward()` (exactly) and
the lecture's numbers, the chain-rule line at each step, the nudge line against a finite
difference computed here, errors, the no-Graphviz layout, keyboard use, a phone's width.
Screenshots go to tests/screenshots/ (set MICROGRAD_UPDATE_DOCS=1 to refresh the README's)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
from typing import Any

import pytest

from micrograd.expr import parse_program
from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.viz import trace
from micrograd.viz.formatting import format_number
from tests.conftest import watch_errors

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
LECTURE_L = EXAMPLES[1]["program"]

BUTTONS = ("Forward pass", "Backward step", "Backward pass", "Reset")


fmt = format_number  # the one formatter (tests/test_formatting.py checks it and its JS mirror)


def ref(name: str) -> str:
    """How a chain-rule line writes a node: compound names in parentheses, '(x1*w1).grad'."""
    simple = re.fullmatch(r"[^\W\d]\w*|\d[\w.]*|[^\W\d]\w*\([^()]*\)", name)
    return name if simple else f"({name})"


def open_explorer(page: Any, url: str, query: str = "") -> None:
    page.goto(url + query)
    page.wait_for_selector("body[data-ready='1']")


def build(page: Any, program: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    error = page.locator("#program-error")
    before = error.text_content() if error.is_visible() else None
    page.get_by_label("Expression", exact=True).fill(program)
    page.get_by_role("button", name="Build graph").click()
    # the graph, or a new refusal: a refusal fails here with its words, not as a timeout
    n = len(trace(next(reversed(parse_program(program).values())))[0])
    try:
        page.wait_for_function(
            """([n, before]) => {
                const error = document.querySelector('#program-error');
                const drawn = document.querySelectorAll('#graph-svg g.node.value').length === n;
                return (drawn && error.hidden) || (!error.hidden && error.textContent !== before);
            }""",
            arg=[n, before],
        )
    except PlaywrightTimeout:  # what the page shows instead, for whoever reads the failure
        seen = page.evaluate(
            """() => ({nodes: document.querySelectorAll('#graph-svg g.node.value').length,
                expression: document.querySelector('#program').value.slice(0, 80),
                status: document.querySelector('#status').textContent,
                note: document.querySelector('#layout-note').textContent})"""
        )
        raise AssertionError(
            f"no graph of {n} values after Build graph; the page: {seen}"
        ) from None
    assert not error.is_visible(), error.text_content()


def page_nodes(page: Any) -> list[dict[str, str]]:
    """Every Value box on the page, in id order: id, name, exact grad, and the visible text."""
    nodes = page.eval_on_selector_all(
        "#graph-svg g.node.value",
        """els => els.map(g => ({
            id: g.dataset.id, name: g.dataset.name, grad: g.dataset.grad, data: g.dataset.data,
            dataText: g.querySelector('text.data').textContent,
            gradText: g.querySelector('text.grad').textContent,
            current: g.classList.contains('current')}))""",
    )
    return sorted(nodes, key=lambda n: int(n["id"][1:]))


def reference(program: str) -> list[Any]:
    """The program's Values after `backward()`, in the page's id order (`trace`'s)."""
    root = next(reversed(parse_program(program).values()))
    root.backward()
    return trace(root)[0]


def settle(page: Any) -> None:
    """Wait for the forward pass's fade-in to finish (before a screenshot)."""
    page.wait_for_function("() => document.getAnimations().every(a => a.playState === 'finished')")


def click(page: Any, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()


def latest_step(page: Any) -> list[str]:
    return page.locator("#log li.latest div").all_text_contents()


def wait_step(page: Any, step: int) -> None:
    page.wait_for_function("(k) => document.querySelectorAll('#log li').length === k", arg=step)


# --------------------------------------------------------------------------------------------


def test_the_page_has_its_controls_by_their_exact_names(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    for name in (*BUTTONS, "Build graph"):
        assert page.get_by_role("button", name=name, exact=True).is_visible(), name
    expression = page.get_by_label("Expression", exact=True)
    assert expression.is_visible() and "tanh(n)" in expression.input_value()
    examples = page.get_by_label("Examples", exact=True)
    titles = examples.locator("option").all_text_contents()
    for words in ("(a*b + c)*f", "neuron with tanh", "tanh built from exp", "a + a", "24.7041"):
        assert any(words in t for t in titles), words
    # The lecture's neuron is drawn: every labelled Value of it is a box, op nodes between.
    names = [n["name"] for n in page_nodes(page)]
    assert {"x1", "x2", "w1", "w2", "b", "x1w1", "x2w2", "x1w1x2w2", "n", "o"} <= set(names)
    assert page.get_by_role("group", name="Computation graph with 10 values").is_visible()
    captions = page.locator("#graph-svg g.node.op text").all_text_contents()
    assert sorted(captions) == ["*", "*", "+", "+", "tanh"]
    # relative, so the page works under any path prefix
    assert page.get_by_role("link", name="Train").get_attribute("href") == "train.html"
    screenshot(page, "explorer-start")


def test_lecture_L_step_by_step_with_the_lecture_numbers(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    page.get_by_label("Examples").select_option(label=EXAMPLES[1]["title"])
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 7"
    )
    before = {n["name"]: n for n in page_nodes(page)}
    assert before["a"]["dataText"] == "data 2.0000" and before["L"]["dataText"] == "data ?"
    click(page, "Forward pass")
    page.wait_for_function(
        "() => document.querySelector('#status').textContent.includes('Forward')"
    )
    after = {n["name"]: n["dataText"] for n in page_nodes(page)}
    assert after == {
        "a": "data 2.0000",
        "b": "data -3.0000",
        "c": "data 10.0000",
        "e": "data -6.0000",
        "d": "data 4.0000",
        "f": "data -2.0000",
        "L": "data -8.0000",
    }
    # The lecture's backward pass, one node at a time (numbers from the lecture and the issue):
    # each line its whole arithmetic, the grad the child had so far first.
    expected_steps = [
        ["L.grad = 1.0000"],
        [
            "d.grad = 0.0000 + (-2.0000) × 1.0000 = -2.0000   (∂L/∂d = f = -2.0000, L.grad = "
            "1.0000)",
            "f.grad = 0.0000 + 4.0000 × 1.0000 = 4.0000   (∂L/∂f = d = 4.0000, L.grad = 1.0000)",
        ],
        [
            "e.grad = 0.0000 + 1.0000 × (-2.0000) = -2.0000   (∂d/∂e = 1.0000, d.grad = -2.0000)",
            "c.grad = 0.0000 + 1.0000 × (-2.0000) = -2.0000   (∂d/∂c = 1.0000, d.grad = -2.0000)",
        ],
        [
            "a.grad = 0.0000 + (-3.0000) × (-2.0000) = 6.0000   (∂e/∂a = b = -3.0000, e.grad = "
            "-2.0000)",
            "b.grad = 0.0000 + 2.0000 × (-2.0000) = -4.0000   (∂e/∂b = a = 2.0000, e.grad = "
            "-2.0000)",
        ],
    ]
    processed = ["L", "L", "d", "e"]  # the seed, then one node per step
    for k, lines in enumerate(expected_steps, start=1):
        click(page, "Backward step")
        wait_step(page, k)
        shown = latest_step(page)
        assert len(shown) == len(lines)
        for got, want in zip(shown, lines):
            assert got.startswith(want), (got, want)
        highlighted = [n["name"] for n in page_nodes(page) if n["current"]]
        assert highlighted == [processed[k - 1]]
        if k == 4:
            settle(page)
            screenshot(page, "explorer-L-step4")
    grads = {n["name"]: n["gradText"] for n in page_nodes(page)}
    assert grads == {
        "a": "grad 6.0000",
        "b": "grad -4.0000",
        "c": "grad -2.0000",
        "e": "grad -2.0000",
        "d": "grad -2.0000",
        "f": "grad 4.0000",
        "L": "grad 1.0000",
    }
    assert page.get_by_role("button", name="Backward step").is_disabled()
    click(page, "Reset")
    page.wait_for_function("() => document.querySelectorAll('#log li').length === 0")
    assert {n["gradText"] for n in page_nodes(page)} == {"grad 0.0000"}
    assert page_nodes(page)[0]["dataText"] == "data ?"  # L is unknown until the forward pass


@pytest.mark.parametrize("example", [0, 2, 3, 4, 5], ids=lambda i: EXAMPLES[i]["title"][:24])
def test_every_step_and_every_grad_match_backward(page: Any, playground: str, example: int) -> None:
    program = EXAMPLES[example]["program"]
    refs = reference(program)  # an independent parse, run through Value.backward()
    open_explorer(page, playground)
    build(page, program)
    assert all(n["gradText"] == "grad 0.0000" for n in page_nodes(page))
    steps = None
    k = 0
    while True:
        click(page, "Backward step")  # the forward pass runs first if it has not
        k += 1
        wait_step(page, k)
        nodes = page_nodes(page)
        # The chain rule's promise: a node is processed only once its own grad is complete.
        (cur,) = [i for i, n in enumerate(nodes) if n["current"]]
        assert float(nodes[cur]["grad"]) == refs[cur].grad
        lines = latest_step(page)
        name = ref(nodes[cur]["name"])
        if k == 1:
            assert lines == [
                f"{name}.grad = 1.0000  (∂{name}/∂{name} = 1: the backward pass starts at the "
                f"output)"
            ]
        else:
            assert len(lines) == len(refs[cur]._prev)
            g = fmt(refs[cur].grad)
            for line, child in zip(lines, refs[cur]._prev):
                cname = ref(nodes[refs.index(child)]["name"])
                pattern = (
                    rf"{re.escape(cname)}\.grad = \S+ \+ \S+ × \(?{re.escape(g)}\)? = \S+   "
                    rf"\(∂{re.escape(name)}/∂{re.escape(cname)} = .*, {re.escape(name)}\.grad = "
                    rf"{re.escape(g)}\)"
                )
                assert re.fullmatch(pattern, line), line
            # a child used twice (a + a) is pushed to twice: its last line shows its value now
            last = {}
            for line, child in zip(lines, refs[cur]._prev):
                last[refs.index(child)] = line
            for i, line in last.items():
                after = line.split("   (")[0].rsplit(" = ", 1)[1]
                assert after == nodes[i]["gradText"].removeprefix("grad "), line
        status = page.locator("#status").text_content()
        if steps is None:
            steps = int(re.search(r"of (\d+)", status).group(1))
        if k == steps:
            break
    assert "Backward pass done" in page.locator("#status").text_content()
    nodes = page_nodes(page)
    assert [float(n["grad"]) for n in nodes] == [v.grad for v in refs]  # bit for bit
    assert [n["gradText"] for n in nodes] == [f"grad {fmt(v.grad)}" for v in refs]
    assert [n["dataText"] for n in nodes] == [f"data {fmt(v.data)}" for v in refs]
    if example == 5:  # the README's expression
        by_name = {n["name"]: n for n in nodes}
        assert by_name["a"]["gradText"] == "grad 138.8338"
        assert by_name["b"]["gradText"] == "grad 645.5773"
        assert nodes[0]["dataText"] == "data 24.7041"


def test_backward_pass_runs_the_rest_and_reset_starts_again(page: Any, playground: str) -> None:
    program = EXAMPLES[0]["program"]
    ref = reference(program)
    open_explorer(page, playground)
    click(page, "Forward pass")
    click(page, "Backward step")
    click(page, "Backward step")
    wait_step(page, 2)
    click(page, "Backward pass")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    assert [float(n["grad"]) for n in page_nodes(page)] == [v.grad for v in ref]
    click(page, "Reset")
    page.wait_for_function("() => document.querySelectorAll('#log li').length === 0")
    click(page, "Backward pass")  # twice is not wrong: grads start from 0 again after Reset
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    assert [float(n["grad"]) for n in page_nodes(page)] == [v.grad for v in ref]


def test_editing_a_leaf_recomputes_and_shows_the_nudge(
    page: Any, playground: str, screenshot: Any
) -> None:
    open_explorer(page, playground)
    build(page, LECTURE_L)
    click(page, "Backward pass")
    page.get_by_role("button", name=re.compile(r"^Edit a:")).click()
    value = page.get_by_label("Value of a")
    assert value.is_visible() and value.input_value() == "2"
    value.fill("3")
    page.get_by_role("button", name="Set", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#graph-svg g[data-name=\"a\"]').dataset.data === '3'"
    )

    def L(a: float) -> float:  # the lecture's L, written out here independently
        return (a * -3.0 + 10.0) * -2.0

    nodes = {n["name"]: n for n in page_nodes(page)}
    assert nodes["L"]["dataText"] == f"data {fmt(L(3.0))}"
    assert nodes["a"]["gradText"] == "grad 6.0000"  # dL/da = b*f, whatever a is
    nudge = page.locator("#nudge").text_content()
    slope = (L(3.0 + 0.001) - L(3.0)) / 0.001
    assert "(L(a + h) - L(a)) / h" in nudge
    assert f"= {fmt(slope)}" in nudge and "a.grad = 6.0000" in nudge
    screenshot(page, "explorer-nudge")
    # A bad value is refused next to the input; the graph keeps its numbers.
    value.fill("two")
    page.get_by_role("button", name="Set", exact=True).click()
    assert "must be a number" in page.locator("#leaf-error").text_content()
    # Arithmetic the engine refuses (log of a negative) comes back as a message, not a crash.
    build(page, "x = 2.0; y = log(x)")
    page.get_by_role("button", name=re.compile(r"^Edit x:")).click()
    page.get_by_label("Value of x").fill("-1")
    page.get_by_label("Value of x").press("Enter")
    error = page.locator("#leaf-error")
    error.wait_for(state="visible")
    assert "log" in error.text_content() and "positive" in error.text_content()


@pytest.mark.parametrize(
    "program, words",
    [
        ("a = 2.0; b = a.__class__", "attribute access"),
        ("import os", "import"),
        ("a = 2.0; b = open('x')", "calling open()"),
        ("a = 1.0; b = a / 0", "division by zero"),
        ("a = 2.0; b = c * a", "used before it is assigned"),
        ("a = (2.0", "syntax error"),
        ("   ", "empty"),
        ("a = 1.0\n" + "a = a + 1.0\n" * 700, "at most 8000"),
        ("a = 1.0\n" + "a = tanh(a + a)\n" * 300, "more than 500 nodes"),
    ],
)
def test_a_bad_expression_shows_its_error_next_to_the_input(
    page: Any, playground: str, screenshot: Any, program: str, words: str
) -> None:
    open_explorer(page, playground)
    count = len(page_nodes(page))
    page.get_by_label("Expression", exact=True).fill(program)
    page.get_by_role("button", name="Build graph").click()
    alert = page.get_by_role("alert").filter(has_text=words)
    alert.wait_for()
    assert "\n" not in alert.text_content().strip()
    assert len(page_nodes(page)) == count  # the previous graph stays
    if words == "attribute access":
        screenshot(page, "explorer-error")
    build(page, LECTURE_L)  # and the server is still there
    assert not page.locator("#program-error").is_visible()


def boxes_overlap(rects: list[dict[str, float]]) -> list[tuple[int, int]]:
    bad = []
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            b = rects[j]
            if (
                a["x"] < b["x"] + b["width"] - 0.5
                and b["x"] < a["x"] + a["width"] - 0.5
                and a["y"] < b["y"] + b["height"] - 0.5
                and b["y"] < a["y"] + a["height"] - 0.5
            ):
                bad.append((i, j))
    return bad


@pytest.mark.parametrize("layout", ["layered", "dot"])
def test_the_drawn_boxes_never_overlap(
    page: Any, playground: str, screenshot: Any, layout: str
) -> None:
    if layout == "dot" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    open_explorer(page, playground, f"?layout={layout}")
    note = page.locator("#layout-note").text_content()
    assert ("Graphviz" in note) == (layout == "dot")
    for example in EXAMPLES:
        build(page, example["program"])
        rects = page.eval_on_selector_all(
            "#graph-svg g.node",
            "els => els.map(g => { const r = g.getBoundingClientRect();"
            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })",
        )
        assert len(rects) > 1 and boxes_overlap(rects) == [], example["title"]
        if example is EXAMPLES[5]:
            screenshot(page, f"explorer-readme-{layout}")


def test_a_graph_answered_late_keeps_what_was_typed_meanwhile(page: Any, playground: str) -> None:
    """A graph whose answer comes late (Graphviz's layout can take a second) is drawn, but the
    Expression box keeps what was typed after Build graph, marked as changed: the late answer
    used to put its own program back, so the next Build graph built the old graph again."""
    open_explorer(page, playground)
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    page.route("**/api/explorer/load", hold)
    page.get_by_label("Expression", exact=True).fill(LECTURE_L)
    page.get_by_role("button", name="Build graph").click()
    while not held:
        page.wait_for_timeout(50)  # until the request is held
    typed = "a = 1.0\nb = a*a"
    page.get_by_label("Expression", exact=True).fill(typed)
    held[0].continue_()
    page.unroute("**/api/explorer/load")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 7"
    )  # the lecture's L, as built
    assert page.get_by_label("Expression", exact=True).input_value() == typed
    assert page.locator("#program-changed").is_visible()
    page.get_by_role("button", name="Build graph").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 2"
    )
    assert not page.locator("#program-changed").is_visible()


def test_keyboard_alone_drives_the_explorer(page: Any, playground: str) -> None:
    open_explorer(page, playground)
    page.get_by_label("Expression", exact=True).focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("a = 2.0; b = -3.0; c = a*b")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 3"
    )

    def focused() -> str:
        return page.evaluate(
            "() => { const e = document.activeElement;"
            " return e.getAttribute('aria-label') || e.textContent.trim(); }"
        )

    seen = []
    for _ in range(12):
        page.keyboard.press("Tab")
        seen.append(focused())
        if seen[-1] == "Forward pass":
            break
    assert seen[0] == "Build graph" and seen[-1] == "Forward pass", seen
    page.keyboard.press("Enter")
    # Forward pass is done and disabled: the focus went on to the next button, not to the page
    page.wait_for_function("() => document.querySelector('#forward').disabled")
    assert focused() == "Backward step"
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    assert focused() == "Backward pass"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    # The leaves are in the tab order too; Enter opens the editor with the value focused.
    for _ in range(20):
        page.keyboard.press("Tab")
        if focused().startswith("Edit a:"):
            break
    assert focused().startswith("Edit a:"), focused()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "leaf-value"
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#graph-svg g[data-name=\"c\"]').dataset.data === '-15'"
    )
    assert "(c(a + h) - c(a)) / h" in page.locator("#nudge").text_content()
    page.keyboard.press("Escape")
    assert page.evaluate("() => document.activeElement.dataset.name") == "a"


def test_usable_on_a_phone(browser: Any, playground: str, screenshot: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = context.new_page()
    errors = watch_errors(page)
    try:
        open_explorer(page, playground)
        # No sideways scrolling of the page itself: only the graph scrolls inside its frame.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        for name in (*BUTTONS, "Build graph"):
            box = page.get_by_role("button", name=name, exact=True).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 32
        page.get_by_role("button", name="Backward pass").tap()
        page.wait_for_function(
            "() => document.querySelector('#status').textContent.includes('done')"
        )
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        settle(page)
        screenshot(page, "explorer-phone", full_page=True)
        assert not errors, errors
    finally:
        context.close()


def test_readme_screenshot(page: Any, playground: str, screenshot: Any) -> None:
    """The README's picture: the lecture's neuron three steps into the backward pass, showing
    what the engine's backward() gives for the grads written so far, the node being processed
    lit, and the whole page width."""
    open_explorer(page, playground)
    program = page.get_by_label("Expression", exact=True).input_value()
    click(page, "Forward pass")
    for k in range(1, 4):
        click(page, "Backward step")
        wait_step(page, k)
    settle(page)
    shown = page_nodes(page)
    values = reference(program)
    assert len(shown) == len(values) == 10  # the page's nodes are the engine's, in one order
    # the seed (o), o's step (n's grad), n's step (its two children's): the lecture's 1 and 0.5
    written = {"o": 1.0, "n": 0.5, "x1w1x2w2": 0.5, "b": 0.5}
    for node, value in zip(shown, values):
        if node["name"] in written:
            assert value.grad == pytest.approx(written[node["name"]], abs=1e-15)
            assert node["gradText"] == f"grad {fmt(value.grad)}", node
            assert float(node["grad"]) == value.grad, node  # the exact number, bit for bit
    assert [n["name"] for n in shown if n["current"]] == ["n"]
    assert [line.split(" = ")[0] for line in latest_step(page)] == ["x1w1x2w2.grad", "b.grad"]
    path = screenshot(page, "explorer-readme")
    png = path.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
    assert (width, height) == (page.viewport_size["width"], page.viewport_size["height"])
    if os.environ.get("MICROGRAD_UPDATE_DOCS"):
        shutil.copyfile(path, DOCS / "playground-explorer.png")


def _contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""

    def lum(css: str) -> float:
        r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
        f = lambda c: c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4  # noqa: E731
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)

    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_faint_text_in_the_graph_still_meets_wcag_aa(page: Any, playground: str) -> None:
    # A zero grad and a not-yet-known data are shown fainter, but readable: 4.5:1 on every fill a
    # box can have (plain, hovered leaf, selected).
    open_explorer(page, playground)
    build(page, "a = 2.0; b = -3.0; c = a*b")
    colours = page.evaluate("""() => {
        const fill = (sel) => getComputedStyle(document.querySelector(sel)).fill;
        return {zero: fill('#graph-svg text.grad.zero'),
                unknown: fill('#graph-svg text.data.unknown'),
                record: fill('#graph-svg .record')};
    }""")
    for faint in (colours["zero"], colours["unknown"]):
        for bg in (colours["record"], "rgb(238, 244, 255)", "rgb(227, 237, 255)"):
            assert _contrast(faint, bg) >= 4.5, (faint, bg)


def test_a_backward_button_before_the_forward_pass_says_it_runs_it(
    page: Any, playground: str
) -> None:
    open_explorer(page, playground)
    build(page, "a = 2.0; b = a*3")
    assert "runs the forward pass first" in page.locator("#step").get_attribute("title")
    assert "a backward button runs it first" in page.locator("#status").text_content()
    click(page, "Forward pass")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('done')")
    assert "runs the forward pass first" not in page.locator("#step").get_attribute("title")
