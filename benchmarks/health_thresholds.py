"""What `micrograd.train.diagnose`'s thresholds stand on: each quantity it judges, measured
on the healthy runs (the moons demo, the same net in tanh, microgpt's first 200 steps) and on
each broken preset (health_presets.BROKEN, and the GPT view's BROKEN_GPT on microgpt) and its
fix, and the causes diagnosed.

    MICROGRAD_NAMES_FILE=/work/shared/data/names.txt python benchmarks/health_thresholds.py

Prints the Markdown table docs/health.md shows. Each quantity is the worst over every window of
THRESHOLDS['window'] steps in the run (the diagnosis reads the last window at each step).
With ``--cost``: the moons demo's steps per second with and without ``fit(..., health=True)``,
on the jit step and on the eager one (best of 3 runs each).
"""

from __future__ import annotations

import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from micrograd.train.diagnose import THRESHOLDS, diagnose  # noqa: E402
from micrograd.train.health import mean  # noqa: E402
from micrograd.train.health_presets import (  # noqa: E402
    BROKEN,
    BROKEN_GPT,
    run_broken,
    run_broken_gpt,
    run_microgpt,
    run_moons,
)


def measures(hs: list) -> dict[str, float]:
    W = THRESHOLDS["window"]
    worst = {"saturated": 0.0, "dead": 0.0, "update_data": -math.inf, "stale_grad": 0.0}
    worst["init_scale"] = 0.0
    causes: set[str] = set()
    for k in range(len(hs)):
        win = hs[max(0, k - W + 1) : k + 1]
        causes |= {d.cause for d in diagnose(hs[: k + 1])}
        for i in range(len(win[-1].layers)):
            lays = [s.layers[i] for s in win if s.layers[i].recorded]
            sat = [h.saturated for h in lays if h.saturated is not None]
            if sat:
                worst["saturated"] = max(worst["saturated"], mean(sat))
            masks = [h.dead_units for h in lays if h.dead_units is not None]
            if masks and len(win) == W:  # a full window: as persistent as the diagnosis asks
                n = len(masks[0])
                share = sum(all(m[j] for m in masks) for j in range(n)) / n
                worst["dead"] = max(worst["dead"], share)
            stale = [h.stale_grad for h in lays if h.stale_grad is not None]
            if stale:
                worst["stale_grad"] = max(worst["stale_grad"], mean(stale))
        for w in hs[k].weights:
            if math.isfinite(w.update_data):
                worst["update_data"] = max(worst["update_data"], w.update_data)
            if math.isfinite(w.gain) and w.data_std:
                scale = w.data_std * math.sqrt(w.shape[1]) / w.gain
                worst["init_scale"] = max(worst["init_scale"], scale)
    return {**worst, "causes": ", ".join(sorted(causes)) or "(none)"}  # type: ignore[dict-item]


def main() -> None:
    runs = [
        ("moons demo (ReLU), 100 steps", lambda: run_moons(100).health),
        ("moons demo in tanh, 100 steps", lambda: run_moons(100, activation="tanh").health),
    ]
    for name, p in BROKEN.items():
        runs.append((f"{p.title}: {p.change}, 50 steps", lambda n=name: run_broken(n, 50).health))
        runs.append((f"  fixed: {p.fix}", lambda n=name: run_broken(n, 50, fixed=True).health))
    runs.append(("microgpt, first 200 steps", lambda: run_microgpt(200)))
    for name, p in BROKEN_GPT.items():  # (the GPT view's presets, on makemore's names)
        runs.append(
            (f"microgpt, {p.title}: {p.change}, 50 steps", lambda n=name: run_broken_gpt(n))
        )
        runs.append((f"  fixed: {p.fix}", lambda n=name: run_broken_gpt(n, fixed=True)))
    keys = ["saturated", "dead", "update_data", "stale_grad", "init_scale"]
    print("| run | " + " | ".join(keys) + " | diagnosed |")
    print("|---|" + "---:|" * len(keys) + "---|")
    print("| threshold | " + " | ".join(f"> {THRESHOLDS[k]}" for k in keys) + " | |")
    for title, run in runs:
        m = measures(run())
        cells = " | ".join(f"{m[k]:.3g}" for k in keys)
        print(f"| {title} | {cells} | {m['causes']} |", flush=True)


def cost() -> None:
    from micrograd import MLP, data, optim
    from micrograd.train import Step, fit
    from micrograd.train.jit_step import JitStep

    X, y = data.moons(100, 0.1, 1337)
    for kind, n in (("jit", 100), ("eager", 20)):
        rate = {}
        for health in (False, True):
            best = 0.0
            for _ in range(3):
                random.seed(1337)
                model = MLP(2, [16, 16, 1])
                opt = optim.SGD(model.parameters(), lr=1.0)
                step = (JitStep if kind == "jit" else Step)(model, "hinge", 1e-4)
                t = time.perf_counter()
                fit(
                    model, X, y, optimizer=opt, steps=n, step_fn=step, progress=False, health=health
                )
                best = max(best, n / (time.perf_counter() - t))
            rate[health] = best
        print(
            f"{kind}: {rate[False]:.0f} steps/s plain, {rate[True]:.0f} with health "
            f"({rate[True] / rate[False]:.0%})"
        )


if __name__ == "__main__":
    cost() if "--cost" in sys.argv[1:] else main()
