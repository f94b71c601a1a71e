"""The `micrograd gpt` command: microgpt's run (`micrograd.gpt`) from the command line.

It prints ``step N / M | loss X.XXXX`` for each step (in a terminal, one line rewritten in place
with a progress bar; into a pipe, a line a step), then the samples, one a line, last. Ctrl-C
stops the training in one line and samples the model so far; a bad option, a missing word list
or an unwritable --save folder is one line and exit status 2, before any training.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from .options import positive_number, whole_number


def add_gpt_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd gpt` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "gpt",
        help="train Karpathy's microgpt on names (or your word list) and sample new ones",
        description=(
            "Train microgpt's GPT, one document a step, and print new samples. Without "
            "options: his run exactly (makemore's names, seed 42, 1000 steps, 20 samples)."
        ),
    )
    p.add_argument("--steps", type=whole_number("--steps", 1), default=1000, help="default 1000")
    p.add_argument("--seed", type=whole_number("--seed", 0), default=42, help="default 42")
    p.add_argument("--samples", type=whole_number("--samples", 0), default=20, help="default 20")
    p.add_argument(
        "--temperature",
        type=positive_number("--temperature", "a number > 0"),
        default=0.5,
        help="default 0.5",
    )
    p.add_argument("--save", metavar="FILE", help="write the trained model (micrograd.io.load)")
    p.add_argument(
        "--docs",
        metavar="FILE",
        help="a word list, one a line (default: makemore's names.txt, downloaded once from "
        "its repository and cached; MICROGRAD_NAMES_FILE=PATH reads a copy you keep)",
    )
    p.set_defaults(run=run)
    return p


def _error(message: str, status: int) -> int:
    print(f"micrograd gpt: error: {message}", file=sys.stderr)
    return status


class _Progress:
    """Each step's line: rewritten in place with a bar in a terminal, else a line a step."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.tty, self.start = out, out.isatty(), time.monotonic()

    def __call__(self, step: int, steps: int, loss: float) -> None:
        line = f"step {step} / {steps} | loss {loss:.4f}"
        if self.tty:
            done = 20 * step // steps
            secs = time.monotonic() - self.start
            line = f"\r{line} [{'#' * done}{'.' * (20 - done)}] {secs:.0f} s"
            self.out.write(line + ("\n" if step == steps else ""))
        else:
            self.out.write(line + "\n")
        self.out.flush()


def run(args: argparse.Namespace) -> int:
    """`micrograd gpt`: returns the exit status."""
    from .. import gpt
    from ..data import names
    from ..io import save

    try:
        docs = names(args.docs) if args.docs else names()
    except OSError as e:
        why = e.strerror if args.docs else str(e)
        return _error(f"--docs {args.docs}: {why}" if args.docs else why, 2)
    except UnicodeDecodeError as e:
        return _error(f"--docs {args.docs}: not UTF-8 text ({e.reason} at byte {e.start})", 2)
    if not docs:
        return _error(f"--docs {args.docs}: no words in it (one a line)", 2)
    if args.save and not os.path.isdir(os.path.dirname(os.path.abspath(args.save))):
        return _error(f"--save {args.save}: its folder does not exist", 2)
    docs, tokenizer, model = gpt.prepare(docs, args.seed)
    losses: list[float] = []
    progress = _Progress(sys.stdout)
    try:
        gpt.train(model, tokenizer, docs, args.steps, losses, on_step=progress)
    except KeyboardInterrupt:
        if progress.tty:
            print()
        print(
            f"micrograd gpt: interrupted at step {len(losses)} / {args.steps}; nothing saved; "
            "samples of the model so far:",
            file=sys.stderr,
            flush=True,
        )
        _print_samples(gpt, model, tokenizer, args)
        return 130
    if args.save:
        try:
            save(model, args.save)
        except OSError as e:
            return _error(f"--save {args.save}: {e.strerror or e}", 1)
    _print_samples(gpt, model, tokenizer, args)
    return 0


def _print_samples(gpt: Any, model: Any, tokenizer: Any, args: argparse.Namespace) -> None:
    for text in gpt.sample(model, tokenizer, args.samples, args.temperature):
        print(text, flush=True)
