"""`micrograd demo`: train a network end to end and write pictures of it.

    micrograd demo                  karpathy's moons demo, exactly: MLP(2, [16, 16, 1]), hinge loss
                                    + 1e-4 L2, SGD with lr = 1.0 - 0.9*k/100, 100 full-batch steps,
                                    seeds 1337; it ends at loss 0.010978370135492717, 100% accuracy
                                    (--no-jit: bit for bit; with jit: to 1e-9, numpy's sums)
    micrograd demo circles|xor|spiral   other 2-D sets, same recipe
    micrograd demo digits           8x8 handwritten digits, 10 classes: softmax cross-entropy, Adam,
                                    minibatches; reports accuracy on a held-out test set

Output goes to ``--out`` (default ``./micrograd-demo/``): ``decision_boundary.png`` (2-D sets) or
``predictions.png`` (digits), ``training.png`` (loss and accuracy per step) and ``model.json``
(``MLP.load`` reads it).

Everything a run does is fixed by a `DemoConfig`; `PRESETS` holds each data set's recipe and the
command-line options override it. The per-step work (forward, loss, backward) is one function,
`make_step_fn`. When numpy is importable it is `JitStep`: the same per-sample loss, written as
ordinary micrograd code, traced once by `micrograd.jit` and replayed over each batch with numpy
(same numbers to rounding, many times faster). ``--no-jit`` (``DemoConfig.jit = False``) runs the
eager engine, one scalar graph per sample, as the lecture does.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import numbers
import os
import random
import sys
from dataclasses import dataclass
from typing import Any

DATASETS = ("moons", "circles", "xor", "spiral", "digits")


@dataclass
class DemoConfig:
    dataset: str = "moons"  # moons | circles | xor | spiral | digits
    steps: int = 100  # optimisation steps, one batch each
    lr: float = 1.0  # learning rate at step 0; decays linearly to lr/10 at the last step
    seed: int = 1337  # seeds `random` (initial weights) and the data (karpathy's 1337)
    hidden: tuple[int, ...] = (16, 16)  # hidden layer sizes; the output layer is added
    activation: str = "relu"  # hidden-layer nonlinearity: a name in nn.ACTIVATIONS
    loss: str = "hinge"  # hinge (labels ±1, one output) | cross_entropy (class indices)
    alpha: float = 1e-4  # L2 regularisation strength, alpha * sum(p*p)
    optimizer: str = "sgd"  # sgd (karpathy's plain p -= lr*grad) | adam
    batch_size: int | None = None  # None: the full data set every step
    n_samples: int = 100  # points in the generated 2-D data sets
    test_size: float = 0.0  # share held out for a test accuracy (0: report training accuracy)
    eval_every: int = 0  # measure test accuracy every this many steps (0: only at the end)
    out: str = "micrograd-demo"  # directory for the PNGs and model.json
    progress: bool = True  # show a progress bar (tqdm when installed)
    jit: bool = True  # use micrograd.jit when numpy is importable (False: the eager engine)


# Each data set's recipe: the fields that differ from DemoConfig's defaults (karpathy's moons).
PRESETS: dict[str, dict[str, Any]] = {
    "moons": {},
    "circles": {"steps": 100},
    "xor": {"steps": 100},
    "spiral": {"n_samples": 200, "steps": 300},
    # Sized for the jit engine. Measured on 2 cores (seed 1337): jit ~8 s, test accuracy 96.9%
    # (seeds 1 and 2: 98.3%, 97.5%); --no-jit the same numbers in ~2.2 min. (32,) hidden units
    # and 1000 steps, the eager engine's old recipe, gave 96.4% (96.4%, 97.2%).
    "digits": {
        "hidden": (64,),
        "loss": "cross_entropy",
        "alpha": 0.0,
        "optimizer": "adam",
        "lr": 0.01,
        "steps": 2000,
        "batch_size": 32,
        "test_size": 0.2,
        "eval_every": 200,
    },
}


def config_for(dataset: str, **overrides: Any) -> DemoConfig:
    """The preset for `dataset` with `overrides` (None values are ignored) applied."""
    if dataset not in PRESETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    fields = {**PRESETS[dataset], **{k: v for k, v in overrides.items() if v is not None}}
    return DemoConfig(dataset=dataset, **fields)


def load_data(cfg: DemoConfig) -> tuple[list, list]:
    from . import data

    if cfg.dataset == "digits":
        return data.digits()
    make = {"moons": data.moons, "circles": data.circles, "xor": data.xor, "spiral": data.spiral}
    return make[cfg.dataset](n_samples=cfg.n_samples, seed=cfg.seed)


def build_model(cfg: DemoConfig, nin: int, nout: int) -> Any:
    from .nn import MLP

    random.seed(cfg.seed)  # karpathy seeds `random` right before building the MLP
    return MLP(nin, [*cfg.hidden, nout], activation=cfg.activation)


def numpy_available() -> bool:
    """Whether numpy can be imported (micrograd.jit needs it)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def uses_jit(cfg: DemoConfig) -> bool:
    """Whether a run of `cfg` trains with micrograd.jit: asked for, and numpy is there."""
    return cfg.jit and numpy_available()


