"""The Train view's network and plot in Chromium (issue 28): gradients drawn on the links and read
by hovering, against PyTorch; biases as squares to hover, click and set; links and biases by
keyboard, the one being edited highlighted; a regression problem drawn as a colour field with its
legend; Gaussian clusters; a legend with its scale on every heat map. Every wait is for an event
(an answer, a frame drawn), and training goes by Step, never by how long Play ran."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from micrograd import io
from micrograd.viz.formatting import format_number as fmt

torch = pytest.importorskip("torch")

# A pixel of the links' canvas at a point of the page: [r, g, b, a].
PIXEL = """([x, y]) => {
  const c = document.getElementById('net-links'), r = c.getBoundingClientRect();
  const k = c.width / r.width;
  return Array.from(c.getContext('2d').getImageData(
    Math.round((x - r.left) * k), Math.round((y - r.top) * k), 1, 1).data);
}"""


def dark_around(page: Any, x: float, y: float, across: str) -> bool:
    """Whether the links' canvas has a near-black, opaque pixel within 7 px of (x, y), going
    across a line ("y": up and down, "x": left and right): the highlight's halo."""
    for k in range(-14, 15):
        at = [x, y + k / 2] if across == "y" else [x + k / 2, y]
        r, g, b, a = page.evaluate(PIXEL, at)
        if max(r, g, b) < 60 and a > 200:
            return True
    return False


def line_colour(page: Any, x: float, y: float) -> list[int]:
    """The most opaque pixel of the links' canvas within 2 px above or below (x, y): a line's
    colour there, however thin it is drawn."""
    return max((page.evaluate(PIXEL, [x, y + k / 2]) for k in range(-4, 5)), key=lambda p: p[3])


def numbers(tip: str) -> list[float]:
    """The two numbers of a tooltip: the value and its gradient."""
    value, grad = tip.split(" = ")[1:3]
    return [float(value.split(" ")[0]), float(grad.split(" ")[0])]


def open_train(page: Any, playground: str, query: str = "") -> Any:
    page.goto(playground + "train" + query)
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    return page


def model_of(page: Any) -> Any:
    return io.loads(json.dumps(page.evaluate("() => window.trainView.call('model')")))


def steps(page: Any, n: int) -> None:
    """n training steps, as the Step button takes them, and the frame of the last one drawn."""
    step = page.evaluate("() => window.trainView.frame().step")
    page.evaluate(f"() => window.trainView.call('control', {{action: 'step', steps: {n}}})")
    page.wait_for_function(f"() => window.trainView.frame().step === {step + n}")


def torch_grads(model: Any, meta: dict, regression: bool = False) -> list[float]:
    """∂L/∂p for every parameter (model.parameters() order) of the step's loss at `model`'s
    weights (the batch loss over every point + alpha·Σp²), by PyTorch in float64."""
    net = io.to_torch(model)
    X = torch.tensor([p[:2] for p in meta["points"]], dtype=torch.float64)
    labels = [p[2] for p in meta["points"]]
    y = torch.tensor(labels if regression else [2.0 * c - 1 for c in labels], dtype=torch.float64)
    s = net(X)[:, 0]
    loss = ((s - y) ** 2).mean() if regression else torch.relu(1 - y * s).mean()
    loss = loss + meta["settings"]["l2"] * sum((p * p).sum() for p in net.parameters())
    loss.backward()
    grads = []
    for linear in [m for m in net if isinstance(m, torch.nn.Linear)]:
        for j in range(linear.weight.shape[0]):
            grads += linear.weight.grad[j].tolist() + [linear.bias.grad[j].item()]
    return grads


def index_of(sizes: list[int], layer: int, neuron: int, inp: int | None) -> int:
    """Where a parameter sits in model.parameters(): each neuron's weights, then its bias."""
    k = sum(sizes[i + 1] * (sizes[i] + 1) for i in range(layer))
    return k + neuron * (sizes[layer] + 1) + (sizes[layer] if inp is None else inp)


