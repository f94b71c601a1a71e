"""Why isn't it learning? The health of a network's last steps (`train.health`), read as a
teacher would: each problem named by its cause and makemore part 3's fix, with the numbers.

    for problem in diagnose(fit(model, X, y, ..., health=True).health):
        print(problem)      # e.g. layer 2: 78% of its tanh units saturated (|t| > 0.97): ...

Each threshold was chosen from measurements (`THRESHOLDS`: healthy runs silent at every step,
each broken preset of `train.health_presets` caught); docs/health.md gives the table and the
command that measured it (benchmarks/health_thresholds.py). Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .health import SATURATED, StepHealth, mean

# Each threshold, and the measurement it stands on (docs/health.md: the table, and the command,
# benchmarks/health_thresholds.py, that measured it).
THRESHOLDS = {
    "window": 10,  # the last steps a diagnosis reads
    # mean share of a tanh layer's outputs with |t| > 0.97 over the window: the moons demo's net
    # in tanh peaks at 0.29 (layer 2, step 100); weights 3x that init: 0.78
    "saturated": 0.5,
    # share of a ReLU layer's units dead in every step of the window: the moons demo at most
    # 0.12, microgpt 0.09 (over 10 documents); biases started at -1: 0.44 to 0.62
    "dead": 0.3,
    # largest log10(update:data) of a matrix in the window: the moons demo's SGD at lr 1.0
    # peaks at -0.25 (its first step, layer 1), in tanh with Kaiming's init at +0.18, microgpt's
    # Adam at -0.84; lr 10x: +0.75 on its first step
    "update_data": 0.5,
    # the healthy peak the "lr about Nx too high" estimate compares with: the moons demo's
    "update_data_healthy": -0.25,
    # mean share of the bias grads the step's batch does not explain: ~1e-16 with zero_grad,
    # 0.5 to 1 without
    "stale_grad": 0.1,
    # std(W)·√fan_in / gain (1 is Kaiming's init): the moons demo's uniform(-1, 1) is 2.3 in
    # its output layer, microgpt's at most 0.92; the moons net with weights 3x is 4.2 and up
    "init_scale": 4.0,
}


@dataclass
class Diagnosis:
    """One problem: its `cause` (a key: 'saturated', 'dead', 'update_data', 'zero_grad',
    'init'), the layer or matrix it is in, and the sentence a learner reads (`str`)."""

    cause: str
    where: str
    message: str

    def __str__(self) -> str:
        return self.message


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _times(x: float) -> str:
    """A factor to one significant figure: 112 -> '100', 13 -> '10', 3.4 -> '3'."""
    if x < 1.5:
        return f"{x:.1f}"
    e = math.floor(math.log10(x))
    return f"{round(x / 10**e) * 10**e:.0f}"


def diagnose(history: Sequence[StepHealth], thresholds: dict | None = None) -> list[Diagnosis]:
    """The problems the last steps of `history` (a list of `StepHealth`, oldest first, such as
    ``fit(..., health=True).health``) show, each by its cause and the lecture's fix, with the
    numbers; an empty list for a healthy network."""
    t = {**THRESHOLDS, **(thresholds or {})}
    if not history:
        return []
    win = list(history[-t["window"] :])
    last = win[-1]
    out: list[Diagnosis] = []
    for i, lay in enumerate(last.layers):
        steps = [s.layers[i] for s in win if s.layers[i].recorded]
        if not steps:
            continue
        sat = [h.saturated for h in steps if h.saturated is not None]
        if sat and mean(sat) > t["saturated"]:
            out.append(
                Diagnosis(
                    "saturated",
                    lay.name,
                    f"{lay.name}: {_pct(mean(sat))} of its tanh units saturated (|t| > "
                    f"{SATURATED}): its pre-activations are too large, so tanh' = 1 - t² is near "
                    f"0 and little gradient gets through: scale the init by 5/3 / √fan_in "
                    f"(Kaiming: 5/3 / √{lay.fan_in} = {5 / 3 / math.sqrt(lay.fan_in):.3g}) or "
                    "lower the weights' scale",
                )
            )
        masks = [h.dead_units for h in steps if h.dead_units is not None]
        if masks and len(masks) == len(steps):
            dead = [all(m[j] for m in masks) for j in range(len(masks[0]))]
            share = sum(dead) / len(dead)
            if share > t["dead"]:
                since = _dead_since(history, i, dead)
                out.append(
                    Diagnosis(
                        "dead",
                        lay.name,
                        f"{lay.name}: {_pct(share)} of its ReLUs dead since step {since + 1} "
                        "(zero for every sample, so no gradient reaches their weights): the "
                        + (
                            "learning rate is too high or the biases start negative: lower the "
                            "learning rate, start the biases at 0, scale the init by √2 / √fan_in"
                            if lay.biases
                            else "learning rate is too high or the init puts their inputs below "
                            "0 (no biases here: the weights' signs do): lower the learning rate, "
                            "draw the weights with both signs, N(0, σ) (Kaiming: σ = √2 / √fan_in)"
                        ),
                    )
                )
        stale = [h.stale_grad for h in steps if h.stale_grad is not None]
        if stale and mean(stale) > t["stale_grad"] and not any(d.cause == "zero_grad" for d in out):
            out.append(
                Diagnosis(
                    "zero_grad",
                    lay.name,
                    f"grads grow every step without zero_grad: they are summed over steps "
                    f"({lay.name}: {_pct(mean(stale))} of its biases' grads come from earlier "
                    "steps' batches): call zero_grad() before backward()",
                )
            )
    # the first step of the window over the line: later ones measure a net already thrown off
    worst = None
    for s in win:
        finite = [
            (w.update_data, s.step, w.name) for w in s.weights if math.isfinite(w.update_data)
        ]
        if finite and max(finite)[0] > t["update_data"]:
            worst = max(finite)
            break
    if worst is not None:
        ud, step, name = worst
        n = _times(10 ** (ud - t["update_data_healthy"]))
        out.append(
            Diagnosis(
                "update_data",
                name,
                f"update:data 10^{ud:.1f} in {name} at step {step + 1}: each step moves the "
                f"weights by {10**ud:.2g}x their own spread (the moons demo peaks at "
                f"10^{t['update_data_healthy']}; makemore's guide: 10^-3): the learning rate is "
                f"about {n}x too high",
            )
        )
    for w in last.weights:
        if not math.isfinite(w.gain) or not w.data_std:
            continue
        scale = w.data_std * math.sqrt(w.shape[1]) / w.gain
        if scale > t["init_scale"]:
            kaiming = w.gain / math.sqrt(w.shape[1])
            out.append(
                Diagnosis(
                    "init",
                    w.name,
                    f"{w.name}: its weights' std {w.data_std:.3g} is {scale:.1f}x Kaiming's "
                    f"gain / √fan_in = {w.gain:.3g} / √{w.shape[1]} = {kaiming:.3g}: the init is "
                    f"too large: draw the weights with std {kaiming:.3g} (multiply them by "
                    f"{1 / scale:.2g})",
                )
            )
    return out


def _dead_since(history: Sequence[StepHealth], i: int, dead: list[bool]) -> int:
    """The step since which every unit in `dead` has been dead (0-based)."""
    since = history[-1].step
    for s in reversed(history):
        units = s.layers[i].dead_units
        if units is None or not all(units[j] for j, d in enumerate(dead) if d):
            break
        since = s.step
    return since
