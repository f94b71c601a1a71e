"""Networks broken on purpose, and the healthy runs they are told apart from (`train.diagnose`).

Each `Broken` preset is the moons demo (`micrograd demo`: MLP(2, [16, 16, 1]), hinge + 1e-4 L2,
SGD at lr 1.0 decaying to 0.1, full batch, seed 1337) with one thing changed, the way a learner
breaks it on their own; `cause` is what `train.diagnose` must name, `fix` what puts it right.
`run_moons` trains one (eager, so the layers' activations are read too) and `run_microgpt`
trains microgpt's first steps, both with their health. benchmarks/health_thresholds.py prints
what they measure (docs/health.md), tests/test_health.py holds the diagnoses to them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .. import data
from .health import Monitor, StepHealth


@dataclass(frozen=True)
class Broken:
    title: str  # as a menu shows it
    cause: str  # the diagnose.Diagnosis cause it must show
    change: dict[str, Any]  # what differs from the moons demo (see `run_moons`)
    fix: dict[str, Any] = field(default_factory=dict)  # what the "Fix it" puts back


BROKEN: dict[str, Broken] = {
    "saturated_tanh": Broken(
        "Saturated tanh", "saturated", {"activation": "tanh", "init_scale": 3.0}, {"kaiming": True}
    ),
    "dead_relus": Broken("Dead ReLUs", "dead", {"bias": -1.0}, {"bias": 0.0}),
    "lr_too_high": Broken("Learning rate too high", "update_data", {"lr": 10.0}, {"lr": 1.0}),
    "no_zero_grad": Broken("No zero_grad", "zero_grad", {"zero_grad": False}, {"zero_grad": True}),
    "init_too_large": Broken("Init too large", "init", {"init_scale": 10.0}, {"kaiming": True}),
}

# The presets that apply to microgpt's GPT (the GPT view's): its only activation is the ReLU of
# each block's MLP, and it has no biases, so its ReLUs are killed by the signs of the init rather
# than by biases started negative: every weight of mlp.fc1 drawn negative and every embedding
# positive, so each ReLU's input starts below 0 (100% dead at step 1, on makemore's names and on
# the built-in words, 1 or 2 layers). "Learning rate too high" is his Adam at 0.3 instead of
# 0.01 (update:data 10^0.6 at step 1; 10^-0.84 at 0.01). Neither "Saturated tanh" (no tanh) nor
# "No zero_grad" (his Adam zeroes the grads in its step: a learner using it cannot forget)
# applies. (benchmarks/health_thresholds.py measures them.)
BROKEN_GPT: dict[str, Broken] = {
    "dead_relus": Broken(
        "Dead ReLUs", "dead", {"negative_relu_inputs": True}, {"negative_relu_inputs": False}
    ),
    "lr_too_high": Broken("Learning rate too high", "update_data", {"lr": 0.3}, {"lr": 0.01}),
}


def build_moons(
    activation: str = "relu",
    init_scale: float = 1.0,
    bias: float = 0.0,
    kaiming: bool = False,
    seed: int = 1337,
) -> Any:
    """The moons demo's MLP(2, [16, 16, 1]) as karpathy's seed draws it, its weights times
    `init_scale` (or, with `kaiming`, redrawn from N(0, (gain / √fan_in)²)) and its hidden
    biases set to `bias`."""
    from ..nn import MLP

    random.seed(seed)
    model = MLP(2, [16, 16, 1], activation=activation)
    apply_init(model, init_scale, bias, kaiming)
    return model


def apply_init(
    model: Any, init_scale: float = 1.0, bias: float = 0.0, kaiming: bool = False
) -> None:
    """`build_moons`'s changes to an MLP as built: its weights times `init_scale` (or, with
    `kaiming`, redrawn from N(0, (gain / √fan_in)²) with the global `random`, as seeded) and its
    hidden layers' biases set to `bias`. (The Train view's Health presets use it too.)"""
    from .health import KAIMING_GAIN

    for layer in model.layers:
        for n in layer.neurons:
            if kaiming:
                std = KAIMING_GAIN.get(n.activation, 1.0) / len(n.w) ** 0.5
                for w in n.w:
                    w.data = random.gauss(0.0, std)
            else:
                for w in n.w:
                    w.data *= init_scale
    for layer in model.layers[:-1]:
        for n in layer.neurons:
            n.b.data = bias


def apply_gpt_init(model: Any, negative_relu_inputs: bool = False) -> None:
    """`BROKEN_GPT`'s init change to a GPT as built: with `negative_relu_inputs`, every weight
    of each block's mlp.fc1 made negative and every embedding (wte, wpe) positive (microgpt's
    N(0, 0.08) with its signs lost), so each ReLU's input starts below 0."""
    if not negative_relu_inputs:
        return
    sd = model.sd
    for key, sign in [("wte", 1.0), ("wpe", 1.0)] + [
        (f"layer{i}.mlp_fc1", -1.0) for i in range(model.n_layer)
    ]:
        for row in sd[key]:
            for w in row:
                w.data = sign * abs(w.data)


