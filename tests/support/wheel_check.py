"""What an installed wheel computes, run by that wheel's Python alone (standard library and
micrograd only: no clone, no tests package): which engine it has, karpathy's moons demo written
as his demo.ipynb writes it (the loss at step 99, 0.010978370135492717), and microgpt's first
losses on makemore's names (MICROGRAD_NAMES_FILE or micrograd.data.names()'s own; left out with
--no-gpt). Prints one JSON object, every float as its repr (the bits).

    python wheel_check.py [--compiled | --pure] [--no-gpt]

--compiled / --pure: exit 1 with one line unless the engine is that one (cibuildwheel's
test-command: pyproject.toml; tests/test_release_wheels.py)."""

from __future__ import annotations

import json
import random
import sys

KARPATHY_LOSS = 0.010978370135492717  # step 99 of karpathy's demo.ipynb
MICROGPT_STEP_1 = 3.3659669475848504  # step 1 of karpathy's microgpt (seed 42, his names)


def moons_loss() -> float:
    from micrograd import data
    from micrograd.engine import Value
    from micrograd.nn import MLP

    X, y = data.moons(n_samples=100, noise=0.1, seed=1337)
    random.seed(1337)
    model = MLP(2, [16, 16, 1])  # 2-layer neural network

    def loss() -> Value:
        inputs = [list(map(Value, xrow)) for xrow in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum(p * p for p in model.parameters())
        return data_loss + reg_loss

    for k in range(100):
        total_loss = loss()
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
    return total_loss.data


def gpt_losses(steps: int = 3) -> list[float]:
    from micrograd.gpt import microgpt

    return microgpt(steps=steps, seed=42)[2]


def main(argv: list[str]) -> int:
    from micrograd.core.compiled import COMPILED

    want = {"--compiled": True, "--pure": False}
    for flag, compiled in want.items():
        if flag in argv and COMPILED is not compiled:
            engine = "the compiled core" if COMPILED else "the pure engine"
            print(f"wheel_check: {flag} asked, and this micrograd has {engine}", file=sys.stderr)
            return 1
    said: dict[str, object] = {"compiled": COMPILED, "moons": repr(moons_loss())}
    if "--no-gpt" not in argv:
        said["gpt"] = [repr(x) for x in gpt_losses()]
    print(json.dumps(said))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
