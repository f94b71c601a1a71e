"""`micrograd demo`: train a network end to end and write pictures of it.

    micrograd demo                  karpathy's moons demo, exactly: MLP(2, [16, 16, 1]), hinge loss
                                    + 1e-4 L2, SGD with lr = 1.0 - 0.9*k/100, 100 full-batch steps,
                                    seed 1337; it ends at loss 0.010978370135492717, 100% accuracy
    micrograd demo circles|xor|spiral   other 2-D sets, same recipe
    micrograd demo digits           8x8 handwritten digits, 10 classes: softmax cross-entropy, Adam,
                                    minibatches; accuracy on the training and a held-out test set

A run is fixed by a `DemoConfig`: each data set's recipe is its `demo` entry in
`micrograd.data.DATASETS` (collected here as `PRESETS`), the options override it. `run_demo`
trains (on `micrograd.jit` when numpy is there, see `jit_step.py`) and writes to ``--out``
``model.json``, ``training.png`` and ``decision_boundary.png`` (2-D) or ``predictions.png``
(digits). The command checks everything it can before training (options,
model size, the output files) and ends every failure with one line and a non-zero status; its
command-line code is in `commands/demo.py`.
"""

from __future__ import annotations

import math
import os
import random
import sys
from dataclasses import dataclass
from typing import IO, Any

from .. import data
from ..io import save

# The data sets the demo offers: those micrograd.data declares with a demo recipe.
DATASETS = tuple(k for k, d in data.DATASETS.items() if d.demo is not None)
OPTIMIZERS = ("sgd", "adam", "adamw")
FILES = ("model.json", "training.png", "decision_boundary.png", "predictions.png")
MAX_PARAMS = 200_000  # the default size cap; --max-params raises it
SEED_MAX = 2**32 - 1  # numpy's seeds (karpathy's data) are 32-bit


@dataclass
class DemoConfig:
    dataset: str = "moons"  # a name in DATASETS
    steps: int = 100  # optimisation steps, one batch each
    lr: float = 1.0  # learning rate at step 0; decays linearly to lr/10 at the last step
    seed: int = 1337  # seeds `random` (initial weights) and the data (karpathy's 1337)
    hidden: tuple[int, ...] = (16, 16)  # hidden layer sizes; the output layer is added
    activation: str = "relu"  # hidden-layer nonlinearity: a name in nn.ACTIVATIONS
    loss: str = "hinge"  # hinge (labels ±1, one output) | cross_entropy (class indices)
    alpha: float = 1e-4  # L2 regularisation strength, alpha * sum(p*p)
    optimizer: str = "sgd"  # sgd (karpathy's plain p -= lr*grad) | adam | adamw
    batch_size: int | None = None  # None: the full data set every step
    n_samples: int = 100  # points in the generated 2-D data sets
    test_size: float = 0.0  # share held out for a test accuracy (0: no test set)
    eval_every: int = 0  # measure test accuracy every this many steps (0: only at the end)
    out: str = "micrograd-demo"  # directory for the PNGs and model.json
    progress: bool = True  # show a progress bar (tqdm when installed)
    jit: bool = True  # use micrograd.jit when numpy is importable (False: the eager engine)
    max_params: int = MAX_PARAMS  # refuse bigger models (memory and time grow with the size)


# Each data set's recipe: the fields that differ from DemoConfig's defaults (karpathy's moons),
# as its micrograd.data declaration gives them.
PRESETS: dict[str, dict[str, Any]] = {k: dict(data.DATASETS[k].demo or {}) for k in DATASETS}


def config_for(dataset: str, **overrides: Any) -> DemoConfig:
    """The preset for `dataset` with `overrides` (None values are ignored) applied."""
    if dataset not in PRESETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    fields = {**PRESETS[dataset], **{k: v for k, v in overrides.items() if v is not None}}
    return DemoConfig(dataset=dataset, **fields)


def layer_sizes(cfg: DemoConfig) -> list[int]:
    """Inputs: the data's dimensions; outputs: one per class for more than 2 classes, else one."""
    ds = data.DATASETS[cfg.dataset]
    return [ds.dims, *cfg.hidden, ds.classes if ds.classes > 2 else 1]


def n_params(sizes: list[int]) -> int:
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def shape_name(sizes: list[int]) -> str:
    """``MLP 2-16-16-1``: the layer sizes, inputs first."""
    return "MLP " + "-".join(map(str, sizes))


# Measured with tracemalloc (MLP 2-300-300-1): a parameter costs ~120 bytes to build; a training
# step ~40 bytes per parameter per sample on the eager engine, ~650 per parameter under jit.
BYTES_PER_PARAM, EAGER_BYTES_PER_PARAM_SAMPLE, JIT_BYTES_PER_PARAM = 120, 40, 650


