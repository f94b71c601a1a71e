"""How big a request to the playground's views may be, measured before anything is built from it.

Every transport reads a request through here: the web server (`server.py`, a POST body), the
static site's worker (`worker.py`, a message's JSON text) and the notebook widget
(`messages.py`, a message its comm has already decoded). A body is measured three ways, bytes,
nesting depth and elements, so that neither a long text nor a short one that unfolds (a list
of 100,000 zeros under 900 nested keys) costs the server more than a few times its size, and
no JSON parser recurses past Python's limit. The largest real request, the Train view's point
for the explorer (a network of six layers of 32: about 5,500 weights), is far inside.
`numbers_fit` then refuses a number no float holds, wherever it is (`views.Tab.call` runs it
on every body).
"""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import ViewError

MAX_BODY = 256 * 1024  # bytes of a body: a program or a data set of a few thousand points
MAX_DEPTH = 32  # arrays and objects inside one another (the point's model file: about 6)
MAX_ELEMENTS = 100_000  # values in all (the largest network's point: about 6,000)

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[^\[\]{}]+")


def measure_text(text: str | bytes, what: str = "the request body") -> None:
    """Refuse JSON text too long, nested too deeply or with too many values (a ViewError, 413
    or 400, saying which and the limit), in time linear in its length and without parsing it."""
    size = len(text.encode() if isinstance(text, str) else text)
    if size > MAX_BODY:
        raise ViewError(f"{what} is {size} bytes; at most {MAX_BODY} allowed", 413)
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    bare = _STRING.sub('""', text)  # brackets and commas inside strings do not count
    depth = deepest = 0
    for c in _BRACKETS.sub("", bare):
        depth += 1 if c in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                raise ViewError(f"{what} is nested more than {MAX_DEPTH} deep", 400)
    elements = bare.count(",") + bare.count(":") + 1
    if elements > MAX_ELEMENTS:
        raise ViewError(f"{what} has more than {MAX_ELEMENTS:,} values", 413)


def measure_object(obj: Any, what: str = "the message") -> None:
    """The same limits for a message already decoded (the notebook widget's comm decodes it):
    walks it iteratively and stops at the first limit passed."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_ELEMENTS:
            raise ViewError(f"{what} has more than {MAX_ELEMENTS:,} values", 413)
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                raise ViewError(f"{what} is nested more than {MAX_DEPTH} deep", 400)
            children = item.values() if isinstance(item, dict) else item
            if len(children) > MAX_ELEMENTS:
                raise ViewError(f"{what} has more than {MAX_ELEMENTS:,} values", 413)
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str) and len(item) > MAX_BODY:
            raise ViewError(
                f"{what} holds a text of {len(item)} characters; at most {MAX_BODY} allowed", 413
            )


def numbers_fit(body: object) -> None:
    """Refuse a number no float can hold, or one that is not finite, wherever it is in `body`:
    every action turns numbers into floats, and Python's json reads a 400-digit integer as an
    int that float() cannot take (an OverflowError from deep inside, not a reason)."""
    # Each item is kept with its parent's place in `seen` and its own key: the path is spelt
    # out only for the number refused (spelt out for every item, 900 nested keys around a list
    # of 110,000 zeros took 3.9 GB).
    seen: list[tuple[int, object]] = []  # (parent's index in seen, key)
    stack: list[tuple[object, int, object]] = [(body, -1, None)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, (dict, list)):
            here = len(seen)
            seen.append((parent, key))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((v, here, k) for k, v in pairs)
        elif isinstance(item, int) and not isinstance(item, bool) and not _fits_float(item):
            digits = int(item.bit_length() * math.log10(2)) + 1
            raise ViewError(
                f"{_path(seen, parent, key) or 'the request'} is a whole number of "
                f"about {digits} digits, too large: numbers must fit a float (at "
                f"most about 1.8e308)"
            )
        elif isinstance(item, float) and not math.isfinite(item):
            raise ViewError(
                f"{_path(seen, parent, key) or 'the request'} is {item}: numbers must be finite"
            )


def _path(seen: list[tuple[int, object]], parent: int, key: object) -> str:
    """Where an item is in a body: ``from.model.weights[3]``."""
    parts: list[str] = []
    while parent >= 0:
        parts.append(f"[{key}]" if isinstance(key, int) else f".{str(key)[:40]}")
        parent, key = seen[parent]
    return "".join(reversed(parts)).lstrip(".")


def _fits_float(n: int) -> bool:
    try:
        float(n)
    except OverflowError:
        return False
    return True
