"""The static site in Chromium: `micrograd site` builds it once for the session, ``python -m
http.server`` serves it from the folder above, and every page is opened at /s/ with each request
outside /s/ aborted (so nothing may come from a CDN, a registry, or the root of the host). The
explorer's numbers are checked against CPython's `backward()`, the Train view against CPython's
own run of the same settings, and no request goes to a server's /api/."""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from micrograd.expr import parse_program
from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.playground.views import Tab
from micrograd.viz import trace
from micrograd.viz.formatting import format_number as fmt

from .conftest import _unavailable, watch_errors
from .support.serving import served

START_MS = 180_000  # Python's start in a browser: seconds; minutes on a loaded machine
NEURON, LECTURE_L = EXAMPLES[0], EXAMPLES[1]
assert "neuron" in NEURON["title"] and "(a*b + c)*f" in LECTURE_L["title"]


@pytest.fixture(scope="session")
def site_folder(built_site: tuple[pathlib.Path, dict[str, Any]]) -> pathlib.Path:
    """The site, built by the command as a user runs it, into www/s (once for the session:
    conftest's `built_site`)."""
    root, did = built_site
    if did["status"] != 0 and "npm is needed" in did["err"]:
        _unavailable(did["err"].strip() + " (scripts/ensure-npm installs it)")
    assert did["status"] == 0, did["out"] + did["err"]
    said = did["out"]
    assert re.search(
        r"^wrote \d+ files, \d+\.\d MB, to .* \(Pyodide (from the cache|fetched "
        r"from the npm registry)\)$",
        said,
        re.M,
    ), said
    return root / "s"


@pytest.fixture(scope="session")
def site_url(site_folder: pathlib.Path) -> Iterator[str]:
    """The site served at http://127.0.0.1:PORT/s/."""
    with served(site_folder.parent) as url:
        yield f"{url}s/"


class Visit:
    """A fresh browser context (own cache and storage) that aborts every request outside the
    site and remembers every request made."""

    def __init__(self, browser: Any, base: str, **context: Any) -> None:
        self.base = base
        self.context = browser.new_context(**context)
        self.context.set_default_timeout(20_000)
        self.requests: list[str] = []
        self.aborted: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.errors = watch_errors(self.page)

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(self.base):
            route.continue_()
        else:
            self.aborted.append(url)
            route.abort()

    def open(self, path: str = "") -> Any:
        self.page.goto(self.base + path)
        return self.page

    def ready(self) -> None:
        """Wait for Python to start and the view to draw its first answer."""
        self.page.wait_for_selector("body[data-ready='1']", timeout=START_MS)
        assert self.page.locator("#boot").is_hidden()

    def close(self) -> None:
        self.context.close()
        assert not self.errors, f"JavaScript errors on the page: {self.errors}"
        assert not self.aborted, f"requests outside the site: {self.aborted}"
        assert not [u for u in self.requests if "/api/" in u], "a request to a server's /api/"
        assert self.requests and all(u.startswith(self.base) for u in self.requests)


@pytest.fixture
def visit(browser: Any, site_url: str) -> Iterator[Visit]:
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    yield v
    v.close()


def value_nodes(page: Any) -> list[dict[str, str]]:
    """Every Value box of the explorer's graph in id order: name, exact data and grad (the
    numbers the worker sent), and the text shown."""
    nodes = page.eval_on_selector_all(
        "#graph-svg g.node.value",
        """els => els.map(g => ({id: g.dataset.id, name: g.dataset.name, grad: g.dataset.grad,
            data: g.dataset.data, gradText: g.querySelector('text.grad').textContent,
            dataText: g.querySelector('text.data').textContent}))""",
    )
    return sorted(nodes, key=lambda n: int(n["id"][1:]))


def cpython_backward(program: str) -> list[Any]:
    """The program's Values after CPython's `backward()`, in the page's id order."""
    root = next(reversed(parse_program(program).values()))
    root.backward()
    return trace(root)[0]


