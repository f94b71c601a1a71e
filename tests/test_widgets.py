"""The notebook widgets (`micrograd.widgets.explore`, `train`): the playground's own views in a
notebook cell, answered by the kernel through the widget's messages.

First without a browser (the kernel side: the messages a view sends, the answers and frames it
gets), then in Chromium driving a real JupyterLab with a real kernel: the cells run, the widgets
render, their buttons work, the grads they show equal `backward()`'s, and `train()` reaches 100%
on moons inside the cell."""

from __future__ import annotations

import pathlib
import re
import time
from typing import Any

import pytest

pytest.importorskip(
    "anywidget", reason="the widgets need anywidget (pip install -e . --group test)"
)

from micrograd.engine import Value  # noqa: E402
from micrograd.playground import Tab  # noqa: E402
from micrograd.viz.formatting import format_number as fmt  # noqa: E402
from micrograd.widgets import PlaygroundWidget, explore, train  # noqa: E402
from tests.conftest import SCREENSHOTS, watch_errors  # noqa: E402
from tests.support.corpus import LECTURE_VALUE, edit  # noqa: E402
from tests.support.jupyterlab import jupyterlab  # noqa: E402

LECTURE_L = """a = Value(2.0, label='a'); b = Value(-3.0, label='b')
c = Value(10.0, label='c'); f = Value(-2.0, label='f')
e = a*b; e.label = 'e'
d = e + c; d.label = 'd'
L = d*f; L.label = 'L'
"""
NEURON = """x1 = Value(2.0, label='x1'); x2 = Value(0.0, label='x2')
w1 = Value(-3.0, label='w1'); w2 = Value(1.0, label='w2')
b = Value(6.8813735870195432, label='b')
x1w1 = x1*w1; x1w1.label = 'x1*w1'
x2w2 = x2*w2; x2w2.label = 'x2*w2'
x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
n = x1w1x2w2 + b; n.label = 'n'
o = n.tanh(); o.label = 'o'
"""


def built(code: str) -> dict[str, Any]:
    """The names `code` defines, run here (an independent copy of what the notebook builds)."""
    names: dict[str, Any] = {"Value": Value}
    exec(code, names)
    return names