def make_step_fn(cfg: DemoConfig, model: Any) -> Any:
    """The per-step computation: ``step(X_batch, y_batch) -> (loss, accuracy)`` with every
    parameter's gradient left in ``.grad``: a `JitStep` when `uses_jit(cfg)`, else the eager
    engine's (`train.make_step`)."""
    if uses_jit(cfg):
        return JitStep(model, cfg.loss, cfg.alpha)
    from .train import make_step

    return make_step(model, cfg.loss, cfg.alpha)


def make_evaluator(cfg: DemoConfig, model: Any) -> Any:
    """``accuracy(X, y) -> float`` of `model` as it is now, forward only, by the rule of
    `cfg.loss`: with `ModelOutputs` (jit) when `uses_jit(cfg)`, else `train.evaluate`."""
    from .train import ACCURACIES, evaluate

    if not uses_jit(cfg):
        return lambda X, y: evaluate(model, X, y, cfg.loss)
    import numpy as np

    outputs = ModelOutputs(model)
    rule = ACCURACIES[cfg.loss]
    return lambda X, y: rule(outputs(np.asarray(X, dtype=float)).tolist(), y)


# ------------------------------------------------------------------ the jit engine
# Per-sample losses, written as ordinary micrograd code for one sample (x: a list of Values, the
# target: a Value, or for cross-entropy a one-hot list of Values). Each is the formula of the
# batch loss of the same name in `losses`, term for term, so `jit` of it with reduce='mean' is
# that loss; none branches on .data, so one traced graph serves every sample.


def _hinge(model: Any) -> Any:
    return lambda x, y: (1 + -y * model(x)).relu()


def _mse(model: Any) -> Any:
    return lambda x, y: (model(x) - y) ** 2


def _bce(model: Any) -> Any:
    from .losses import softplus

    def bce(x: list, t: Any) -> Any:
        z = model(x)
        return softplus(z) - t * z

    return bce


def _cross_entropy(model: Any) -> Any:
    from .engine import Value
    from .losses import logsumexp

    def cross_entropy(x: list, onehot: list) -> Any:
        zs = model(x)
        if isinstance(zs, Value):
            raise TypeError(
                "cross_entropy: the model has one output; it needs one logit per class "
                "(for one output use the bce loss)"
            )
        # z[target] as a dot with the one-hot row: a graph that does not depend on the class.
        return logsumexp(zs) - Value.dot(zs, onehot)

    return cross_entropy


PER_SAMPLE_LOSSES = {
    "hinge": _hinge,
    "mse": _mse,
    "bce": _bce,
    "cross_entropy": _cross_entropy,
}


def _n_outputs(model: Any, x: list) -> int:
    from .engine import Value

    out = model(x)  # one eager forward: a Value for one output, else a list
    return 1 if isinstance(out, Value) else len(out)


