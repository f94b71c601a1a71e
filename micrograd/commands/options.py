"""The commands' option types for argparse: a whole number in a range, a positive number. A bad
value is argparse's one line, naming the option and what it got (exit status 2). And `errors`:
the one line a command says when it stops on an error."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable


def whole_number(name: str, low: int, high: float = math.inf) -> Callable[[str], int]:
    """An int from `low` to `high` (no upper end by default)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} needs a whole number, got {text!r}") from None
        if not low <= n <= high:
            where = f"at least {low}" if high == math.inf else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"{name} must be {where}, got {n}")
        return n

    return parse


def positive_number(name: str, must: str = "a positive number") -> Callable[[str], float]:
    """A finite float above 0; `must` is how the refusal says it."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} needs a number, got {text!r}") from None
        if not 0 < x < math.inf:
            raise argparse.ArgumentTypeError(f"{name} must be {must}, got {text}")
        return x

    return parse


def errors(command: str) -> Callable[[str, int], int]:
    """`error(message, status)` for `micrograd command`: says "micrograd command: error: message"
    on stderr and returns `status` (the exit status)."""

    def error(message: str, status: int) -> int:
        print(f"micrograd {command}: error: {message}", file=sys.stderr)
        return status

    return error
