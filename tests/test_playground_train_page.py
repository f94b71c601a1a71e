"""The training view in a real browser (Playwright driving Debian's Chromium; see conftest.py).

Controls are found by role and accessible name, as a screen reader finds them. Each test is
bounded: training targets are reached in well under a second of Play on the jit engine, and
every wait has a timeout. Screenshots go to tests/screenshots/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse

import pytest

from micrograd import losses
from micrograd.io import load
from micrograd.viz.formatting import format_number

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SPIRAL3 = "?dataset=spiral3&loss=cross_entropy&hidden=16,16&optimizer=adam&lr=0.03"


def open_train(page, playground, query=""):
    page.goto(playground + "train" + query)
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    return page


def step_of(page):
    return int(page.locator("#step-count").text_content().split()[1])


def play_until(page, condition, timeout=20.0):
    page.get_by_role("button", name="Play").click()
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            if condition():
                return True
            page.wait_for_timeout(50)
        return False
    finally:
        page.get_by_role("button", name="Pause").click()


def test_train_is_one_click_from_the_explorer_and_moons_reach_100(page, playground, screenshot):
    page.goto(playground)
    page.get_by_role("link", name="Train").click()
    page.wait_for_url(re.compile(r"/train\.html\?"))
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    assert page.get_by_label("Dataset").input_value() == "moons"
    screenshot(page, "train-start")
    assert play_until(page, lambda: page.get_by_text("accuracy 100.0%").count() == 1)
    page.wait_for_function("() => !window.trainView.frame().playing")
    n = step_of(page)
    assert n > 0
    page.wait_for_timeout(400)
    assert step_of(page) == n  # Pause stopped the counter
    loss = page.locator("#loss-text").text_content()
    assert re.fullmatch(r"loss \d\.\d{4,7}(e-\d+)?", loss)  # format_number: 4 significant digits
    screenshot(page, "train-moons-100")
    # Trained, most points are past the hinge's margin: the chosen point's graph says why all its
    # grads are 0 (in sight: its numbers are computed while the page shows it).
    page.locator("#graph-panel").scroll_into_view_if_needed()
    for i in range(10):
        page.get_by_label("Chosen point", exact=True).fill(str(i))
        page.get_by_label("Chosen point", exact=True).dispatch_event("change")
        page.wait_for_function(f"() => window.trainView.meta().pick === {i}")
        page.wait_for_function("() => window.trainView.frame().graph")
        if page.locator("#graph-note").is_visible():
            break
    assert "nothing flows back" in page.locator("#graph-note").text_content()


def test_reset_then_play_repeats_the_same_loss_curve(page, playground):
    open_train(page, playground)
    page.get_by_label("Speed").select_option("200")  # slow enough to stop near step 40
    get = "() => window.trainView.history()"
    assert play_until(page, lambda: len(page.evaluate(get)) >= 40)
    first = page.evaluate(get)
    page.get_by_role("button", name="Reset").click()
    page.wait_for_function("() => window.trainView.frame().step === 0")
    assert page.locator("#step-count").text_content() == "step 0"
    assert play_until(page, lambda: len(page.evaluate(get)) >= len(first))
    again = page.evaluate(get)[: len(first)]
    assert again == first and len(first) >= 40
    assert [h[0] for h in first] == list(range(len(first)))
    seed = page.get_by_label("Seed").input_value()
    page.get_by_role("button", name="New weights").click()
    page.wait_for_function(f"() => window.trainView.meta().settings.seed !== {seed}")
    page.get_by_role("button", name="Step").click()
    page.wait_for_function("() => window.trainView.frame().step === 1")
    # (Step's answer is a frame without the curve, which comes with the frames' stream: on a
    # loaded machine the answer came first, and the curve was still empty)
    page.wait_for_function(f"() => ({get})().length >= 1")
    assert page.evaluate(get)[0][1] != first[0][1]  # new initial weights, a new first loss


def test_settings_live_in_the_url(page, playground, browser):
    open_train(page, playground)
    page.get_by_label("Dataset").select_option("circles")
    page.wait_for_function("() => window.trainView.meta().settings.dataset === 'circles'")
    page.get_by_label("Learning rate").fill("0.05")
    page.get_by_label("Learning rate").press("Enter")
    page.wait_for_function("() => window.trainView.meta().settings.lr === 0.05")
    page.get_by_role("button", name="Add layer").click()
    page.wait_for_function("() => window.trainView.meta().settings.hidden.length === 3")
    page.get_by_label("Activation").select_option("relu")
    page.wait_for_function("() => window.trainView.meta().settings.activation === 'relu'")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert q["dataset"] == ["circles"] and q["lr"] == ["0.05"] and q["hidden"] == ["8,8,4"]
    assert q["activation"] == ["relu"]
    weights = page.evaluate("() => window.trainView.frame().weights")
    # the link in another tab (a new session) is the same run: same settings, same weights
    other = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    try:
        other.goto(page.url)
        other.wait_for_function("() => window.trainView && window.trainView.frame()")
        assert other.get_by_label("Dataset").input_value() == "circles"
        assert other.get_by_label("Learning rate").input_value() == "0.05"
        assert other.get_by_label("Hidden layers").input_value() == "8,8,4"
        assert other.evaluate("() => window.trainView.frame().weights") == weights
    finally:
        other.context.close()
    page.reload()
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    assert page.get_by_label("Activation").input_value() == "relu"


def test_clicked_points_change_the_data_and_bad_input_is_explained(page, playground, screenshot):
    open_train(page, playground)
    plot = page.get_by_role("application", name=re.compile("Decision regions"))
    box = plot.bounding_box()
    page.locator("#class-0").check()
    plot.click(position={"x": 12, "y": box["height"] - 12})  # bottom-left corner: no point there
    page.wait_for_function("() => window.trainView.meta().points.length === 101")
    meta = page.evaluate("() => window.trainView.meta()")
    x0, x1, y0, y1 = meta["extent"]
    x, y, c = meta["points"][-1]
    assert c == 0 and x == pytest.approx(x0 + 12 / box["width"] * (x1 - x0), abs=0.05)
    assert y == pytest.approx(y0 + 12 / box["height"] * (y1 - y0), abs=0.05)
    assert "added=" in page.url
    plot.click(position={"x": box["width"] - 12, "y": 12}, modifiers=["Shift"])  # the other class
    page.wait_for_function("() => window.trainView.meta().points.length === 102")
    assert page.evaluate("() => window.trainView.meta().points[101][2]") == 1
    page.get_by_role("button", name="Step").click()
    page.wait_for_function("() => window.trainView.frame().step === 1")
    screenshot(page, "train-added-points")
    # a 10,000-point click storm: refused with a message, nothing lost
    page.evaluate(
        "() => window.trainView.call('points',"
        " {added: Array.from({length: 10000}, () => [0, 0, 1])}).catch((err) => err.message)"
    )
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "at most 300 added points, got 10000" in alert.text_content()
    assert page.evaluate("() => window.trainView.meta().points.length") == 102
    # lr = nan: the message is shown, the run goes on with the old setting
    page.get_by_label("Learning rate").fill("nan")
    page.get_by_label("Learning rate").press("Enter")
    page.wait_for_function(
        "() => document.getElementById('train-error').textContent.includes('Learning rate')"
    )
    assert "must be a finite number > 0" in alert.text_content()
    assert page.get_by_label("Learning rate").input_value() == "0.03"
    page.get_by_label("Hidden layers").fill("8,0")
    page.get_by_label("Hidden layers").press("Enter")
    page.wait_for_function(
        "() => document.getElementById('train-error').textContent.includes('hidden layer 2')"
    )
    screenshot(page, "train-bad-input")
    page.get_by_role("button", name="Step").click()
    page.wait_for_function("() => window.trainView.frame().step === 2")
    page.get_by_role("button", name="Clear points").click()
    page.wait_for_function("() => window.trainView.meta().points.length === 100")


def test_three_class_spiral_trains_above_90_percent(page, playground, screenshot):
    open_train(page, playground, SPIRAL3)
    assert page.get_by_label("Loss", exact=True).input_value() == "cross_entropy"

    def acc():
        f = page.evaluate("() => window.trainView.frame()")
        return f["accuracy"] or 0.0

    assert play_until(page, lambda: acc() > 0.9)
    text = page.locator("#acc-text").text_content()
    assert float(text.split()[1].rstrip("%")) > 90
    screenshot(page, "train-spiral3")


def test_the_chosen_points_graph_is_the_python_models(page, playground, tmp_path, screenshot):
    open_train(page, playground, "?hidden=4,3&seed=3")
    page.get_by_label("Chosen point", exact=True).fill("17")
    page.get_by_label("Chosen point", exact=True).press("Enter")
    page.wait_for_function("() => window.trainView.meta().pick === 17")
    for k in range(1, 6):
        page.get_by_role("button", name="Step").click()
        page.wait_for_function(f"() => window.trainView.frame().step === {k}")
    # the graph's numbers come while it is in sight
    page.locator("#graph-panel").scroll_into_view_if_needed()
    page.wait_for_function(
        "() => window.trainView.frame().graph && /data -?\\d/.test("
        "document.querySelector('#graph text.gdata').textContent)"
    )
    shown = {}
    for g in page.locator("#graph g.gnode").all():
        label = g.get_attribute("data-label")
        if label:
            shown[label] = (
                g.locator("text.gdata").text_content().split()[1],
                g.locator("text.ggrad").text_content().split()[1],
            )
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download model").click()
    path = tmp_path / "model.json"
    dl.value.save_as(path)
    model = load(str(path))
    # the same point through the downloaded model, by plain micrograd
    x, y, c = page.evaluate("() => window.trainView.meta().points[17]")
    from micrograd import Value

    xs = [Value(x), Value(y)]
    h1 = model.layers[0].outputs(xs)
    h2 = model.layers[1].outputs(h1)
    (s,) = model.layers[2].outputs(h2)
    loss = losses.hinge([s], [2 * c - 1], reduction="sum")
    loss.backward()
    expect = {"x₁": xs[0], "x₂": xs[1], "s": s, "loss": loss}
    for layer, hs in ((1, h1), (2, h2)):
        for j, h in enumerate(hs):
            expect[f"h{layer}.{j + 1}"] = h
            expect[f"a{layer}.{j + 1}"] = h._prev[0]  # w·x+b, under the tanh
    assert set(expect) <= set(shown)
    for label, v in expect.items():
        assert shown[label] == (format_number(v.data), format_number(v.grad)), label
    screenshot(page, "train-graph", full_page=True)


def test_download_picture_is_a_png(page, playground):
    open_train(page, playground)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download picture").click()
    assert dl.value.suggested_filename.endswith(".png")
    with open(dl.value.path(), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_readme_picture_and_a_phone(page, playground, screenshot):
    """The README's figure (copied to docs/playground-train.png) and the phone-width layout."""
    open_train(page, playground, "?hidden=6,6&pick=4")
    assert play_until(page, lambda: page.get_by_text("accuracy 100.0%").count() == 1)
    page.wait_for_function("() => !window.trainView.frame().playing")
    page.set_viewport_size({"width": 1280, "height": 1020})
    page.wait_for_timeout(200)
    screenshot(page, "train-readme")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(200)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 400  # nothing forces sideways scrolling of the page (the graph scrolls alone)
    screenshot(page, "train-phone", full_page=True)
    assert json.loads(json.dumps(page.evaluate("() => window.trainView.meta().sizes"))) == [
        2,
        6,
        6,
        1,
    ]


