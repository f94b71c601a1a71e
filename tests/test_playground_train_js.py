"""The Train view's step and pictures in JavaScript (micrograd/playground/training/train_js.py,
train_step.js), run in Node.js: the pictures' quick tanh against math.tanh, their WebAssembly
kernel against the JavaScript layers and the model's own numbers, and 200 steps of the step
against the server's numpy jit, bit for bit."""

from __future__ import annotations

import math
import random
import shutil
from typing import Any

import pytest

from micrograd.jit import js_target
from micrograd.nn import MLP
from micrograd.playground.training import train_js

if shutil.which("node") is None and shutil.which("nodejs") is None:
    pytest.skip("Node.js is not installed (apt install nodejs)", allow_module_level=True)


@pytest.fixture(scope="module")
def node() -> Any:
    host = js_target.NodeHost()
    host.compile("return {};")  # its Node.js started here: the module's, not its first test's
    yield host
    host.close()


def test_the_pictures_tanh_is_within_3e_8_of_tanh(node: Any) -> None:
    # the pictures' quick tanh (a rational fit) is nowhere further from tanh than 3e-8: far
    # below the 1/255 a picture's byte shows; NaN stays NaN, the infinities go to ±1
    xs = [i / 1000 for i in range(-12_000, 12_001)] + [1e-300, -1e-300, 355.0, -800.0]
    run = node.compile(
        train_js.quick_tanh_source()
        + "return {f: (xs) => xs.map((x) => String($qtanh(Number(x))))};"
    )
    got = [float(t) for t in run("f", [*xs, "NaN", "Infinity", "-Infinity"])]
    assert max(abs(g - math.tanh(x)) for g, x in zip(got, xs)) < 3e-8
    assert math.isnan(got[-3]) and got[-2] == pytest.approx(1, abs=3e-8) == -got[-1]


@pytest.mark.parametrize(
    "nin, sizes, act",
    [
        (2, [32] * 6 + [1], "tanh"),
        (2, [32, 32, 1], "relu"),
        (3, [40, 30, 3], "sigmoid"),
        (2, [33, 33, 1], "linear"),
        (2, [8, 8, 1], "tanh"),
    ],
)
def test_the_pictures_kernel_gives_the_javascript_layers_bits(
    node: Any, nin: int, sizes: list, act: str
) -> None:
    # The pictures' WebAssembly kernel (eight neurons at once in SIMD lanes, padded to eight)
    # adds each sum in the order the JavaScript layers do, with the same quick tanh: the same
    # bits, every layer, any width; and both are the model's own numbers (to the quick tanh's
    # error). A small network draws in JavaScript (the kernel's copies cost more than it saves).
    rng = random.Random(3)
    model = MLP(nin, sizes, activation=act)
    for p in model.parameters():
        p.data = rng.uniform(-1.5, 1.5)
    run = node.compile(
        train_js.mlp_source(model)
        + train_js.step_js()
        + """return {run(arg) {
          const P = Float64Array.from(arg.P), X = Float64Array.from(arg.X);
          const a = layers(P, X, arg.N), b = jsLayers(P, X, arg.N);
          return {kernel: layers !== jsLayers, a: a.map((h) => Array.from(h)),
                  b: b.map((h) => Array.from(h))};
        }};"""
    )
    points = [[rng.uniform(-3, 3) for _ in range(nin)] for _ in range(37)]
    got = run("run", {"P": [p.data for p in model.parameters()], "X": sum(points, []), "N": 37})
    weights = sum(a * b for a, b in zip([nin, *sizes], sizes))
    assert got["kernel"] == (weights >= train_js.WASM_FROM)
    assert got["a"] == got["b"]
    for j, x in enumerate(points):
        acts = [x]
        for layer in model.layers:
            acts.append([v.data for v in layer.outputs(acts[-1])])
        for layer, want in zip(got["a"], acts[1:]):
            width = len(want)
            # (the quick tanh's 3e-8, grown through up to six layers of 32 weights to ±1.5)
            assert layer[j * width : (j + 1) * width] == pytest.approx(want, abs=1e-5)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("hidden", [(8, 8), (32,) * 6], ids=["default", "6x32"])
@pytest.mark.slow
def test_200_steps_of_the_javascript_step_are_numpys_jit_to_the_bit(
    hidden: tuple, optimizer: str
) -> None:
    """The Train view's step (loss, backward, L2, the optimizer's update) written as JavaScript
    and run in Node.js, against the server's numpy jit: every sum adds in the one order both
    targets follow (jit_graph: how every sum adds), so 200 steps of moons give the same losses
    and the same weights, bit for bit (BLAS's order drifted 6x32 with Adam to 3e-5)."""
    from micrograd.playground.training.engines import JavaScriptEngine
    from micrograd.playground.training.train_settings import Settings
    from micrograd.playground.training.trainer import Trainer

    runs = [
        Trainer(Settings(hidden=hidden, optimizer=optimizer), use_jit=name)
        for name in ("numpy", "javascript")
    ]
    numpy_run, js_run = runs
    assert isinstance(js_run.mlp.engine, JavaScriptEngine)
    losses = [[tr.mlp.engine.step(tr.mlp.next_batch()) for _ in range(200)] for tr in runs]
    assert losses[1] == losses[0]  # (loss, accuracy before the update) of each step
    js_run.mlp.engine.sync()
    assert [p.data for p in js_run.params] == [p.data for p in numpy_run.params]
    assert [p.grad for p in js_run.params] == [p.grad for p in numpy_run.params]