def settle(page: Any) -> None:
    """Wait for the forward pass's fade-in to finish (before a screenshot)."""
    page.wait_for_function("() => document.getAnimations().every(a => a.playState === 'finished')")


def choose_and_backprop(page: Any, example: dict[str, str], n: int) -> list[dict[str, str]]:
    page.get_by_label("Examples").select_option(label=example["title"])
    page.wait_for_function(
        "(n) => document.querySelectorAll('#graph-svg g.node.value').length === n", arg=n
    )
    page.get_by_role("button", name="Backward pass", exact=True).click()
    page.wait_for_function(
        "() => /Backward pass done/.test(document.querySelector('#status').textContent)"
    )
    return value_nodes(page)


# --------------------------------------------------------------------------------------------


def test_the_explorer_runs_micrograd_in_the_browser_with_cpythons_numbers(
    visit: Visit, screenshot: Any
) -> None:
    page = visit.open()
    # While Python starts (seconds), the page says so.
    page.wait_for_function("() => /Python/.test(document.querySelector('#boot').textContent)")
    assert page.locator("#boot").is_visible()
    visit.ready()

    # The lecture's L = (a*b + c)*f: + and * only, so every digit is CPython's.
    nodes = choose_and_backprop(page, LECTURE_L, 7)
    refs = cpython_backward(LECTURE_L["program"])
    assert [float(n["grad"]) for n in nodes] == [v.grad for v in refs]
    assert [float(n["data"]) for n in nodes] == [v.data for v in refs]
    shown = {n["name"]: n["gradText"] for n in nodes}
    assert [shown[k] for k in "abcf"] == [
        "grad 6.0000",
        "grad -4.0000",
        "grad -2.0000",
        "grad 4.0000",
    ]
    settle(page)
    screenshot(page, "site-explorer-L")

    # Gradient step: the same step CPython's explorer takes, the output lower (L from -8).
    page.get_by_role("button", name="Gradient step").click()
    page.wait_for_function(
        "() => /-8\\.0000/.test(document.querySelector('#graph-svg').textContent) === false"
    )
    tab = Tab(jit=False)
    tab.call("explorer", "load", {"program": LECTURE_L["program"]})
    tab.call("explorer", "backward", {})
    want = tab.call("explorer", "descend", {"lr": 0.01})["values"]
    stepped = value_nodes(page)
    assert [float(n["data"]) for n in stepped] == [want[n["id"]]["data"] for n in stepped]
    assert float(stepped[0]["data"]) < -8.0  # the output went down

    # The lecture's neuron: the engine's tanh is correctly rounded with + - × ÷ alone (not the C
    # library's, whose last bit differs between the browser's musl and glibc), so every grad
    # and every data is CPython's to the last bit.
    nodes = choose_and_backprop(page, NEURON, 10)
    refs = cpython_backward(NEURON["program"])
    for n, v in zip(nodes, refs):
        assert float(n["grad"]) == v.grad and float(n["data"]) == v.data, n
        assert n["gradText"] == f"grad {fmt(v.grad)}" and n["dataText"] == f"data {fmt(v.data)}"
    shown = {n["name"]: n["gradText"] for n in nodes}
    grads = [shown[k] for k in ("x1", "w1", "x2", "w2")]
    assert grads == ["grad -1.5000", "grad 1.0000", "grad 0.5000", "grad 0.0000"]
    settle(page)
    screenshot(page, "site-explorer-neuron")


def test_the_train_view_reaches_100_percent_on_moons_in_the_browser(
    visit: Visit, screenshot: Any
) -> None:
    page = visit.open("train.html?dataset=moons")
    visit.ready()
    assert page.evaluate("() => window.trainView.meta().engine") == "javascript"
    assert page.locator("#engine").text_content() == "engine: micrograd.jit (JavaScript)"
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.frame().accuracy === 1", timeout=START_MS)
    page.get_by_role("button", name="Pause").click()
    page.wait_for_function("() => window.trainView.frame().playing === false")
    assert page.locator("#acc-text").text_content() == "accuracy 100.0%"
    screenshot(page, "site-train-moons")