class ModelOutputs:
    """`model`'s outputs for a batch, forward only, without a scalar graph per sample: call it
    with a (B, nin) array; get (B,) for a one-output model (as ``model(x)`` gives one Value),
    else (B, nout).

    One output: ``jit(model).outputs(X)``. Several: jit compiles functions with one output per
    sample, and nout of them would each replay the whole network and re-read every parameter,
    so an MLP goes through `plots.forward_numpy` (the same layers as numpy matrix products, one
    pass); any other model through one jitted function per output.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.n_outputs: int | None = None
        self._outputs: list = []

    def __call__(self, X: Any) -> Any:
        import numpy as np

        from .jit import jit
        from .nn import MLP

        model = self.model
        if self.n_outputs is None:
            self.n_outputs = _n_outputs(model, X[0].tolist())
        if self.n_outputs > 1 and isinstance(model, MLP):
            from .plots import forward_numpy

            return forward_numpy(model, X)
        if not self._outputs:
            if self.n_outputs == 1:
                self._outputs = [jit(lambda x: model(x))]
            else:
                self._outputs = [jit(lambda x, k=k: model(x)[k]) for k in range(self.n_outputs)]
        if self.n_outputs == 1:
            return self._outputs[0].outputs(X)
        return np.stack([f.outputs(X) for f in self._outputs], axis=1)


class JitStep:
    """The demo's step on micrograd.jit: ``step(X_batch, y_batch) -> (loss, accuracy)``, as
    `train.make_step` computes them, with every parameter's gradient left in ``.grad``.

    The batch loss is ``loss_fn(X, targets)``, one Value (op 'jit') whose children are the
    parameters, plus ``losses.l2`` when alpha > 0; `backward()` on their sum fills the grads.
    The accuracy comes from `outputs` (the model's per-sample outputs) by `train.ACCURACIES`.
    """

    def __init__(self, model: Any, loss: str = "hinge", alpha: float = 0.0) -> None:
        from .jit import jit
        from .train import ACCURACIES

        if loss not in PER_SAMPLE_LOSSES:
            raise ValueError(
                f"JitStep: unknown loss {loss!r}; choose one of {', '.join(PER_SAMPLE_LOSSES)}"
            )
        self.model = model
        self.loss = loss
        self.alpha = alpha
        self.params = model.parameters()
        self.loss_fn = jit(PER_SAMPLE_LOSSES[loss](model))
        self.outputs = ModelOutputs(model)
        self.accuracy = ACCURACIES[loss]

    def __call__(self, Xb: Any, yb: Any) -> tuple[float, float]:
        import numpy as np

        from .losses import l2

        X = np.asarray(Xb, dtype=float)
        total = self.loss_fn(X, self._targets(yb, X))
        if self.alpha:
            total = total + l2(self.params, self.alpha)
        self.model.zero_grad()
        total.backward()
        return total.data, self.accuracy(self.outputs(X).tolist(), yb)

    def _targets(self, yb: Any, X: Any) -> Any:
        """The targets as the per-sample loss takes them, checked as the eager losses do."""
        import numpy as np

        if self.loss == "cross_entropy":
            return self._one_hot(yb, X)
        y = np.asarray(yb, dtype=float)
        if self.loss == "hinge":
            bad = (y != 1.0) & (y != -1.0)
            if bad.any():
                raise ValueError(f"hinge: labels must be -1 or +1, got {yb[int(bad.argmax())]!r}")
        elif self.loss == "bce":
            bad = ~((y >= 0.0) & (y <= 1.0))
            if bad.any():
                raise ValueError(
                    "binary_cross_entropy_with_logits: targets must be in [0, 1], got "
                    f"{yb[int(bad.argmax())]!r}"
                )
        return y

    def _one_hot(self, yb: Any, X: Any) -> Any:
        """Class indices as one-hot rows (B, nout), so the loss's graph is the same for all."""
        import numpy as np

        if self.outputs.n_outputs is None:
            self.outputs.n_outputs = _n_outputs(self.model, X[0].tolist())
        n = self.outputs.n_outputs
        for t in yb:
            if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 0 <= t < n:
                raise ValueError(
                    f"cross_entropy: target must be a class index in [0, {n}), got {t!r}"
                )
        return np.eye(n)[np.asarray(yb, dtype=np.intp)]


def make_optimizer(cfg: DemoConfig, model: Any) -> tuple[Any, Any]:
    from . import optim

    if cfg.optimizer == "adam":
        opt: Any = optim.Adam(model.parameters(), lr=cfg.lr)
    else:
        opt = optim.SGD(model.parameters(), lr=cfg.lr)
    # lr/10 as `cfg.lr * 0.1` keeps karpathy's numbers exact: 1.0 - 0.9 * k / 100.
    return opt, optim.LinearDecay(opt, cfg.lr, cfg.lr * 0.1, max(cfg.steps, 1))


def run_demo(cfg: DemoConfig, out: Any = None) -> dict[str, Any]:
    """Train as `cfg` says, write the files, print a summary; return the numbers."""
    from . import data
    from .train import fit

    out = sys.stdout if out is None else out
    try:  # numpy's global seed too, as karpathy's notebook does (our loaders don't need it)
        import numpy as np

        np.random.seed(cfg.seed)
    except ImportError:
        pass
    X, y = load_data(cfg)
    if cfg.test_size:
        X_train, X_test, y_train, y_test = data.train_test_split(X, y, cfg.test_size, cfg.seed)
    else:
        X_train, X_test, y_train, y_test = X, [], y, []
    nout = 1 if cfg.loss != "cross_entropy" else len(set(y))
    model = build_model(cfg, len(X[0]), nout)
    opt, sched = make_optimizer(cfg, model)
    n_params = len(model.parameters())
    if uses_jit(cfg):
        engine = "jit engine"
    else:
        engine = "eager engine" + ("" if not cfg.jit else " (no numpy for jit)")
    evaluate = make_evaluator(cfg, model)
    print(
        f"{cfg.dataset}: {len(X_train)} training samples"
        + (f", {len(X_test)} test" if X_test else "")
        + f"; MLP({len(X[0])}, {[*cfg.hidden, nout]}), {n_params} parameters; "
        f"{cfg.loss} loss, {cfg.optimizer} lr {cfg.lr} (linear decay), {cfg.steps} steps; "
        f"{engine}",
        file=out,
    )

    def callback(k: int, history: Any) -> None:
        if X_test and cfg.eval_every and (k + 1) % cfg.eval_every == 0 and k + 1 < cfg.steps:
            history.test_accuracy.append((k, evaluate(X_test, y_test)))

    history = fit(
        model, X_train, y_train,
        optimizer=opt, scheduler=sched, steps=cfg.steps, batch_size=cfg.batch_size,
        progress=cfg.progress, seed=cfg.seed, step_fn=make_step_fn(cfg, model),
        callback=callback,
    )
    result: dict[str, Any] = {
        "loss": history.final_loss,
        "accuracy": history.final_accuracy,
        "seconds": history.seconds,
        "model": model,
        "history": history,
        "files": [],
    }
    if X_test:
        result["test_accuracy"] = evaluate(X_test, y_test)
        history.test_accuracy.append((max(cfg.steps - 1, 0), result["test_accuracy"]))

    os.makedirs(cfg.out, exist_ok=True)
    model_path = os.path.join(cfg.out, "model.json")
    model.save(model_path)
    result["files"].append(model_path)
    try:
        from . import plots

        curves = os.path.join(cfg.out, "training.png")
        plots.training_curves(history, curves, title=cfg.dataset)
        result["files"].append(curves)
        if len(X[0]) == 2:
            boundary = os.path.join(cfg.out, "decision_boundary.png")
            plots.decision_boundary(model, X, y, boundary, title=f"{cfg.dataset}: {cfg.hidden}")
            result["files"].append(boundary)
        if cfg.dataset == "digits":
            guesses = os.path.join(cfg.out, "predictions.png")
            plots.digit_predictions(model, X_test or X_train, y_test or y_train, guesses)
            result["files"].append(guesses)
    except ImportError as e:
        print(f"note: no plots ({e})", file=sys.stderr)
    print(f"wrote {', '.join(result['files'])}", file=out)
    print(f"trained in {history.seconds:.2f} s", file=out)
    last = f"step {cfg.steps}/{cfg.steps}: loss {history.final_loss!r}"
    if X_test:
        print(
            f"{last}, training-batch accuracy {history.final_accuracy:.1%}, "
            f"test accuracy {result['test_accuracy']:.1%}",
            file=out,
        )
    else:
        print(f"{last}, accuracy {history.final_accuracy:.1%}", file=out)
    return result


# ------------------------------------------------------------------ command line


def _steps(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--steps needs a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--steps must be at least 1, got {n}")
    return n


def _lr(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lr needs a number, got {text!r}") from None
    if not 0 < x < float("inf"):
        raise argparse.ArgumentTypeError(f"--lr must be a positive number, got {text}")
    return x


def _hidden(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(
            f"--hidden needs comma-separated positive layer sizes like 16,16, got {text!r}"
        )
    return sizes


def _batch(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"--batch-size must be a positive integer, got {text!r}")
    return n


def add_demo_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd demo` on the CLI's subparsers."""
    from .nn import ACTIVATIONS

    p = subparsers.add_parser(
        "demo",
        help="train a small network (karpathy's moons demo by default) and plot it",
        description=(
            "Train an MLP with the scalar engine and write decision_boundary.png, training.png "
            "and model.json. Without options: karpathy's moons demo, exactly."
        ),
    )
    p.add_argument("dataset", nargs="?", default="moons", choices=DATASETS,
                   help="data set (default: moons)")
    p.add_argument("--steps", type=_steps, help="optimisation steps (moons: 100)")
    p.add_argument("--lr", type=_lr, help="initial learning rate, decays linearly to lr/10")
    p.add_argument("--seed", type=int, help="random seed for weights and data (default 1337)")
    p.add_argument("--hidden", type=_hidden, help='hidden layer sizes, e.g. "16,16"')
    p.add_argument("--activation", choices=[a for a in ACTIVATIONS if a != "linear"],
                   help="hidden-layer activation (default relu)")
    p.add_argument("--batch-size", type=_batch, help="minibatch size (moons: full batch)")
    p.add_argument("--out", default="micrograd-demo",
                   help="output directory (default ./micrograd-demo/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-jit", action="store_true",
                   help="train with the eager engine (default: micrograd.jit when numpy is there)")
    p.set_defaults(run=run)
    return p


def _freeze_imports() -> None:
    """Import what the demo uses, then take all of it out of the cyclic garbage collector's way.

    This process is the command's own, so it may: our graphs hold no reference cycles, yet every
    full collection would walk numpy's, scikit-learn's and matplotlib's objects again, about a
    third of an eager training step (see benchmarks/RESULTS.md). A library call leaves gc alone.
    """
    heavy = ("numpy", "sklearn.datasets", "matplotlib.figure", "matplotlib.backends.backend_agg")
    for name in (*heavy, "tqdm"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # the demo falls back or explains, where it needs the package
    gc.collect()
    gc.freeze()


def run(args: argparse.Namespace) -> int:
    overrides = {
        "steps": args.steps,
        "lr": args.lr,
        "seed": args.seed,
        "hidden": args.hidden,
        "activation": args.activation,
        "batch_size": args.batch_size,
        "out": args.out,
        "progress": not args.no_progress,
        "jit": not args.no_jit,
    }
    cfg = config_for(args.dataset, **overrides)
    if os.path.exists(cfg.out) and not os.path.isdir(cfg.out):
        print(f"micrograd demo: error: --out {cfg.out!r} is a file, not a directory",
              file=sys.stderr)
        return 2
    try:  # before training, so a bad --out costs nothing
        os.makedirs(cfg.out, exist_ok=True)
    except OSError as e:
        print(f"micrograd demo: error: cannot create --out {cfg.out!r}: {e.strerror}",
              file=sys.stderr)
        return 2
    _freeze_imports()
    try:
        run_demo(cfg)
    except OSError as e:  # e.g. the disk filled up while writing the plots
        print(f"micrograd demo: error: cannot write the results: {e}", file=sys.stderr)
        return 1
    return 0