def memory_estimate(cfg: DemoConfig) -> int:
    """Rough bytes a run of `cfg` needs: the model plus one training step's graph."""
    n = n_params(layer_sizes(cfg))
    if cfg.jit:
        return n * (BYTES_PER_PARAM + JIT_BYTES_PER_PARAM)
    n = data.DATASETS[cfg.dataset].size or cfg.n_samples
    samples = cfg.batch_size or n - (max(1, round(n * cfg.test_size)) if cfg.test_size else 0)
    return n * (BYTES_PER_PARAM + EAGER_BYTES_PER_PARAM_SAMPLE * samples)


def _bytes(n: float) -> str:
    k = min(int(math.log10(max(n, 1)) // 3), 5)
    return f"{n / 1000**k:.1f} {('bytes', 'KB', 'MB', 'GB', 'TB', 'PB')[k]}"


def check_size(cfg: DemoConfig) -> None:
    """A ValueError, with a memory estimate, if the model is above `cfg.max_params`."""
    sizes = layer_sizes(cfg)
    n = n_params(sizes)
    if n > cfg.max_params:
        raise ValueError(
            f"{shape_name(sizes)} has {n:,} parameters, more than the cap of "
            f"{cfg.max_params:,} (it would need about {_bytes(memory_estimate(cfg))} of memory); "
            f"pass --max-params {n} to run it anyway"
        )


def _plane(cfg: DemoConfig) -> bool:
    """Are the data set's samples points of the plane (pictured by their decision boundary)?
    Else they are images (digits: pictured by predictions)."""
    return data.DATASETS[cfg.dataset].dims == 2


def output_paths(cfg: DemoConfig) -> list[str]:
    """The files a run of `cfg` writes, in `cfg.out`."""
    names = ["model.json", "training.png"]
    names.append("decision_boundary.png" if _plane(cfg) else "predictions.png")
    return [os.path.join(cfg.out, name) for name in names]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during `run_demo`: at `step` steps done (of `steps`); `written` lists the files
    this run wrote before it (none when it came during training)."""

    def __init__(self, step: int, steps: int, written: list[str]) -> None:
        super().__init__(f"interrupted at step {step}/{steps}")
        self.step, self.steps, self.written = step, steps, written


def make_optimizer(cfg: DemoConfig, model: Any) -> tuple[Any, Any]:
    from .. import optim

    kinds = {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW}
    if cfg.optimizer not in kinds:
        raise ValueError(f"unknown optimizer {cfg.optimizer!r}; choose one of {', '.join(kinds)}")
    opt = kinds[cfg.optimizer](model.parameters(), lr=cfg.lr)
    # lr/10 as `cfg.lr * 0.1` keeps karpathy's numbers exact: 1.0 - 0.9 * k / 100.
    return opt, optim.LinearDecay(opt, cfg.lr, cfg.lr * 0.1, max(cfg.steps, 1))


def run_demo(cfg: DemoConfig, out: IO[str] | None = None) -> dict[str, Any]:
    """Train as `cfg` says, write the files, print a summary to `out`; return the numbers.

    A diverging run returns with ``result["diverged"]`` (a `train.Diverged`) after writing the
    curves up to that step; Ctrl-C raises `Interrupted`.
    """
    from ..nn import MLP
    from . import Diverged, fit
    from .jit_step import make_evaluator, make_step_fn, numpy_available

    out = sys.stdout if out is None else out
    check_size(cfg)
    try:  # numpy's global seed too, as karpathy's notebook does (our loaders don't need it)
        import numpy as np

        np.random.seed(cfg.seed)
    except ImportError:
        pass
    X, y = data.DATASETS[cfg.dataset].load(n_samples=cfg.n_samples, seed=cfg.seed)
    if cfg.test_size:
        X_train, X_test, y_train, y_test = data.train_test_split(X, y, cfg.test_size, cfg.seed)
    else:
        X_train, X_test, y_train, y_test = X, [], y, []
    sizes = layer_sizes(cfg)
    random.seed(cfg.seed)  # karpathy seeds `random` right before building the MLP
    model = MLP(sizes[0], sizes[1:], activation=cfg.activation)
    opt, sched = make_optimizer(cfg, model)
    jit = cfg.jit and numpy_available()
    engine = "jit engine" if jit else "eager engine" + (" (no numpy for jit)" if cfg.jit else "")
    evaluate = make_evaluator(model, cfg.loss, jit)
    print(
        f"{cfg.dataset}: {len(X_train)} training samples"
        + (f", {len(X_test)} test" if X_test else "")
        + f"; {shape_name(sizes)} ({len(model.parameters())} parameters, {cfg.activation}); "
        f"{cfg.loss} loss, {cfg.optimizer} lr {cfg.lr} (linear decay), {cfg.steps} steps; "
        f"{engine}",
        file=out,
    )
    done = [0]

    def callback(k: int, history: Any) -> None:
        done[0] = k + 1
        if X_test and cfg.eval_every and (k + 1) % cfg.eval_every == 0 and k + 1 < cfg.steps:
            history.test_accuracy.append((k, evaluate(X_test, y_test)))

    result: dict[str, Any] = {"model": model, "files": [], "diverged": None}
    try:
        history = fit(
            model,
            X_train,
            y_train,
            optimizer=opt,
            scheduler=sched,
            steps=cfg.steps,
            batch_size=cfg.batch_size,
            progress=cfg.progress,
            seed=cfg.seed,
            callback=callback,
            step_fn=make_step_fn(model, cfg.loss, cfg.alpha, jit),
        )
    except Diverged as e:
        result.update(diverged=e, history=e.history)
        diverged = e.history
        _write(result["files"], cfg, lambda: _curves(cfg, diverged, sizes, result["files"]))
        return result
    except KeyboardInterrupt:
        raise Interrupted(done[0], cfg.steps, []) from None
    result.update(history=history, loss=history.final_loss, seconds=history.seconds)
    result["accuracy"] = evaluate(X_train, y_train)  # the whole training set, final weights
    if X_test:
        result["test_accuracy"] = evaluate(X_test, y_test)
        history.test_accuracy.append((max(cfg.steps - 1, 0), result["test_accuracy"]))

    def write_all() -> None:
        model_path = os.path.join(cfg.out, "model.json")
        save(model, model_path)
        result["files"].append(model_path)
        if _curves(cfg, history, sizes, result["files"]):
            from . import plots

            if not _plane(cfg):
                path = os.path.join(cfg.out, "predictions.png")
                Xs, ys = (X_test, y_test) if X_test else (X_train, y_train)
                plots.digit_predictions(model, Xs, ys, path, which="test" if X_test else "training")
            else:
                path = os.path.join(cfg.out, "decision_boundary.png")
                title = f"{cfg.dataset}: {shape_name(sizes)}"
                plots.decision_boundary(model, X, y, path, title=title)
            result["files"].append(path)

    _write(result["files"], cfg, write_all)
    _summary(cfg, result, len(X_train), len(X_test), out)
    return result


def _write(written: list[str], cfg: DemoConfig, work: Any) -> None:
    try:
        os.makedirs(cfg.out, exist_ok=True)
        work()
    except KeyboardInterrupt:
        raise Interrupted(cfg.steps, cfg.steps, written) from None


def _curves(cfg: DemoConfig, history: Any, sizes: list[int], written: list[str]) -> bool:
    """Write training.png (the curves so far); False, with a note, when matplotlib is missing."""
    try:
        from . import plots

        path = os.path.join(cfg.out, "training.png")
        plots.training_curves(history, path, title=f"{cfg.dataset}: {shape_name(sizes)}")
    except ImportError as e:
        print(f"note: no plots ({e})", file=sys.stderr)
        return False
    written.append(path)
    return True


def older_files(cfg: DemoConfig, written: list[str]) -> str:
    """A note naming the demo's files in `cfg.out` that this run did not write, or ''."""
    mine = {os.path.basename(f) for f in written}
    older = [n for n in FILES if n not in mine and os.path.exists(os.path.join(cfg.out, n))]
    if not older:
        return ""
    verb = "is" if len(older) == 1 else "are"
    return f"{', '.join(older)} in {cfg.out} {verb} from an earlier run, not this one"


EXPLODED = 10.0  # a final loss this many times the first step's is called out as exploded


def _summary(cfg: DemoConfig, result: dict, n_train: int, n_test: int, out: IO[str]) -> None:
    history = result["history"]
    print(f"wrote {', '.join(result['files'])}", file=out)
    if older_files(cfg, result["files"]):
        print(f"note: {older_files(cfg, result['files'])}", file=out)
    print(f"trained in {history.seconds:.2f} s", file=out)
    batch = "batch loss" if cfg.batch_size and cfg.batch_size < n_train else "loss"
    line = (
        f"step {cfg.steps}/{cfg.steps}: {batch} {history.final_loss!r}, accuracy "
        f"{result['accuracy']:.1%} on the whole training set ({n_train} samples)"
    )
    if n_test:
        line += f", {result['test_accuracy']:.1%} on the test set ({n_test})"
    print(line, file=out)
    first = history.loss[0] if history.loss else math.nan
    if history.final_loss > EXPLODED * first:  # finite, but training made it much worse
        print(
            f"warning: the loss rose from {first:.4g} to {history.final_loss:.4g}; "
            f"try a lower --lr than {cfg.lr:g}",
            file=out,
        )
