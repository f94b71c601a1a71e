"""The static site in Chromium: `micrograd site` builds it once for the session, ``python -m
http.server`` serves it from the folder above, and every page is opened at /s/ with each request
outside /s/ aborted (so nothing may come from a CDN, a registry, or the root of the host). The
explorer's numbers are checked against CPython's `backward()`, the Train view against CPython's
own run of the same settings, and no request goes to a server's /api/."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from micrograd.cli import main
from micrograd.expr import parse_program
from micrograd.formatting import format_number as fmt
from micrograd.playground.explorer import EXAMPLES
from micrograd.playground.views import Tab
from micrograd.viz import trace

from .conftest import _unavailable, watch_errors

START_MS = 180_000  # Python's start in a browser: seconds; minutes on a loaded machine
NEURON, LECTURE_L = EXAMPLES[0], EXAMPLES[1]
assert "neuron" in NEURON["title"] and "(a*b + c)*f" in LECTURE_L["title"]


@pytest.fixture(scope="session")
def site_url(tmp_path_factory: Any) -> Iterator[str]:
    """The site, built by the command as a user runs it, served at http://127.0.0.1:PORT/s/."""
    root = tmp_path_factory.mktemp("www")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["site", str(root / "s")])
    if status != 0 and "npm is needed" in err.getvalue():
        _unavailable(err.getvalue().strip() + " (scripts/ensure-npm installs it)")
    assert status == 0, out.getvalue() + err.getvalue()
    said = out.getvalue()
    assert re.search(r"^wrote \d+ files, \d+\.\d MB, to .* \(Pyodide (from the cache|fetched "
                     r"from the npm registry)\)$", said, re.M), said  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port 41234 (...) ..."
        port = re.search(r"port (\d+)", line)
        assert port, f"http.server said {line!r}"
        yield f"http://127.0.0.1:{port.group(1)}/s/"
    finally:
        server.terminate()
        server.wait(timeout=10)


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
    page.wait_for_function("() => /Backward pass done/.test(document.querySelector"
                           "('#status').textContent)")  # fmt: skip
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
    assert [shown[k] for k in "abcf"] == ["grad 6.0000", "grad -4.0000", "grad -2.0000",
                                          "grad 4.0000"]  # fmt: skip
    settle(page)
    screenshot(page, "site-explorer-L")

    # Gradient step: the same step CPython's explorer takes, the output lower (L from -8).
    page.get_by_role("button", name="Gradient step").click()
    page.wait_for_function("() => /-8\\.0000/.test(document.querySelector('#graph-svg')"
                           ".textContent) === false")  # fmt: skip
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
    assert page.locator("#engine").text_content() == "engine: eager micrograd"
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.frame().accuracy === 1", timeout=START_MS)
    page.get_by_role("button", name="Pause").click()
    page.wait_for_function("() => window.trainView.frame().playing === false")
    assert page.locator("#acc-text").text_content() == "accuracy 100.0%"
    screenshot(page, "site-train-moons")


def test_the_first_50_losses_of_moons_are_cpythons(visit: Visit) -> None:
    """The page's defaults (moons, 2-8-8-1 tanh, hinge, SGD, seed 1337), 50 steps of Step in
    the browser against the same 50 steps in CPython (the eager engine, as in the browser)."""
    page = visit.open("train.html")
    visit.ready()
    page.evaluate("() => window.trainView.call('control', {action: 'step', steps: 50})")
    history = page.evaluate("() => window.trainView.history()")
    model = page.evaluate("() => window.trainView.call('model')")
    tab = Tab(jit=False)
    tab.call("train", "config", {})
    tab.call("train", "control", {"action": "step", "steps": 50})
    want = [list(row) for row in tab.train.trainer.history]
    assert len(history) == 50
    # step, loss (as sent: 6 significant digits), the same loss, accuracy: digit for digit
    assert history == json.loads(json.dumps(want))
    # The weights after 50 steps: the moons' points are made with sin and cos, the C library's,
    # whose last bit may differ between musl and glibc; nothing more.
    ours = tab.call("train", "model", {})
    assert model["nouts"] == ours["nouts"]
    got, ref = _floats(model["weights"]), _floats(ours["weights"])
    assert len(got) == len(ref) == 2 * 8 + 8 + 8 * 8 + 8 + 8 + 1
    for a, b in zip(got, ref):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (a, b)

    # The largest network the page offers is offered here too, with a note that it is not live.
    note = page.locator("#size-note")
    assert note.is_hidden()
    hidden = page.get_by_label("Hidden layers")
    hidden.fill("32,32,32,32,32,32")
    hidden.dispatch_event("change")
    note.wait_for(timeout=60_000)
    assert note.text_content().startswith("Not live in a browser: this network has 5,409 weights")


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
        page.wait_for_function("() => /Backward pass done/.test(document.querySelector"
                               "('#status').textContent)")  # fmt: skip
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
        page.wait_for_function("() => document.querySelector('#boot').classList.contains"
                               "('error')", timeout=START_MS)  # fmt: skip
        text = line.text_content()
        want = (r"micrograd could not start in this browser: wheels/micrograd_plus-[\d.]+-py3-"
                r"none-any\.whl could not be loaded \(HTTP 404\)")
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
        page.wait_for_function("() => /Installing micrograd/.test(document.querySelector('#boot')"
                               ".textContent)", timeout=START_MS)  # fmt: skip
        assert page.locator("main").evaluate("el => el.inert")
        page.wait_for_function("() => /\\d+ s$/.test(document.querySelector('#boot .elapsed')"
                               ".textContent)")  # fmt: skip
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
    deep = ["x = 1.0\na = " + "+".join(["x"] * 1200), "a = " + "(" * 199 + "1.0" + ")" * 199,
            "a = " + "-" * 4990 + "1.0"]  # fmt: skip
    for program in deep:
        expression.fill(program)
        page.get_by_role("button", name="Build graph").click()
        page.wait_for_function("() => /nested too deeply/.test(document.querySelector"
                               "('#program-error').textContent)")  # fmt: skip
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
    page.wait_for_function("() => /Graph built/.test(document.querySelector('#status')"
                           ".textContent)")  # fmt: skip
    assert error.is_hidden() or error.text_content() == ""