def run_moons(steps: int = 100, lr: float = 1.0, zero_grad: bool = True, **build: Any) -> Any:
    """Train the moons demo (changed as `build_moons` and the arguments say) with
    ``fit(..., health=True)``; returns the History (a diverged run's, up to where it stopped)."""
    from ..optim import SGD, LinearDecay
    from . import Diverged, Step, fit

    X, y = data.moons(100, 0.1, 1337)
    model = build_moons(**build)
    opt = SGD(model.parameters(), lr=lr)
    sched = LinearDecay(opt, lr, lr * 0.1, max(steps, 1))
    step = Step(model, "hinge", 1e-4, zero_grad=zero_grad)
    try:
        return fit(
            model,
            X,
            y,
            optimizer=opt,
            scheduler=sched,
            steps=steps,
            step_fn=step,
            progress=False,
            health=True,
        )
    except Diverged as e:
        return e.history


def run_broken(name: str, steps: int = 50, fixed: bool = False) -> Any:
    """The preset `name` of `BROKEN` trained for `steps` (with its fix applied if `fixed`)."""
    if name not in BROKEN:
        raise ValueError(f"health: unknown preset {name!r}; choose one of {', '.join(BROKEN)}")
    p = BROKEN[name]
    kw = {**p.change, **(p.fix if fixed else {})}
    if kw.pop("kaiming", False):
        kw["kaiming"], kw["init_scale"] = True, 1.0
    return run_moons(steps, **kw)


def run_microgpt(
    steps: int = 200,
    seed: int = 42,
    lr: float = 0.01,
    negative_relu_inputs: bool = False,
    docs: list[str] | None = None,
) -> list[StepHealth]:
    """microgpt's first `steps` steps (makemore's names, or `docs`; his Adam over 1000 steps)
    with the health of each; `negative_relu_inputs`: `apply_gpt_init`'s change. A run whose
    loss has no value (a probability 0: log(0), the learning rate far too high) stops there."""
    from .. import gpt

    docs, tok, model = gpt.prepare(docs, seed)
    apply_gpt_init(model, negative_relu_inputs)
    adam = gpt.Adam(model.parameters(), 1000, lr=lr)
    monitor = Monitor(model)
    out = []
    for k in range(steps):
        try:
            with monitor.recording():
                loss = model.loss(tok.encode(docs[k % len(docs)]))
                loss.backward()
        except ValueError:  # log(0): diverged
            break
        monitor.read_grads()  # before adam.step(): it zeroes the grads
        adam.step()
        out.append(monitor.read_update(k))
    return out


def run_broken_gpt(
    name: str, steps: int = 50, fixed: bool = False, docs: list[str] | None = None
) -> list[StepHealth]:
    """The GPT preset `name` of `BROKEN_GPT` trained for `steps` (with its fix if `fixed`)."""
    if name not in BROKEN_GPT:
        raise ValueError(
            f"health: unknown GPT preset {name!r}; choose one of {', '.join(BROKEN_GPT)}"
        )
    p = BROKEN_GPT[name]
    return run_microgpt(steps, docs=docs, **{**p.change, **(p.fix if fixed else {})})