class Wire:
    """A widget's page, played by hand: what the view would send, and what comes back."""

    def __init__(self, widget: PlaygroundWidget) -> None:
        self.widget = widget
        self.sent: list[dict[str, Any]] = []
        widget.send = self.sent.append  # type: ignore[method-assign]
        self.next_id = 0

    def call(self, view: str, action: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.widget._on_message(
            self.widget,
            {"id": self.next_id, "view": view, "action": action, "body": body or {}},
            [],
        )
        reply = next(m for m in self.sent if m.get("id") == self.next_id)
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["answer"]

    def frames(self) -> list[dict[str, Any]]:
        return [m["frame"] for m in self.sent if "frame" in m]


# ------------------------------------------------------------------ the kernel's side


def test_explore_steps_through_the_notebooks_own_graph():
    names = built(LECTURE_L)
    wire = Wire(explore(names["L"]))
    state = wire.call("explorer", "state")
    by_name = {n["name"]: n["id"] for n in state["drawing"]["nodes"] if n["kind"] == "value"}
    assert set(by_name) == {"a", "b", "c", "f", "e", "d", "L"}
    state = wire.call("explorer", "backward")
    ref = built(LECTURE_L)
    ref["L"].backward()
    for name in "abcfedL":
        assert state["values"][by_name[name]]["grad"] == ref[name].grad, name
    assert names["a"].grad == 6.0  # the notebook's own Value: what the widget showed is there
    wire.call("explorer", "descend", {"lr": 0.01})  # every named leaf (a, b, c, f) moves
    assert names["a"].data == 2.0 - 0.01 * 6.0 and names["f"].data == -2.0 - 0.01 * 4.0


def test_a_refused_action_is_one_line_and_a_bad_argument_is_refused_early():
    wire = Wire(explore(built(LECTURE_L)["L"]))
    wire.widget._on_message(
        wire.widget,
        {"id": 99, "view": "explorer", "action": "set", "body": {"node": "v0", "value": 1}},
        [],
    )
    reply = wire.sent[-1]
    assert reply["id"] == 99 and "only a leaf" in reply["error"] and "\n" not in reply["error"]
    with pytest.raises(TypeError, match="expected a Value .*, got float"):
        explore(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="train: unknown Dataset 'moon'"):
        train(dataset="moon")


def test_explore_on_a_network_says_how_to_move_its_weights_and_how_big_a_graph_may_be():
    from micrograd import MLP

    model = MLP(3, [4, 4, 1])
    out = model([2.0, 3.0, -1.0])
    wire = Wire(explore(out))  # the network's weights are unnamed leaves: not parameters
    wire.widget._on_message(
        wire.widget, {"id": 1, "view": "explorer", "action": "descend", "body": {"lr": 0.01}}, []
    )
    assert wire.sent[-1]["error"] == (
        "this graph has no parameters to move: click a leaf and make it a parameter (or in the "
        "notebook, explore(out, params=model.parameters()))"
    )
    # named as the message says, the weights move, and only they
    before = [p.data for p in model.parameters()]
    model.zero_grad()
    out.backward()
    grads = [p.grad for p in model.parameters()]  # the step follows these
    wire = Wire(explore(out, params=model.parameters()))
    wire.widget._on_message(
        wire.widget, {"id": 2, "view": "explorer", "action": "descend", "body": {"lr": 0.01}}, []
    )
    assert "error" not in wire.sent[-1]
    assert [p.data for p in model.parameters()] == [b - 0.01 * g for b, g in zip(before, grads)]
    big = sum((Value(float(i)) for i in range(300)), Value(0.0))  # 600 nodes
    with pytest.raises(ValueError) as info:
        explore(big)
    assert str(info.value) == (
        "explore: the graph has more than 500 nodes; the explorer shows "
        "at most 500: explore a part of it (one neuron's output, say)"
    )


def test_train_widget_trains_on_the_kernels_thread_and_sends_frames():
    widget = train(dataset="xor", hidden=[4])
    wire = Wire(widget)
    wire.widget._on_message(widget, {"frames": True}, [])  # the view asks for frames
    assert wire.frames() and wire.frames()[0]["step"] == 0
    meta = wire.call("train", "state")["meta"]
    assert meta["settings"]["dataset"] == "xor" and meta["sizes"] == [2, 4, 1]
    wire.call("train", "control", {"action": "play"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(f["step"] > 10 for f in wire.frames()):
        time.sleep(0.02)
    assert any(f["step"] > 10 for f in wire.frames())  # frames came, unasked, as it trained
    wire.call("train", "control", {"action": "pause"})
    trainer = widget.tab.train.trainer
    widget.close()
    assert trainer.closed  # the widget gone, its run is over for good


# ------------------------------------------------------------------ in JupyterLab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: Any) -> Any:
    with jupyterlab(tmp_path_factory.mktemp("jupyterlab")) as running:
        yield running


def widget_grads(widget: Any) -> dict[str, float]:
    return widget.locator("g.node.value").evaluate_all(
        "els => Object.fromEntries(els.map(g => [g.dataset.name, Number(g.dataset.grad)]))"
    )


def test_explore_and_train_in_jupyterlab(lab: Any, browser: Any, screenshot: Any) -> None:
    name = lab.notebook(
        "widgets.ipynb",
        [
            "from micrograd.engine import Value\nfrom micrograd.widgets import explore, train",
            LECTURE_L + "explore(L)",
            NEURON + "explore(o, params=[w1, w2, b])",
            "train(dataset='moons')",
            # a learner's own Value whose * rule is wrong (other.grad uses other.data)
            edit(
                LECTURE_VALUE,
                ("other.grad += self.data * out.grad", "other.grad += other.data * out.grad"),
            )
            + "\n"
            + LECTURE_L
            + "explore(L)",
        ],
    )
    # reduced motion: numbers appear at once (the pictures are of the numbers, not a fade-in)
    context = browser.new_context(viewport={"width": 1280, "height": 1500}, reduced_motion="reduce")
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(lab.url) and not r.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    try:
        lab.open_and_run(page, name)
        widgets = page.locator(".micrograd-widget")
        # the kernel starts and runs five cells first: minutes on a loaded machine, not seconds
        lab.wait_for(
            page, "() => document.querySelectorAll('.micrograd-widget').length === 4", 300_000
        )
        lecture, neuron, trainer, own = (widgets.nth(i) for i in range(4))
        page.wait_for_function("""() => [...document.querySelectorAll('.micrograd-widget')]
                                  .every(w => w.dataset.ready === '1')""")

        # L = (a*b + c)*f: the grads the widget shows are backward()'s, to the last bit
        lecture.get_by_role("button", name="Backward pass").click()
        page.wait_for_function("""() => document.querySelector('.micrograd-widget').shadowRoot
                                  .querySelector('#status').textContent.includes('done')""")
        ref = built(LECTURE_L)
        ref["L"].backward()
        grads = widget_grads(lecture)
        assert grads == {k: ref[k].grad for k in "abcfedL"}, grads
        assert (grads["a"], grads["b"], grads["c"], grads["f"]) == (6.0, -4.0, -2.0, 4.0)
        SCREENSHOTS.mkdir(exist_ok=True)
        page.locator(".jp-Cell").nth(1).screenshot(path=str(SCREENSHOTS / "widget-lecture.png"))
        # a gradient step moves L as the page's explorer moves it, lr 0.01
        lecture.get_by_role("button", name="Gradient step").click()
        page_tab = Tab()
        page_tab.call(
            "explorer",
            "load",
            {"program": "a = 2.0; b = -3.0; c = 10.0\ne = a*b\nd = e + c\nf = -2.0\nL = d*f"},
        )
        expected = page_tab.call("explorer", "descend", {"lr": 0.01})["note"]
        status = lecture.locator("#status")
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('#status').textContent"
            ".startsWith('Gradient step 1')",
            arg=lecture.element_handle(),
        )
        assert status.text_content() == expected, (status.text_content(), expected)
        assert "-8.0000 to -8.7263" in expected
        # setting a leaf: both passes again, the numerical derivative beside its grad; and the
        # engine's own code under a step
        lecture.get_by_role("button", name=re.compile(r"^Edit a:")).click()
        lecture.get_by_label("Value of a").fill("3")
        lecture.get_by_role("button", name="Set", exact=True).click()
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('g[data-name=\"a\"]').dataset.data === '3'",
            arg=lecture.element_handle(),
        )
        b, c, f = (ref[k].data - 0.01 * ref[k].grad for k in "bcf")  # after the gradient step

        def L(a: float) -> float:
            return (a * b + c) * f

        nudge = lecture.locator("#nudge").text_content()
        assert "(L(a + h) - L(a)) / h" in nudge
        assert f"= {fmt((L(3.001) - L(3.0)) / 0.001)}" in nudge
        assert f"a.grad = {fmt(b * f)}" in nudge
        lecture.get_by_role("button", name="Reset").click()
        for _ in range(2):  # the seed, then L = d*f: its step carries the op's code
            lecture.get_by_role("button", name="Backward step").click()
        lecture.locator("#log li.latest summary").wait_for()
        code = lecture.locator("#log li.latest summary")
        assert code.text_content().startswith("the code: micrograd/engine.py, lines")
        code.click()
        assert "def __mul__" in lecture.locator("#log li.latest pre").text_content()

        # the neuron: x1 -1.5, w1 1.0, x2 0.5, w2 0.0 as backward() gives them
        neuron.get_by_role("button", name="Backward pass").click()
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('#status').textContent.includes('done')",
            arg=neuron.element_handle(),
        )
        ref = built(NEURON)
        ref["o"].backward()
        grads = widget_grads(neuron)
        for k in ("x1", "w1", "x2", "w2", "b", "n", "o"):
            assert grads[k] == ref[k].grad, k
        assert [round(grads[k], 12) for k in ("x1", "w1", "x2", "w2")] == [-1.5, 1.0, 0.5, 0.0]
        neuron.locator("g.node.leaf[data-name='w1']").scroll_into_view_if_needed()
        screenshot(page, "widget-explore")

        # the learner's own Value with a wrong * rule: both * nodes marked, with the numbers
        wrong = own.locator("g.node.op.wrong")
        assert wrong.count() == 2 and set(wrong.locator("text").all_text_contents()) == {"*"}
        assert "2 nodes marked red" in own.locator("#verdict").text_content()
        own.get_by_role("button", name="Backward pass").click()
        own.locator(".log .wrong-line").first.wait_for()
        said = " ".join(own.locator(".log .wrong-line").all_text_contents())
        assert "left f.grad at 4.0000: it should be 22.0000" in said, said
        own.scroll_into_view_if_needed()
        screenshot(page, "widget-own-value")

        # train(): Play in the cell, and moons reach 100%
        trainer.scroll_into_view_if_needed()
        trainer.get_by_role("button", name="Play").click()
        trainer.locator("#acc-text").filter(has_text="accuracy 100.0%").wait_for(timeout=120_000)
        trainer.get_by_role("button", name="Pause").click()
        trainer.get_by_role("button", name="Play").wait_for()
        screenshot(page, "widget-train")
        assert not outside, outside  # nothing from a CDN, nothing from anywhere else
    finally:
        context.close()
    assert not errors, errors


