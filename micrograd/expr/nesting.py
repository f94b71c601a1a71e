"""How deeply a program of the expression language (`expr.py`) may nest before Python's parser
reads it: `too_deep(text)`, a one-line reason or None.

Python's parser recurses once per operator of an expression, and about four times as deep per
bracket. CPython stops it with a RecursionError (`expr.parse_program` turns that into one line).
In a browser (Pyodide, the static site) the stack is the JavaScript engine's: Chromium's ran out
at about 830 chained terms or 190 brackets, and that takes Python down with it, past any
``except``. The keywords nest as the operators do (Chromium: between 750 and 900 chained `not`;
`lambda:` and `... if ... else` chain the same way), and so do a call's or a subscript's
brackets chained after another's (``f()()()``, ``a[0][0][0]``: 1,600 of them crashed), and each
level of indentation (a block inside a block). There each statement is measured first, by the
tokenizer (which does not recurse): its operators, keywords and chained brackets, plus 4 per
bracket level and per level of indentation, at most `BUDGET`, half of what crashed. On CPython
`BUDGET` is None and nothing is measured.
"""

from __future__ import annotations

import io
import keyword
import sys
import tokenize

BUDGET: int | None = 400 if sys.platform == "emscripten" else None
BRACKET_COST = 4  # a bracket level costs the parser's stack about four operators' worth
_NOT_NESTING = {",", "=", ":", ";"}  # operator tokens that do not deepen the parser's stack
# keywords that are values, not operators: `True` nests no deeper than `1.0`
_VALUES = {"True", "False", "None"}


def too_deep(text: str, budget: int | None = None) -> str | None:
    """Why `text` nests too deeply to be parsed safely here (one line naming its line), or None.
    `budget` defaults to `BUDGET` (None: no limit). A text the tokenizer cannot read is left to
    the parser, which says what is wrong in its own words."""
    budget = BUDGET if budget is None else budget
    if budget is None:
        return None
    ops = depth = deepest = indent = 0
    before = None  # the token before this one
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NL, tokenize.COMMENT):  # a line break inside brackets
                continue
            prev, before = before, tok
            if tok.type == tokenize.NEWLINE or tok.string == ";":  # a new statement
                ops = depth = deepest = 0
                continue
            if tok.type == tokenize.INDENT:  # a block inside a block (the next statement's)
                indent += 1
            elif tok.type == tokenize.DEDENT:
                indent -= 1
            elif tok.type == tokenize.NAME:
                if keyword.iskeyword(tok.string) and tok.string not in _VALUES:
                    ops += 1  # `not`, `and`, `if`, `else`, `lambda`, ...: operators in words
            elif tok.type != tokenize.OP:
                continue
            elif tok.string in "([{":
                depth += 1
                deepest = max(deepest, depth)
                if prev is not None and prev.type == tokenize.OP and prev.string in ")]}":
                    ops += 1  # a call or a subscript of a call or a subscript: `f()()`, `a[0][0]`
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string not in _NOT_NESTING:
                ops += 1
            if ops + BRACKET_COST * (deepest + indent) > budget:
                return (
                    f"line {tok.start[0]}: an expression is nested too deeply for Python in "
                    f"a browser (about {budget} terms in one chain, or "
                    f"{budget // BRACKET_COST} brackets); split it over several assignments"
                )
    except (tokenize.TokenError, SyntaxError):
        return None
    return None