# (hidden, optimizer): the default network and the largest, with each optimizer. Six layers of
# 32 carry a difference in the last bit on (Adam divides each gradient by its own size, and a few
# are ~1e-8, sums of larger terms that cancel): when numpy multiplied matrices with BLAS (its own
# fused, blocked order), Adam's losses were 3e-5 apart by step 71.
RUNS = [((8, 8), "sgd"), ((8, 8), "adam"), ((32,) * 6, "sgd"), ((32,) * 6, "adam")]


@pytest.mark.parametrize("hidden, optimizer", RUNS, ids=[f"{len(h)}x{h[0]}-{o}" for h, o in RUNS])
def test_the_first_200_losses_of_moons_are_numpys_jit(
    visit: Visit, hidden: tuple, optimizer: str
) -> None:
    """The page's moons, 200 steps of Step in the browser (micrograd.jit's JavaScript target in
    the worker) against the same steps in CPython with numpy's jit: each step's loss, every
    digit the frame sends, to 1e-12 (relative), and each step's accuracy, from the same points.
    Both targets add every sum in one order (jit_graph: how every sum adds), so even the largest
    network, whose steps carry any difference in the last bit on, stays with numpy's."""
    from micrograd.playground.training.train_data import featurize
    from micrograd.playground.training.train_settings import Settings
    from micrograd.playground.training.trainer import Trainer

    query = f"hidden={','.join(map(str, hidden))}&optimizer={optimizer}"
    page = visit.open(f"train.html?{query}")
    visit.ready()
    ref = Trainer(Settings(hidden=hidden, optimizer=optimizer), use_jit="numpy")
    # the points as the browser made them, every digit (its sin and cos are musl's, not glibc's:
    # the last bit may differ, and 200 steps of a deep network carry that on)
    meta = page.evaluate("async () => (await window.trainView.call('state')).meta")
    assert [p[2] for p in meta["points"]] == list(ref.mlp.labels)
    ref.mlp.X = [p[:2] for p in meta["points"]]
    ref.mlp.inputs = featurize(ref.settings, ref.mlp.X)
    ref.mlp.engine.data_changed()
    step = (
        "async (n) => (await window.trainView.call('control', {action: 'step', steps: n}))"
        ".frame.loss_exact"
    )
    # ten steps a call (each call's answer is a frame, and the frames, not the steps, cost): the
    # tenth's loss to every digit, and each step's as the curve holds it (6 digits, exactly)
    for _ in range(20):
        for _ in range(10):
            ref.step()
        loss = page.evaluate(step, 10)
        assert math.isclose(float(loss), ref.loss, rel_tol=1e-12), (ref.step_no, loss, ref.loss)
    # (the curve comes with the frames the worker posts: the last may still be on its way)
    page.wait_for_function("() => window.trainView.history().length >= 200")
    history = page.evaluate("() => window.trainView.history()")
    assert [row[0] for row in history] == list(range(200))
    assert [row[1:] for row in history] == [list(row[1:]) for row in ref.history]


@pytest.mark.parametrize("hidden", [(8, 8), (32,) * 6], ids=["default", "6x32"])
def test_the_default_network_and_the_largest_train_live_and_pause(
    visit: Visit, hidden: tuple
) -> None:
    page = visit.open(f"train.html?hidden={','.join(map(str, hidden))}")
    visit.ready()
    assert page.locator("#size-note").is_hidden()  # no "not live" note at any size
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.frame().step > 50", timeout=START_MS)
    page.get_by_role("button", name="Pause").click()
    page.wait_for_function("() => window.trainView.frame().playing === false")
    stopped = page.evaluate("() => window.trainView.frame().step")
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.trainView.frame().step") == stopped


def _floats(tree: Any) -> list[float]:
    if isinstance(tree, list):
        return [x for item in tree for x in _floats(item)]
    if isinstance(tree, dict):
        return [x for item in tree.values() for x in _floats(item)]
    return [tree] if isinstance(tree, float) else []