def hover_tip(page: Any, layer: int, neuron: int, inp: int | None) -> str:
    """Hover a link (or a bias square: inp None) and read its tooltip once the numbers came."""
    at = page.evaluate(f"() => window.trainView.where({layer}, {neuron}, {json.dumps(inp)})")
    page.mouse.move(at["x"], at["y"])
    name = (
        f"b (layer {layer + 1}, neuron {neuron + 1})"
        if inp is None
        else f"w (layer {layer + 1}, neuron {neuron + 1}, input {inp + 1})"
    )
    page.wait_for_function(
        "(name) => { const t = document.getElementById('net-tip');"
        " return !t.hidden && t.textContent.startsWith(name) && !t.textContent.includes('…'); }",
        arg=name,
    )
    return page.locator("#net-tip").text_content()


def tick(x: float, plus: bool = False) -> str:
    """A legend's number as the page writes it: 3 significant digits, a true minus sign."""
    t = format(float(format(abs(x), ".3g")), "g")
    return ("−" if x < 0 else "+" if plus and x > 0 else "") + t


# ------------------------------------------------------------------ gradients on the network


def test_gradients_on_the_links_read_and_drawn(page: Any, playground: str, screenshot: Any) -> None:
    open_train(page, playground, "?hidden=1")  # three links and two biases: none overlaps
    steps(page, 2)
    before = model_of(page)  # the weights the next step differentiates at
    steps(page, 1)
    meta = page.evaluate("() => window.trainView.meta()")
    grads = torch_grads(before, meta)
    sizes = meta["sizes"]
    page.get_by_label("links show ∂L/∂w, the gradient").check()
    assert "grads=1" in page.url
    page.wait_for_function("() => window.trainView.frame().grads")
    now = model_of(page)
    items = [(0, 0, 0), (0, 0, 1), (1, 0, 0), (0, 0, None), (1, 0, None)]
    for layer, neuron, inp in items:
        n = now.layers[layer].neurons[neuron]
        p = n.b if inp is None else n.w[inp]
        g = grads[index_of(sizes, layer, neuron, inp)]
        d = "∂L/∂b" if inp is None else "∂L/∂w"
        tip = hover_tip(page, layer, neuron, inp)
        assert f" = {fmt(p.data)} · {d} = " in tip, tip
        # the gradient as micrograd has it, to 4 significant digits: PyTorch's within rounding
        # (an output bias's hinge gradient is a sum of ±1/N that cancels to 1e-17: zero to both)
        assert numbers(tip)[1] == pytest.approx(g, rel=1e-3, abs=1e-12), (tip, g)
    # each link's colour is its gradient's sign: red where ∂L/∂w > 0, teal where it is < 0
    page.mouse.move(0, 0)
    page.wait_for_function("() => document.getElementById('net-tip').hidden")
    alphas = []
    for layer, neuron, inp in items[:3]:
        at = page.evaluate(f"() => window.trainView.where({layer}, {neuron}, {inp})")
        r, g_, b, a = line_colour(page, at["x"], at["y"])
        grad = grads[index_of(sizes, layer, neuron, inp)]
        assert (r > g_) == (grad > 0), (layer, inp, grad, (r, g_, b))
        alphas.append((abs(grad), a))
    # and the larger |∂L/∂w|, the stronger its line
    assert [a for _, a in sorted(alphas)] == sorted(a for _, a in alphas), alphas
    legend = page.locator("#net-legend").text_content()
    assert "∂L/∂w of step 3" in legend and f"|∂L/∂w| = {tick(max(map(abs, grads)))}" in legend
    screenshot(page, "train-gradients")
    # back to the weights: blue where w > 0, orange where w < 0
    page.get_by_label("links show ∂L/∂w, the gradient").uncheck()
    page.wait_for_function(
        "() => document.getElementById('net-legend').textContent.includes('the weight w')"
    )
    for layer, neuron, inp in items[:3]:
        at = page.evaluate(f"() => window.trainView.where({layer}, {neuron}, {inp})")
        r, g_, b, a = line_colour(page, at["x"], at["y"])
        w = now.layers[layer].neurons[neuron].w[inp].data
        assert (b > r) == (w >= 0), (layer, inp, w, (r, g_, b))


