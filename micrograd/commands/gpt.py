"""The `micrograd gpt` command: microgpt's run (`micrograd.gpt`) from the command line.

It prints microgpt's header (``num docs``, ``vocab size``, ``num params``), then ``step N / M |
loss X.XXXX`` for each step (in a terminal, one line rewritten in place with a progress bar; into
a pipe, a line a step), then the samples, one a line, each as soon as it is drawn. ``--save``
writes the model with its characters; ``--load FILE`` starts from such a file (``--steps 0``:
samples it, no word list needed). Ctrl-C stops the training in one line and samples the model so
far; a bad option, a missing word list, a word longer than the block size reads, a file that
holds no GPT or an unwritable --save folder is one line and exit status 2, before any training.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Any, TextIO

from .options import errors, positive_number, whole_number

SIZES = (  # the model's shape: flag, microgpt's default, the largest the command takes
    ("--n-embd", 16, 512),
    ("--n-layer", 1, 32),
    ("--n-head", 4, 64),
    ("--block-size", 16, 1024),
)


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
    p.add_argument(
        "--steps", type=whole_number("--steps", 0), default=1000, help="default 1000 (0: none)"
    )
    p.add_argument("--seed", type=whole_number("--seed", 0), default=42, help="default 42")
    p.add_argument("--samples", type=whole_number("--samples", 0), default=20, help="default 20")
    p.add_argument(
        "--temperature",
        type=positive_number("--temperature", "a finite number > 0"),
        default=0.5,
        help="default 0.5",
    )
    for flag, default, high in SIZES:
        p.add_argument(flag, type=whole_number(flag, 1, high), help=f"default {default}")
    p.add_argument(
        "--lr",
        type=positive_number("--lr", "a finite number > 0"),
        default=0.01,
        help="Adam's first learning rate, decaying linearly to 0 (default 0.01)",
    )
    p.add_argument("--jit", action="store_true", help="train with micrograd.jit (needs numpy)")
    p.add_argument(
        "--save", metavar="FILE", help="write the model and its characters (micrograd.io.load_gpt)"
    )
    p.add_argument(
        "--load",
        metavar="FILE",
        help="start from a saved GPT: --steps 0 samples it, more steps train it on",
    )
    p.add_argument(
        "--docs",
        metavar="FILE",
        help="a word list, one a line (default: makemore's names.txt, downloaded once from "
        "its repository and cached; MICROGRAD_NAMES_FILE=PATH reads a copy you keep)",
    )
    p.set_defaults(run=run)
    return p


_error = errors("gpt")


class _Progress:
    """Each step's line: rewritten in place with a bar in a terminal, else a line a step."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.tty, self.start = out, out.isatty(), time.monotonic()
        self.step = 0  # the last step done

    def __call__(self, step: int, steps: int, loss: float) -> None:
        self.step = step
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
    from ..io import load_gpt, save
    from ..playground.gpt.gpt_frames import check_fits

    sizes = {f[2:].replace("-", "_"): getattr(args, f[2:].replace("-", "_")) for f, _, _ in SIZES}
    n_embd, n_head = sizes["n_embd"] or 16, sizes["n_head"] or 4
    if n_embd % n_head:
        return _error(f"--n-head {n_head} must divide --n-embd {n_embd} (each head a slice)", 2)
    model = tokenizer = None
    if args.load:
        given = [f"--{k.replace('_', '-')}" for k, v in sizes.items() if v is not None]
        if given:
            return _error(f"{given[0]}: the model's shape is --load {args.load}'s", 2)
        try:
            model, tokenizer = load_gpt(args.load)
        except OSError as e:
            return _error(f"--load {args.load}: {e.strerror or e}", 2)
        except ValueError as e:
            return _error(f"--load {e}", 2)
        if tokenizer is None and not args.docs:
            return _error(
                f"--load {args.load} was saved without its characters (an older file): give the "
                "word list it was trained on with --docs FILE",
                2,
            )
    docs: list[str] = []
    if args.steps or tokenizer is None:
        try:
            docs = names(args.docs) if args.docs else names()
        except OSError as e:
            why = e.strerror if args.docs else str(e)
            return _error(f"--docs {args.docs}: {why}" if args.docs else why, 2)
        except UnicodeDecodeError as e:
            return _error(f"--docs {args.docs}: not UTF-8 text ({e.reason} at byte {e.start})", 2)
        if not docs:
            return _error(f"--docs {args.docs}: no words in it (one a line)", 2)
    block = model.block_size if model is not None else sizes["block_size"] or 16
    try:
        check_fits(docs, block, "--docs" if args.docs else "the names", "--block-size")
    except ValueError as e:
        return _error(str(e), 2)
    if args.save and not os.path.isdir(os.path.dirname(os.path.abspath(args.save))):
        return _error(f"--save {args.save}: its folder does not exist", 2)
    if model is None:
        sizes = {k: v for k, v in sizes.items() if v is not None}
        docs, tokenizer, model = gpt.prepare(docs, args.seed, **sizes)
    else:
        if tokenizer is None:
            tokenizer = gpt.Tokenizer(docs)
            if tokenizer.vocab_size != model.vocab_size:
                return _error(
                    f"--docs {args.docs}: its words have {tokenizer.vocab_size - 1} characters; "
                    f"--load {args.load} reads {model.vocab_size - 1}",
                    2,
                )
        for word in docs:
            try:
                tokenizer.encode(word)
            except ValueError as e:
                return _error(f"--docs {args.docs}: {e} (the characters of --load {args.load})", 2)
        random.seed(args.seed)  # as prepare: the words shuffled, the samples drawn after
        random.shuffle(docs)
    if args.jit and args.steps:
        try:
            from ..jit import load_numpy

            load_numpy()
        except ImportError as e:
            return _error(f'--jit needs numpy ({e}); pip install "micrograd-plus[jit]"', 2)
    out = sys.stdout
    if docs:
        print(f"num docs: {len(docs)}", file=out)
    print(f"vocab size: {tokenizer.vocab_size}", file=out)
    print(f"num params: {len(model.parameters())}", file=out, flush=True)
    progress = _Progress(out)
    if args.steps:
        if args.jit:
            from ..jit.gpt import train
        else:
            train = gpt.train
        try:
            train(model, tokenizer, docs, args.steps, on_step=progress, lr=args.lr)
        except KeyboardInterrupt:
            if progress.tty:
                print()
            print(
                f"micrograd gpt: interrupted at step {progress.step} / {args.steps}; nothing "
                "saved; samples of the model so far:",
                file=sys.stderr,
                flush=True,
            )
            _print_samples(gpt, model, tokenizer, args)
            return 130
    if args.save:
        try:
            save(model, args.save, tokenizer)
        except OSError as e:
            return _error(f"--save {args.save}: {e.strerror or e}", 1)
    _print_samples(gpt, model, tokenizer, args)
    return 0


def _print_samples(gpt: Any, model: Any, tokenizer: Any, args: argparse.Namespace) -> None:
    # one at a time, each printed as it is drawn: n draws of one are sample()'s n, in order
    for _ in range(args.samples):
        print(gpt.sample(model, tokenizer, 1, args.temperature)[0], flush=True)