def test_on_a_phone(browser: Any, site_url: str, screenshot: Any) -> None:
    v = Visit(browser, site_url, viewport={"width": 390, "height": 844}, has_touch=True)
    try:
        page = v.open()
        v.ready()
        page.get_by_role("button", name="Backward pass", exact=True).click()
        page.wait_for_function(
            "() => /Backward pass done/.test(document.querySelector('#status').textContent)"
        )
        settle(page)
        screenshot(page, "site-explorer-phone")
        page.get_by_role("link", name="Train").click()  # the same worker's page, next door
        page.wait_for_url(site_url + "train.html**")  # the explorer was data-ready too
        v.ready()
        screenshot(page, "site-train-phone")
    finally:
        v.close()


@pytest.mark.parametrize("missing", ["WebAssembly", "Worker"])
def test_a_browser_without_webassembly_or_workers_gets_one_clear_line(
    browser: Any, site_url: str, missing: str
) -> None:
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    try:
        v.context.add_init_script(f"delete globalThis.{missing};")
        page = v.open()
        boot = page.get_by_role("alert").filter(has_text="WebAssembly")
        boot.wait_for()
        assert boot.text_content() == (
            "this page runs micrograd in your browser and needs WebAssembly and Web Workers, "
            "which this browser does not offer: try a current Firefox, Chrome, Edge or Safari"
        )
    finally:
        v.close()


def test_a_file_missing_from_the_site_is_one_line_on_the_page(browser: Any, site_url: str) -> None:
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    errors = v.errors  # the wheel answers 404 (the handler added last is asked first)
    v.context.route("**/*.whl", lambda route: route.fulfill(status=404, body="gone"))
    try:
        page = v.open()
        line = page.locator("#boot")
        page.wait_for_function(
            "() => document.querySelector('#boot').classList.contains('error')", timeout=START_MS
        )
        text = line.text_content()
        want = (
            r"micrograd could not start in this browser: wheels/micrograd_plus-[\d.]+-py3-"
            r"none-any\.whl could not be loaded \(HTTP 404\)"
        )
        assert re.fullmatch(want, text), text
        assert line.get_attribute("role") == "alert" and line.is_visible()
        # the browser's own note of the 404 is expected; nothing else
        assert all("status of 404" in e for e in errors), errors
        errors.clear()
    finally:
        v.close()


def test_while_python_starts_the_page_is_inert_and_counts_the_seconds(
    browser: Any, site_url: str
) -> None:
    # What a learner types or presses before Python is ready would be lost: the page takes none
    # of it, and the step under way counts its seconds (a first visit on a slow network takes
    # many). The wheel's answer is held back until the test has looked.
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    held: list[Any] = []
    # a page's handler is asked before the context's
    v.page.route("**/*.whl", lambda route: held.append(route))
    try:
        page = v.open()
        page.wait_for_function(
            "() => /Installing micrograd/.test(document.querySelector('#boot').textContent)",
            timeout=START_MS,
        )
        assert page.locator("main").evaluate("el => el.inert")
        page.wait_for_function(
            "() => /\\d+ s$/.test(document.querySelector('#boot .elapsed').textContent)"
        )
        # the seconds are not announced: a screen reader hears each step once
        assert page.locator("#boot .elapsed").get_attribute("aria-hidden") == "true"
        assert held, "the wheel was not asked for"
        held[0].continue_()
        v.ready()
        assert not page.locator("main").evaluate("el => el.inert")
        assert page.get_by_label("Expression", exact=True).input_value() == NEURON["program"]
    finally:
        v.close()