def test_gradients_of_the_largest_network_on_a_phone(
    phone: Any, playground: str, screenshot: Any
) -> None:
    page = open_train(phone, playground, "?hidden=32,32,32,32,32,32&grads=1")
    assert page.get_by_label("links show ∂L/∂w, the gradient").is_checked()
    steps(page, 2)
    page.wait_for_function("() => window.trainView.frame().grads")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.locator("#net").scroll_into_view_if_needed()
    screenshot(page, "train-largest-gradients-phone")


# ------------------------------------------------------------------ biases, by pointer and keyboard


def test_a_bias_hovered_clicked_and_set(page: Any, playground: str, screenshot: Any) -> None:
    open_train(page, playground, "?hidden=1")
    steps(page, 2)
    b = model_of(page).layers[0].neurons[0].b.data
    assert hover_tip(page, 0, 0, None).startswith(f"b (layer 1, neuron 1) = {fmt(b)} · ∂L/∂b = ")
    at = page.evaluate("() => window.trainView.where(0, 0, null)")
    page.mouse.move(0, 0)
    page.wait_for_function("() => document.getElementById('net-tip').hidden")
    assert not dark_around(page, at["x"], at["y"], "x")
    page.mouse.click(at["x"], at["y"])
    box = page.get_by_label("b (layer 1, neuron 1)")
    page.wait_for_function("() => document.getElementById('weight-value').value !== ''")
    assert float(box.input_value()) == b  # the exact value, not its picture
    assert dark_around(page, at["x"], at["y"], "x")  # the bias being edited: ringed in black
    # and its gradient, under the box (a phone cannot hover to read it)
    g = page.evaluate("() => window.trainView.call('view', {read: [0, 0, null]})")["read"]["grad"]
    assert page.locator("#weight-grad").text_content() == f"∂L/∂b = {fmt(g)}"
    screenshot(page, "train-bias-editor")
    box.fill("0.625")
    box.press("Enter")
    page.wait_for_function("() => document.getElementById('weight-form').hidden")
    assert model_of(page).layers[0].neurons[0].b.data == 0.625
    steps(page, 1)  # training goes on from there
    assert model_of(page).layers[0].neurons[0].b.data != 0.625


def test_the_link_being_edited_is_highlighted(page: Any, playground: str) -> None:
    open_train(page, playground, "?hidden=1")
    at = page.evaluate("() => window.trainView.where(1, 0, 0)")  # h1.1 -> the output
    ends = page.evaluate("() => window.trainView.meta().sizes")
    assert ends == [2, 1, 1]
    page.mouse.move(0, 0)
    assert not dark_around(page, at["x"], at["y"], "y")  # the line is horizontal here
    page.mouse.click(at["x"], at["y"])
    page.get_by_label("w (layer 2, neuron 1, input 1)").wait_for()
    assert dark_around(page, at["x"], at["y"], "y")  # a dark halo along it
    page.get_by_role("button", name="Close the weight editor").click()
    page.wait_for_function("() => document.getElementById('weight-form').hidden")


