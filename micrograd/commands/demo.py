"""The `micrograd demo` command: its options, and one line and an exit status for every failure.

The training it drives is library code in `train/demo.py` (`config_for`, `run_demo`); this module is
only the command line around it, as `commands/playground.py` is for the playground.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from ..core.atomic import describe, prepare_folder, remove_if_empty
from ..nn import ACTIVATIONS
from ..train import demo
from ..train.demo import (
    DATASETS,
    MAX_PARAMS,
    OPTIMIZERS,
    SEED_MAX,
    DemoConfig,
    Interrupted,
    check_size,
    config_for,
    older_files,
    output_paths,
)
from .options import errors, positive_number, whole_number


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


def add_demo_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd demo` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "demo",
        help="train a small network (karpathy's moons demo by default) and plot it",
        description=(
            "Train an MLP and write model.json, training.png and decision_boundary.png "
            "(predictions.png for digits). Without options: karpathy's moons demo, exactly."
        ),
    )
    p.add_argument(
        "dataset", nargs="?", default="moons", choices=DATASETS, help="data set (default: moons)"
    )
    p.add_argument(
        "--steps", type=whole_number("--steps", 1), help="optimisation steps (moons: 100)"
    )
    p.add_argument(
        "--lr", type=positive_number("--lr"), help="initial learning rate, decays linearly to lr/10"
    )
    p.add_argument(
        "--seed",
        type=whole_number("--seed", 0, SEED_MAX),
        help=f"random seed for weights and data, 0 to {SEED_MAX} (default 1337)",
    )
    p.add_argument("--hidden", type=_hidden, help='hidden layer sizes, e.g. "16,16"')
    p.add_argument(
        "--activation",
        choices=[a for a in ACTIVATIONS if a != "linear"],
        help="hidden-layer activation (default relu; abs and softplus may need a lower --lr)",
    )
    p.add_argument(
        "--optimizer",
        choices=OPTIMIZERS,
        help="sgd (moons' default), adam (digits' default) or adamw",
    )
    p.add_argument(
        "--batch-size",
        type=whole_number("--batch-size", 1),
        help="minibatch size (moons: full batch)",
    )
    p.add_argument(
        "--max-params",
        type=whole_number("--max-params", 1),
        help=f"refuse models with more parameters than this (default {MAX_PARAMS:,})",
    )
    p.add_argument(
        "--out", default="micrograd-demo", help="output directory (default ./micrograd-demo/)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-jit",
        action="store_true",
        help="train with the eager engine (default: micrograd.jit when numpy is there)",
    )
    p.set_defaults(run=run)
    return p


_error = errors("demo")


def run(args: argparse.Namespace) -> int:
    """`micrograd demo`: returns the exit status."""
    cfg = config_for(
        args.dataset,
        steps=args.steps,
        lr=args.lr,
        seed=args.seed,
        hidden=args.hidden,
        activation=args.activation,
        optimizer=args.optimizer,
        batch_size=args.batch_size,
        max_params=args.max_params,
        out=args.out,
        progress=not args.no_progress,
        jit=not args.no_jit,
    )
    try:  # before training, so a bad size or --out costs nothing
        check_size(cfg)
        created = prepare_folder(cfg.out, output_paths(cfg), what="--out")
    except ValueError as e:
        return _error(str(e), 2)
    try:
        _import_what_the_run_needs(cfg)
        from ..train import freeze_gc

        freeze_gc()
        result = demo.run_demo(cfg)  # looked up on the module: tests replace it
    except KeyboardInterrupt as e:  # Interrupted: during the run; else before training
        if isinstance(e, Interrupted) and e.written:
            return _error(
                f"interrupted while writing the results (wrote {', '.join(e.written)}; "
                f"the rest of {cfg.out} is as it was)",
                130,
            )
        if created:
            remove_if_empty(cfg.out)
        when = f"at step {e.step}/{e.steps}" if isinstance(e, Interrupted) else "before training"
        return _error(f"interrupted {when}; nothing written", 130)
    except OSError as e:  # e.g. the disk filled up while writing the plots
        return _error(describe(e), 1)
    except ImportError as e:  # digits without scikit-learn
        return _error(str(e), 1)
    diverged = result["diverged"]
    if diverged is not None:
        curves = f"; wrote the curves up to it: {result['files'][0]}" if result["files"] else ""
        older = older_files(cfg, result["files"])
        return _error(
            f"{diverged} (try a lower --lr than {cfg.lr:g}){curves}"
            + (f" ({older})" if older else ""),
            1,
        )
    return 0


def _import_what_the_run_needs(cfg: DemoConfig) -> None:
    """Import now, before `freeze_gc`, what this run will use (and what its data set's generator
    imports: scikit-learn for digits)."""
    import importlib

    from ..data import DATASETS

    names = ["numpy", "matplotlib.figure", "matplotlib.backends.backend_agg", "tqdm"]
    for name in names + list(DATASETS[cfg.dataset].imports):
        with contextlib.suppress(ImportError):  # the run falls back or explains where needed
            importlib.import_module(name)