def test_after_a_kernel_restart_a_widget_says_so_in_one_line(
    lab: Any, browser: Any, screenshot: Any
) -> None:
    # The widgets of the kernel before stay on the page; what they send has nowhere to go (the
    # widget's model says "Cannot send"). Each says so once, above its view, and rests.
    name = lab.notebook(
        "restart.ipynb",
        [
            "from micrograd.engine import Value\nfrom micrograd.widgets import explore, train",
            LECTURE_L + "explore(L)",
            "train(dataset='moons')",
            # a backward() in a cell after explore(L): the widget's pass is still backward()'s
            "L.backward()",
        ],
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)
    try:
        lab.open_and_run(page, name)
        page.wait_for_function("""() => [...document.querySelectorAll('.micrograd-widget')]
                                  .filter(w => w.dataset.ready === '1').length === 2""")
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
        explorer, trainer = (page.locator(".micrograd-widget").nth(i) for i in range(2))
        explorer.get_by_role("button", name="Backward pass").click()
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('#status').textContent.includes('done')",
            arg=explorer.element_handle(),
        )
        ref = built(LECTURE_L)
        ref["L"].backward()  # once, from zero grads: not added onto the cell's backward()
        assert widget_grads(explorer) == {k: ref[k].grad for k in "abcfedL"}

        trainer.get_by_role("button", name="Play").click()  # playing when the kernel goes
        trainer.locator("#run-state").filter(has_text="playing").wait_for()
        page.get_by_role("menuitem", name="Kernel", exact=True).click()
        page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel…")).click()
        confirm = page.locator(".jp-Dialog button.jp-mod-accept")  # "Restart"
        assert confirm.text_content() == "Restart"
        confirm.click()
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
        explorer.get_by_role("button", name="Reset").click()
        want = re.compile(
            r"^this widget lost its kernel \(.+: restarted, or shut down\): run "
            r"its cell again$"
        )
        for widget in (explorer, trainer):  # the Train view finds out on its next keep-alive
            alert = widget.locator("p.boot.error[role=alert]")
            alert.wait_for(timeout=30_000)
            assert want.match(alert.text_content()), alert.text_content()
            assert widget.locator("main").evaluate("el => el.inert")
        # said once in each widget (Reset's own error line said it again), and the Train view
        # no longer reads "playing"
        for widget in (explorer, trainer):
            said = widget.evaluate("""w => [...w.shadowRoot.querySelectorAll('*')].filter(el =>
                el.children.length === 0 && !el.hidden && el.closest('[hidden]') === null &&
                el.textContent.includes('lost its kernel')).length""")
            assert said == 1, said
        assert trainer.locator("#run-state").text_content() == "stopped"
        explorer.scroll_into_view_if_needed()
        screenshot(page, "widget-kernel-lost")
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.slow
def test_widget_files_are_the_pages_own() -> None:
    # One front end: the widget's module is the pages' modules (every one the pages load but
    # page.js, which picks a page's transport), joined, each line as it is but its imports and the
    # `export` before a declaration; its markup the pages'.
    from micrograd import widgets

    static = pathlib.Path(widgets.__file__).parents[1] / "static"  # (micrograd/playground/)
    modules = sorted(
        p.relative_to(static).as_posix()
        for p in static.rglob("*.js")
        if p.name not in ("page.js", "worker.js")
    )
    assert {
        "common.js",
        "explorer/predict.js",
        "explorer/explorer.js",
        "train/train.js",
        "train/train-net.js",
        "widget.js",
    } <= set(modules)
    esm = PlaygroundWidget._esm
    for name in modules:
        text = (static / name).read_text()
        code = re.sub(r'^import \{[^}]*\} from "\.\.?/[\w./-]+";\n', "", text, flags=re.M)
        assert re.sub(r"^export (?!default)", "", code, flags=re.M) in esm, name
    assert not re.search(r"^\s*import\b", esm, re.M)  # one module: it imports nothing
    w = explore(built(LECTURE_L)["L"])
    assert w._page_html in (static / "index.html").read_text()
    assert (static / "explorer" / "explorer.css").read_text() in w._page_css