def test_links_and_biases_by_keyboard(page: Any, playground: str) -> None:
    open_train(page, playground, "?hidden=2,2")
    model = model_of(page)
    page.get_by_label("links show ∂L/∂w, the gradient").focus()
    page.keyboard.press("Tab")  # the next stop: the links and biases
    assert page.evaluate("() => document.activeElement.id") == "net-links"
    tip = page.locator("#net-tip")

    def reads(name: str, value: float) -> None:
        page.wait_for_function(
            "(name) => { const t = document.getElementById('net-tip').textContent;"
            " return t.startsWith(name) && !t.includes('…'); }",
            arg=name,
        )
        assert tip.text_content().startswith(f"{name} = {fmt(value)} · ")

    n11 = model.layers[0].neurons[0]
    reads("w (layer 1, neuron 1, input 1)", n11.w[0].data)
    page.keyboard.press("ArrowDown")
    reads("w (layer 1, neuron 1, input 2)", n11.w[1].data)
    page.keyboard.press("ArrowDown")  # past the inputs: the neuron's bias
    reads("b (layer 1, neuron 1)", n11.b.data)
    page.keyboard.press("ArrowDown")  # and on to the next neuron
    reads("w (layer 1, neuron 2, input 1)", model.layers[0].neurons[1].w[0].data)
    page.keyboard.press("PageDown")  # the next layer
    reads("w (layer 2, neuron 2, input 1)", model.layers[1].neurons[1].w[0].data)
    page.keyboard.press("ArrowLeft")  # the neuron above
    reads("w (layer 2, neuron 1, input 1)", model.layers[1].neurons[0].w[0].data)
    page.keyboard.press("ArrowUp")  # before its first input: the bias of the neuron above
    reads("b (layer 2, neuron 2)", model.layers[1].neurons[1].b.data)
    page.keyboard.press("Enter")
    box = page.get_by_label("b (layer 2, neuron 2)")
    page.wait_for_function("() => document.getElementById('weight-value').value !== ''")
    assert page.evaluate("() => document.activeElement.id") == "weight-value"
    box.fill("-1.5")
    box.press("Enter")
    page.wait_for_function("() => document.getElementById('weight-form').hidden")
    assert model_of(page).layers[1].neurons[1].b.data == -1.5
    assert page.evaluate("() => document.activeElement.id") == "net-links"  # back where it was
    page.keyboard.press("Enter")
    page.get_by_label("b (layer 2, neuron 2)").press("Escape")
    page.wait_for_function("() => document.getElementById('weight-form').hidden")
    assert page.evaluate("() => document.activeElement.id") == "net-links"


# ------------------------------------------------------------------ regression, clusters, legends