@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_in_the_top_bar_moves_as_the_step_count_grows(page, playground, width):
    # The counter has a fixed width: up to step 9,999,999 every control sits where it sat at 0.
    page.set_viewport_size({"width": width, "height": 844})
    open_train(page, playground)
    ids = ["speed", "lr", "optimizer", "l2", "batch", "play", "step-count"]

    def boxes():
        return page.evaluate(
            "ids => ids.map(id => { const r = document.getElementById(id)"
            ".getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })",
            ids,
        )

    before = boxes()
    for n in (5_000, 150_000, 512_000, 9_999_999):
        page.evaluate(
            f"() => {{ document.getElementById('step-count').textContent = 'step {n}'; }}"
        )
        assert boxes() == before, n


def test_the_forgotten_zero_grad_toggle_applies_to_the_running_model(page, playground):
    open_train(page, playground)
    for k in (1, 2, 3):
        page.get_by_role("button", name="Step").click()
        page.wait_for_function(f"() => window.trainView.frame().step === {k}")
    page.get_by_label("zero the grads before each backward()").uncheck()
    page.wait_for_function("() => window.trainView.meta().settings.zero_grad === false")
    assert page.evaluate("() => window.trainView.frame().step") == 3  # the same run goes on
    assert "applied to the running model" in page.locator("#change-note").text_content()
    assert "zero_grad=false" in page.url  # in the link too