def test_predict_each_grad_in_jupyterlab(lab: Any, browser: Any, screenshot: Any) -> None:
    # explore(L, predict=True): the lecture's L backpropagated by typing each grad in the cell
    from tests.support.predict_browser import predict_a_plus_a, predict_lecture

    name = lab.notebook(
        "predict.ipynb",
        [
            "from micrograd.engine import Value\nfrom micrograd.widgets import explore",
            LECTURE_L + "explore(L, predict=True)",
            "a = Value(3.0, label='a'); b = a + a; b.label = 'b'\nexplore(b, predict=True)",
        ],
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)
    try:
        lab.open_and_run(page, name)
        page.wait_for_function("""() => [...document.querySelectorAll('.micrograd-widget')]
                                  .filter(w => w.dataset.ready === '1').length === 2""")
        lecture, twice = (page.locator(".micrograd-widget").nth(i) for i in range(2))

        def shoot() -> None:
            SCREENSHOTS.mkdir(exist_ok=True)
            page.locator(".jp-Cell").nth(1).screenshot(path=str(SCREENSHOTS / "widget-predict.png"))

        grads = predict_lecture(lecture, page, checkbox=False, shoot=shoot)
        assert (grads["a"], grads["b"], grads["c"], grads["f"]) == (6.0, -4.0, -2.0, 4.0)
        twice.scroll_into_view_if_needed()
        predict_a_plus_a(twice)
    finally:
        context.close()
    assert not errors, errors