def test_a_regression_drawn_as_a_colour_field(page: Any, playground: str, screenshot: Any) -> None:
    open_train(page, playground)
    page.get_by_label("Dataset").select_option("bumps")
    page.wait_for_function("() => window.trainView.meta().settings.dataset === 'bumps'")
    # the loss a regression takes
    assert page.get_by_label("Loss", exact=True).input_value() == "mse"
    assert page.locator("#acc-text").is_hidden()  # no classes, no accuracy
    legend = page.locator("#plot-legend").text_content()
    assert legend.startswith("the output s over the plane, and each point's target y")
    assert [t.text_content() for t in page.locator("#plot-legend .lg-ticks span").all()] == [
        "−1",
        "−0.5",
        "0",
        "+0.5",
        "+1",
    ]
    page.evaluate(
        "() => window.trainView.call('config', Object.assign("
        "window.trainView.meta().settings, {lr: 0.1}))"
    )
    page.wait_for_function("() => window.trainView.meta().settings.lr === 0.1")
    steps(page, 400)
    meta = page.evaluate("() => window.trainView.meta()")
    model = model_of(page)
    # the field's colour at each bump's centre is the network's output there: blue where s > 0
    x0, x1, y0, y1 = meta["extent"]
    plot = page.locator("#plot").bounding_box()
    for bx, by in ((-0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (0.5, -0.5)):
        s = model([bx, by]).data
        assert abs(s) > 0.5, s  # learnt: the bumps are ±1 high
        px = plot["x"] + (bx - x0) / (x1 - x0) * plot["width"]
        py = plot["y"] + (y1 - by) / (y1 - y0) * plot["height"]
        r, g, b, _ = page.evaluate(PIXEL.replace("net-links", "plot"), [px, py])
        assert (b > r) == (s > 0), ((bx, by), s, (r, g, b))
    # a point added by hand carries the target typed (shift: its negative)
    n = len(meta["points"])
    page.get_by_label("y =").fill("-0.4")
    page.locator("#plot").click(position={"x": 30, "y": 30})
    page.wait_for_function("(n) => window.trainView.meta().points.length === n + 1", arg=n)
    assert page.evaluate("() => window.trainView.meta().points.at(-1)[2]") == -0.4
    assert (
        page.locator("#add-hint")
        .text_content()
        .startswith("Click the plot to add a point (shift-click: the target's negative).")
    )
    # the chosen point's caption names its target (a number, as the page writes numbers)
    x, y, t = page.evaluate("() => window.trainView.meta().points[window.trainView.meta().pick]")
    assert (
        page.locator("#graph-point").text_content()
        == f"(point {meta['pick']}: x = {fmt(x)}, {fmt(y)}, target {fmt(t)})"
    )
    screenshot(page, "train-regression")
    # on the classes' sets, a class
    page.get_by_label("Dataset").select_option("moons")
    page.wait_for_function("() => window.trainView.meta().settings.dataset === 'moons'")
    assert page.locator("#graph-point").text_content().endswith(", class 0)")
    assert (
        page.locator("#add-hint")
        .text_content()
        .startswith("Click the plot to add a point (shift-click: the other class).")
    )


def test_without_a_hidden_layer_the_formula_says_no_activation_is_used(
    page: Any, playground: str
) -> None:
    open_train(page, playground, "?hidden=")
    assert page.evaluate("() => window.trainView.meta().sizes") == [2, 1]
    assert page.locator("#act-formula").text_content() == (
        "no hidden layer: the output is s = w·x + b, a line (no activation is used)"
    )


def test_a_regression_on_a_phone(phone: Any, playground: str, screenshot: Any) -> None:
    page = open_train(phone, playground, "?dataset=plane&loss=mse")
    steps(page, 100)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert page.locator("#plot-legend").is_visible()
    screenshot(page, "train-regression-phone")


def test_gaussian_clusters(page: Any, playground: str) -> None:
    open_train(page, playground, "?dataset=gauss")
    assert page.get_by_label("Dataset").input_value() == "gauss"
    steps(page, 30)
    assert page.locator("#acc-text").text_content() == "accuracy 100.0%"


def test_every_heat_map_has_a_legend_with_its_scale(page: Any, playground: str) -> None:
    open_train(page, playground, "?hidden=3")
    steps(page, 5)

    def ticks(sel: str) -> list[str]:
        return [t.text_content() for t in page.locator(f"{sel} .lg-ticks span").all()]

    # the decision regions: the output s, shaded by tanh s
    assert page.locator("#plot-legend .lg-title").text_content().startswith("the output s")
    assert ticks("#plot-legend") == ["−3", "−1", "0", "+1", "+3"]
    page.get_by_label("discretize output").check()
    page.wait_for_function(
        "() => document.getElementById('plot-legend').textContent"
        ".includes('the sign of the output')"
    )
    assert ticks("#plot-legend") == ["−1 (s < 0)", "+1 (s > 0)"]
    page.get_by_label("discretize output").uncheck()
    # a neuron on the plot: its own scale, the largest |h| over the plane
    name = "neuron h1.2: hover or focus to see its output on the plot"
    page.get_by_role("img", name=name).hover()
    page.wait_for_function(
        "() => document.getElementById('plot-legend').textContent.startsWith('neuron h1.2')"
    )
    meta = page.evaluate("() => window.trainView.meta()")
    model = model_of(page)
    x0, x1, y0, y1 = meta["extent"]
    side = meta["grid"]
    m = max(
        abs(
            model.layers[0]
            .outputs([x0 + (x1 - x0) * (c + 0.5) / side, y1 - (y1 - y0) * (r + 0.5) / side])[1]
            .data
        )
        for r in range(side)
        for c in range(side)
    )
    page.wait_for_function(
        "(m) => window.trainView.frame().shown && window.trainView.frame().shown.neuron === 1",
        arg=m,
    )
    assert ticks("#plot-legend") == [tick(-m), "0", tick(m, plus=True)]
    # the neuron squares and the links: a legend each, under the network
    assert ticks("#heat-legend") == ["−max", "0", "+max"]
    assert ticks("#net-legend") == ["−3", "0", "+3"]
    assert "its own largest |h|" in page.locator("#heat-legend").text_content()
    # three classes: each class's colour
    open_train(page, playground, "?dataset=spiral3&loss=cross_entropy")
    assert ticks("#plot-legend") == ["class 0", "class 1", "class 2"]
    assert "softmax" in page.locator("#plot-legend .lg-title").text_content()
    assert not math.isnan(m)
