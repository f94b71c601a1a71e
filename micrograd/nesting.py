"""How deeply a program of the expression language (`expr.py`) may nest before Python's parser
reads it: `too_deep(text)`, a one-line reason or None.

Python's parser recurses once per operator of an expression, and about four times as deep per
bracket. CPython stops it with a RecursionError (`expr.parse_program` turns that into one line).
In a browser (Pyodide, the static site) the stack is the JavaScript engine's: Chromium's ran out
at about 830 chained terms or 190 brackets, and that takes Python down with it, past any
``except``. There each statement is measured first, by the tokenizer (which does not recurse):
its operators plus 4 per bracket level, at most `BUDGET`, half of what crashed. On CPython
`BUDGET` is None and nothing is measured.
"""

from __future__ import annotations

import io
import sys
import tokenize

BUDGET: int | None = 400 if sys.platform == "emscripten" else None
BRACKET_COST = 4  # a bracket level costs the parser's stack about four operators' worth
_NOT_NESTING = {",", "=", ":", ";"}  # operator tokens that do not deepen the parser's stack


def too_deep(text: str, budget: int | None = None) -> str | None:
    """Why `text` nests too deeply to be parsed safely here (one line naming its line), or None.
    `budget` defaults to `BUDGET` (None: no limit). A text the tokenizer cannot read is left to
    the parser, which says what is wrong in its own words."""
    budget = BUDGET if budget is None else budget
    if budget is None:
        return None
    ops = depth = deepest = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE or tok.string == ";":  # a new statement
                ops = depth = deepest = 0
                continue
            if tok.type != tokenize.OP:
                continue
            if tok.string in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string not in _NOT_NESTING:
                ops += 1
            if ops + BRACKET_COST * deepest > budget:
                return (f"line {tok.start[0]}: an expression is nested too deeply for Python in "
                        f"a browser (about {budget} terms in one chain, or "
                        f"{budget // BRACKET_COST} brackets); split it over several assignments")
    except (tokenize.TokenError, SyntaxError):
        return None
    return None