def test_the_train_widget_fits_a_cell(lab: Any, browser: Any, screenshot: Any) -> None:
    # train() in a cell: at most 1,000 px tall by default (it was about 2,570), and the chosen
    # point's graph in a box whose scrollbar shows (it was clipped with none in view)
    name = lab.notebook(
        "fits.ipynb", ["from micrograd.widgets import train\ntrain(dataset='moons')"]
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)
    try:
        lab.open_and_run(page, name)
        page.wait_for_function("""() => [...document.querySelectorAll('.micrograd-widget')]
                                  .filter(w => w.dataset.ready === '1').length === 1""")
        widget = page.locator(".micrograd-widget")
        height = widget.evaluate("w => w.getBoundingClientRect().height")
        assert 300 < height <= 1000, height
        box = widget.locator(".graph-scroll")
        bars = box.evaluate("""el => ({vertical: el.offsetWidth - el.clientWidth,
                                       horizontal: el.offsetHeight - el.clientHeight,
                                       overflow: getComputedStyle(el).overflow})""")
        assert bars["overflow"] == "scroll" and bars["vertical"] > 0, bars
        widget.scroll_into_view_if_needed()
        page.locator(".jp-Cell").first.screenshot(path=str(SCREENSHOTS / "widget-train-fits.png"))
    finally:
        context.close()
    assert not errors, errors


def _luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_widgets_follow_jupyterlabs_light_and_dark_themes(
    lab: Any, browser: Any, screenshot: Any
) -> None:
    # In JupyterLab's dark theme the widgets were light cards whose unchecked checkboxes were
    # drawn dark: now the card follows the theme, and its controls the card's scheme.
    name = lab.notebook(
        "theme.ipynb",
        [
            "from micrograd.engine import Value\nfrom micrograd.widgets import explore",
            LECTURE_L + "explore(L)",
        ],
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)

    def theme(which: str) -> None:
        page.get_by_role("menuitem", name="Settings", exact=True).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^JupyterLab {which}$")).click()
        light = "true" if which == "Light" else "false"
        page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")

    def colours() -> dict[str, Any]:
        return widget.evaluate("""w => { const r = w.shadowRoot, panel = r.querySelector('.panel');
            const box = r.querySelector('#predict'), style = getComputedStyle(panel);
            return {dark: r.querySelector('.mg-root').classList.contains('dark'),
                    paper: style.backgroundColor, ink: style.color,
                    scheme: getComputedStyle(box).colorScheme,
                    record: getComputedStyle(r.querySelector('.record')).fill}; }""")

    try:
        lab.open_and_run(page, name)
        page.wait_for_function("""() => [...document.querySelectorAll('.micrograd-widget')]
                                  .filter(w => w.dataset.ready === '1').length === 1""")
        widget = page.locator(".micrograd-widget")
        light = colours()
        assert not light["dark"] and light["scheme"] == "light", light
        assert _luminance(light["paper"]) > 0.8 and _luminance(light["ink"]) < 0.3, light
        theme("Dark")
        page.wait_for_function(
            "(w) => w.shadowRoot.querySelector('.mg-root.dark')", arg=widget.element_handle()
        )
        dark = colours()
        assert dark["scheme"] == "dark", dark  # the checkbox drawn for a dark card
        assert _luminance(dark["paper"]) < 0.25 and _luminance(dark["ink"]) > 0.6, dark
        assert _luminance(dark["record"]) < 0.25, dark  # the graph's boxes too
        widget.scroll_into_view_if_needed()
        screenshot(page, "widget-dark")
        theme("Light")
        page.wait_for_function(
            "(w) => !w.shadowRoot.querySelector('.mg-root.dark')", arg=widget.element_handle()
        )
        assert colours() == light
    finally:
        context.close()
    assert not errors, errors