def test_an_expression_too_deep_for_the_browsers_stack_is_one_line_and_python_lives_on(
    visit: Visit,
) -> None:
    # Python's parser recurses per operator and per bracket; in a browser its stack is the
    # JavaScript engine's, and a crash there is fatal to Python (Chromium: about 830 terms or 190
    # brackets). micrograd.expr measures a statement first: each of these is a line of its own.
    page = visit.open()
    visit.ready()
    expression = page.get_by_label("Expression", exact=True)
    error = page.locator("#program-error")
    # keywords nest as operators do, and so do chained calls and subscripts (900 `not`, 1,600
    # `[0]` and 2,400 `()` each stopped Python before they were measured)
    deep = [
        "x = 1.0\na = " + "+".join(["x"] * 1200),
        "a = " + "(" * 199 + "1.0" + ")" * 199,
        "a = " + "-" * 4990 + "1.0",
        "a = " + "not " * 900 + "1.0",
        "a = x" + "[0]" * 1600,
        "a = f" + "()" * 2400,
    ]
    for program in deep:
        expression.fill(program)
        page.get_by_role("button", name="Build graph").click()
        page.wait_for_function(
            "() => /nested too deeply/.test(document.querySelector('#program-error').textContent)"
        )
        line = program.count("\n") + 1
        assert error.text_content() == (
            f"line {line}: an expression is nested too deeply for Python in a browser (about 400 "
            f"terms in one chain, or 100 brackets); split it over several assignments"
        )
        page.evaluate("() => { document.querySelector('#program-error').textContent = ''; }")
    assert page.locator("#boot").is_hidden()  # Python is alive: no banner
    # a long chain within the budget is a graph
    expression.fill("x = 1.0\na = " + "+".join(["x"] * 300))
    page.get_by_role("button", name="Build graph").click()
    page.wait_for_function(
        "() => /Graph built/.test(document.querySelector('#status').textContent)"
    )
    assert error.is_hidden() or error.text_content() == ""


def test_a_link_carries_a_typed_program_and_a_refused_setting_stays_said(visit: Visit) -> None:
    # The explorer's address carries its program (#program=...): the link, opened in another
    # tab, builds the same graph from the program as it was typed.
    typed = "u = 1.5; v: data = -2.0  # typed\nw = u*v + tanh(u)\nL = w**2 + 1.0"
    page = visit.open()
    visit.ready()
    page.get_by_label("Expression", exact=True).fill(typed)
    page.get_by_role("button", name="Build graph").click()
    in_link = "new URLSearchParams(location.hash.slice(1)).get('program')"
    page.wait_for_function(f"(p) => {in_link} === p", arg=typed)
    count = "document.querySelectorAll('#graph-svg g.node.value').length"
    n = page.evaluate(f"() => {count}")
    assert n == len(trace(next(reversed(parse_program(typed).values())))[0])
    link = page.url
    other = visit.context.new_page()
    other_errors = watch_errors(other)
    other.goto(link)
    other.wait_for_selector("body[data-ready='1']", timeout=START_MS)
    assert other.get_by_label("Expression", exact=True).input_value() == typed
    other.wait_for_function(f"(n) => {count} === n", arg=n)
    other.close()
    assert not other_errors, other_errors

    # The Train view's refused link: said, and still said 3 s after its start is over.
    page.goto(visit.base + "train.html?hidden=999")
    visit.ready()
    page.wait_for_function("() => window.trainView.drawn() > 0")
    page.wait_for_timeout(3000)
    error = page.locator("#train-error")
    assert error.is_visible()
    assert "The link's settings were refused (hidden layer 1 needs 1 to 32" in error.text_content()
    assert "hidden=999" in page.url


def test_predict_each_grad_on_the_static_site(visit: Visit, screenshot: Any) -> None:
    # The same front end on Pyodide: the lecture's L backpropagated by typing each grad
    from tests.support.predict_browser import predict_a_plus_a, predict_lecture

    page = visit.open()
    visit.ready()
    page.get_by_label("Examples").select_option(label=LECTURE_L["title"])
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 7"
    )
    predict_lecture(page, page, shoot=lambda: screenshot(page, "site-predict"))
    twice = next(ex for ex in EXAMPLES if ex["program"] == "a = 3.0\nb = a + a")
    page.get_by_label("Examples").select_option(label=twice["title"])
    page.wait_for_function(
        "() => document.querySelectorAll('#graph-svg g.node.value').length === 2"
    )
    predict_a_plus_a(page)


# ------------------------------------------------------------------ open fast: the baked snapshot