def test_at_1280_the_default_points_graph_shows_its_loss_and_on_a_phone_it_scrolls(
    page, phone, playground, screenshot
):
    # A little wider than the panel at its natural size: drawn a little smaller, the loss (at
    # the right end) in view. On a phone it keeps its natural size (11 px text) and scrolls.
    for p, fits in ((page, True), (phone, False)):
        open_train(p, playground)
        panel = p.locator(".graph-scroll")
        panel.scroll_into_view_if_needed()
        loss = p.locator("#graph g.gnode.loss")
        room = panel.evaluate("el => el.clientWidth")
        natural = p.evaluate("() => document.querySelector('#graph').viewBox.baseVal.width")
        width = float(p.locator("#graph").get_attribute("width"))
        if fits:
            assert natural > room, "the default graph fits at its natural size: test a wider one"
            assert 0.85 * natural <= width <= room
            right = loss.bounding_box()["x"] + loss.bounding_box()["width"]
            assert right <= panel.bounding_box()["x"] + room
            screenshot(p, "train-graph-fits", full_page=True)
        else:
            assert width == int(natural) and panel.evaluate("el => el.scrollWidth > el.clientWidth")


def test_after_divergence_the_points_graph_shows_no_numbers_and_says_why(page, playground):
    open_train(page, playground, "?loss=mse&lr=5")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.frame().error", timeout=120_000)
    page.locator(".graph-scroll").scroll_into_view_if_needed()
    note = page.locator("#graph-note")
    note.wait_for()
    assert note.text_content().startswith("No numbers for this point: its forward pass fails (")
    texts = page.locator("#graph text.gdata").all_text_contents()
    assert texts and set(texts) == {"data –"}
    assert set(page.locator("#graph text.ggrad").all_text_contents()) == {"grad –"}


@pytest.mark.parametrize("view,path", [("explorer", ""), ("train", "train"), ("gpt", "gpt")])
def test_a_page_preloads_exactly_the_modules_it_loads(page, playground, view, path):
    # the preloads are read from the modules' imports (serving/pages.py), not kept by hand: the
    # explorer's hand-kept list had left out explorer-drawing.js and explorer-panels.js
    fetched = []
    page.on("request", lambda r: fetched.append(urllib.parse.urlsplit(r.url).path))
    page.goto(playground + path)
    page.wait_for_function(
        "() => document.body.dataset.view && !document.querySelector('main').inert"
    )
    page.wait_for_load_state("networkidle")
    hrefs = page.eval_on_selector_all(
        "link[rel=modulepreload]", "links => links.map(l => new URL(l.href).pathname)"
    )
    assert len(hrefs) == len(set(hrefs)), hrefs
    modules = {p for p in fetched if p.endswith(".js")} - {"/static/page.js"}
    assert set(hrefs) == modules, (view, sorted(set(hrefs) ^ modules))