SNAPSHOT_CHECKED = (
    "() => window.playgroundTransport.snapshot.length === {n} && "
    "window.playgroundTransport.snapshot.every(r => r.same !== null)"
)


def held_back(browser: Any, site_url: str) -> tuple[Visit, list[Any]]:
    """A visit whose wheel is held back (Python cannot be ready) until the test releases it."""
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    held: list[Any] = []
    v.page.route("**/*.whl", lambda route: held.append(route))  # asked before the context's
    return v, held


def release(page: Any, held: list[Any]) -> None:
    """Let the held wheel through, once the worker has asked for it."""
    page.wait_for_function(
        "() => /Installing micrograd/.test(document.querySelector('#boot').textContent)",
        timeout=START_MS,
    )
    for _ in range(START_MS // 50):  # the request's handler runs while Playwright waits
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the wheel was not asked for"
    held[0].continue_()


def test_the_first_graph_is_drawn_from_the_snapshot_before_python_is_ready(
    browser: Any, site_url: str, screenshot: Any
) -> None:
    v, held = held_back(browser, site_url)
    try:
        page = v.open()
        page.wait_for_function(
            "() => document.querySelectorAll('#graph-svg g.node.value').length === 10"
        )
        # drawn while Python is not ready: the controls wait for it, the progress line says so
        assert page.locator("main").evaluate("el => el.inert")
        assert page.locator("#boot").is_visible()
        # (Python has not answered the baked calls yet)
        assert page.evaluate("() => playgroundTransport.snapshot.every(r => r.same === null)")
        # the graph CPython builds, its leaves' numbers shown (the rest wait for Forward)
        refs = cpython_backward(NEURON["program"])
        nodes = value_nodes(page)
        assert [n["name"] for n in nodes] == [x.label for x in refs]
        shown = [(float(n["data"]), x.data) for n, x in zip(nodes, refs) if n["data"]]
        assert len(shown) >= 5 and all(a == b for a, b in shown), shown
        screenshot(page, "site-explorer-from-snapshot")
        release(page, held)
        v.ready()
        # Python reached the same state by the same calls, and answered them as baked
        page.wait_for_function(SNAPSHOT_CHECKED.format(n=2), timeout=START_MS)
        assert page.evaluate("() => window.playgroundTransport.snapshot.map(r => r.same)") == [
            True,
            True,
        ]
        page.get_by_role("button", name="Backward step").click()
        page.wait_for_function(
            "() => /grad 1\\.0000/.test(document.querySelector('#graph-svg').textContent)"
        )
    finally:
        v.close()


def test_the_untrained_network_is_drawn_from_the_snapshot_before_python_is_ready(
    browser: Any, site_url: str, screenshot: Any
) -> None:
    v, held = held_back(browser, site_url)
    try:
        page = v.open("train.html")
        page.wait_for_function("() => window.trainView && window.trainView.drawn() >= 1")
        assert page.locator("main").evaluate("el => el.inert")
        assert page.locator("#boot").is_visible()
        assert page.locator("#step-count").text_content() == "step 0"
        # the untrained default network, as CPython's Train view has it
        want = Tab(jit=False).call("train", "config", {})
        frame = page.evaluate("() => window.trainView.frame()")
        assert frame["step"] == 0 and frame["links"] == want["frame"]["links"]
        assert page.evaluate("() => window.trainView.meta().sizes") == want["meta"]["sizes"]
        assert page.locator("#net canvas:not(#net-links)").count() > 0  # its neurons drawn
        screenshot(page, "site-train-from-snapshot")
        release(page, held)
        v.ready()
        page.wait_for_function(SNAPSHOT_CHECKED.format(n=2), timeout=START_MS)
        records = page.evaluate("() => window.playgroundTransport.snapshot")
        assert [(r["action"], r["same"]) for r in records][0] == ("options", True)
        # moons' points: sin and cos's last bit is the C library's (glibc here, musl in the
        # browser): the view takes Python's in the browser in place of the baked ones
        assert records[1]["action"] == "config" and (records[1]["same"] or records[1]["taken"])
        page.get_by_role("button", name="Play").click()
        page.wait_for_function("() => window.trainView.frame().step > 10", timeout=START_MS)
        page.get_by_role("button", name="Pause").click()
        page.wait_for_function("() => window.trainView.frame().playing === false")
    finally:
        v.close()


# -------------------------------------------------------------------- Python's saved start

_RESTORE = """
const fs = await import("node:fs");
const url = await import("node:url");
const [dir, memory, wheel] = process.argv.slice(-3);
const { loadPyodide } = await import(url.pathToFileURL(`${dir}/pyodide.mjs`).href);
const saved = new Uint8Array(fs.readFileSync(memory));
const py = await loadPyodide({ indexURL: `${dir}/`, _loadSnapshot: saved });
const before = py.runPython("import sys; 'micrograd.playground.serving.worker' in sys.modules");
py.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel");
console.log(JSON.stringify([before, py.runPython(`
from micrograd.playground.serving.worker import Host
import json, random
host = Host()
answer = json.loads(host.receive(json.dumps({"id": 1, "view": "explorer", "action": "examples"})))
json.dumps([answer[0]["answer"]["default"], random.random()])
`)]));
"""


def test_pythons_saved_start_has_micrograd_imported_and_draws_new_random_numbers(
    site_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    # The worker restores Python as the build saved it (site.python_memory), micrograd
    # imported, and the Host answers; a restored interpreter would draw the random numbers it
    # was saved with on every visit, so the Host seeds them afresh: two restores differ.
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        _unavailable("Node.js is not installed (apt install nodejs)")
    site = json.loads((site_folder / "site.json").read_text())
    assert site["memory"] == "python-memory.gz"
    memory = tmp_path / "memory"
    memory.write_bytes(gzip.decompress((site_folder / site["memory"]).read_bytes()))
    args = [str(site_folder / "pyodide"), str(memory), str(site_folder / site["wheel"])]
    runs = []
    for _ in range(2):
        done = subprocess.run(
            [node, "--input-type=module", "-e", _RESTORE, *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        before, answer = json.loads(done.stdout.strip().splitlines()[-1])
        runs.append(json.loads(answer))
        assert before is True  # imported before the restore: nothing to import now
    assert runs[0][0] == runs[1][0] == Tab().call("explorer", "examples", {})["default"]
    assert runs[0][1] != runs[1][1]


_BOOT_LOG = """
window.bootLog = [];
new MutationObserver(() => {
  const boot = document.querySelector('#boot');
  const said = boot && boot.textContent;
  if (said && window.bootLog.at(-1) !== said) window.bootLog.push(said);
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def _no_memory(route: Any) -> None:
    response = route.fetch()
    route.fulfill(response=response, json={**response.json(), "memory": None})


@pytest.mark.parametrize("memory", ["saved", "broken", "none"])
def test_the_page_restores_pythons_saved_start_or_starts_afresh(
    browser: Any, site_url: str, memory: str
) -> None:
    v = Visit(browser, site_url, viewport={"width": 1280, "height": 800})
    v.context.add_init_script(_BOOT_LOG)
    if memory == "broken":  # (a host that mangles it): the page says so, and starts afresh
        v.context.route("**/python-memory.gz", lambda r: r.fulfill(status=200, body=b"not gzip"))
    if memory == "none":  # a build that saved none (no Node.js, a Pyodide without the calls)
        v.context.route("**/site.json", _no_memory)
    try:
        page = v.open()
        v.ready()
        log = page.evaluate("() => window.bootLog")
        afresh = [line for line in log if "afresh" in line]
        assert any(line.startswith("Installing micrograd") for line in log), log
        if memory != "broken":
            assert not afresh, log
        else:
            assert afresh and afresh[0].startswith(
                "Starting Python afresh (its saved start could not be used: "
            ), log
        page.get_by_role("button", name="Backward pass", exact=True).click()
        page.wait_for_function(
            "() => /Backward pass done/.test(document.querySelector('#status').textContent)"
        )
        fetched = [u for u in v.requests if u.endswith("/python-memory.gz")]
        assert bool(fetched) == (memory == "saved"), v.requests  # ("broken": its own route)
    finally:
        v.close()


def test_the_health_panel_on_the_site(visit: Visit, screenshot: Any) -> None:
    """The Train view's Health panel on the site (the steps in JavaScript, a read step handing
    back its statistics, jit/health.js: engines.JavaScriptEngine._read_step): a preset
    diagnosed by its cause, "Fix it" healthy."""
    page = visit.open("train.html")
    visit.ready()
    assert page.evaluate("() => window.trainView.meta().engine") == "javascript"
    page.get_by_label("Show the network's health").check()
    page.wait_for_function("() => window.trainView.frame().health", timeout=START_MS)
    page.get_by_label("Break it:").select_option(label="No zero_grad")
    page.wait_for_function(
        "() => (window.trainView.frame().health || {}).preset === 'no_zero_grad' && "
        "window.trainView.frame().step === 0",
        timeout=START_MS,
    )
    for k in range(1, 6):
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => window.trainView.frame().step === {k}", timeout=START_MS)
    item = page.locator("#health-diagnoses li[data-cause=zero_grad]")
    item.wait_for(timeout=20_000)
    assert "zero_grad" in item.text_content()
    page.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(page, "site-train-health-no-zero-grad")
    page.get_by_role("button", name="Fix it").click()
    page.wait_for_function(
        "() => window.trainView.frame().health.fixed && window.trainView.frame().step === 0",
        timeout=START_MS,
    )
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(
        "() => (window.trainView.frame().health || {}).step > 30", timeout=START_MS
    )
    page.get_by_role("button", name="Pause").click()
    page.locator("#health-diagnoses li.healthy").wait_for(timeout=20_000)
    page.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(page, "site-train-health-fixed")


def test_the_gpt_health_panel_on_the_site(visit: Visit, screenshot: Any) -> None:
    """The GPT view's Health panel on the site (the steps in JavaScript, a read step handing
    back its statistics, jit/health.js: train_gpt_engines.JavaScriptGPT), at 1280 and on a
    phone: Dead ReLUs diagnosed by its cause, "Fix it" healthy."""
    page = visit.open("gpt.html?data=builtin")
    visit.ready()
    page.wait_for_function("() => window.gptView && window.gptView.frame()", timeout=START_MS)
    page.get_by_label("Show the GPT's health").check()
    page.wait_for_function("() => window.gptView.frame().health", timeout=START_MS)
    page.get_by_label("Break it:").select_option(label="Dead ReLUs")
    page.wait_for_function(
        "() => (window.gptView.frame().health || {}).preset === 'dead_relus' && "
        "window.gptView.frame().step === 0",
        timeout=START_MS,
    )
    for k in range(1, 4):
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => window.gptView.frame().step === {k}", timeout=START_MS)
    item = page.locator("#health-diagnoses li[data-cause=dead]")
    item.wait_for(timeout=20_000)
    assert "ReLUs dead" in item.text_content()
    page.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(page, "site-gpt-health-dead-relus")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the panel drawn again
    page.wait_for_function("() => document.documentElement.scrollWidth <= 400")
    page.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(page, "site-gpt-health-dead-relus-phone")
    page.get_by_role("button", name="Fix it").click()
    page.wait_for_function(
        "() => window.gptView.frame().health.fixed && window.gptView.frame().step === 0",
        timeout=START_MS,
    )
    for k in range(1, 13):  # (each of the first 10 steps read; Play would read few: see
        # docs/health.md, the site's reads re-run the step in Python, within the time budget)
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => window.gptView.frame().step === {k}", timeout=START_MS)
    page.wait_for_function("() => window.gptView.frame().health.step >= 10", timeout=START_MS)
    page.locator("#health-diagnoses li.healthy").wait_for(timeout=20_000)
    assert page.locator("#health-diagnoses li").count() == 1
    page.locator("#health-panel").scroll_into_view_if_needed()
    screenshot(page, "site-gpt-health-fixed-phone")
