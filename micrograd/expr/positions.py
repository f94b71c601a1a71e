"""Where things are in a program's text: ast's (line, UTF-8 byte column) positions as offsets
into the text (`Offsets`, `offsets(text)`), and a node's source (`segment`), for the
expression language (expr.py) and the explorer's edits of a program.

Lines are split as Python's parser splits them (at \\n, \\r\\n and \\r only), and each
program's lines are split once: `ast.get_source_segment` splits the whole text again at every
call, which made parsing a long program quadratic.
"""

from __future__ import annotations

import ast
import functools
import re

Span = tuple[int, int]  # where a number is written in the program: text[start:end]


# Python's parser ends a line at \n, \r\n or \r only; str.splitlines also splits at \v, \f,
# \x1c-\x1e, \x85, \u2028 and \u2029, which a comment may hold: positions counted by it are off
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")


class Offsets:
    """ast's (line, UTF-8 byte column) positions as offsets into the program's text, its lines
    split as Python's parser splits them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _LINE.findall(text)
        rest = text[sum(map(len, self.lines)) :]
        if rest:
            self.lines.append(rest)
        self.ascii = [line.isascii() for line in self.lines]
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def _at(self, line: int, col: int) -> int:
        if self.ascii[line - 1]:  # a byte a character (and no encoding of a long line per node)
            return self.starts[line - 1] + col
        return self.starts[line - 1] + len(self._encoded(line)[:col].decode())

    @functools.lru_cache(maxsize=64)  # noqa: B019  (one Offsets per program, kept by offsets)
    def _encoded(self, line: int) -> bytes:
        return self.lines[line - 1].encode()

    def span(self, node: ast.AST) -> Span:
        return (
            self._at(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self._at(node.end_lineno, node.end_col_offset),
        )  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        """The source of `node` ('' if it has no position): ast.get_source_segment, which
        splits the whole text again at every call (quadratic over a long program)."""
        if getattr(node, "end_col_offset", None) is None:
            return ""
        start, end = self.span(node)
        return self.text[start:end]


@functools.lru_cache(maxsize=4)
def offsets(text: str) -> Offsets:
    """The `Offsets` of a program's text, made once (a message about any node looks it up)."""
    return Offsets(text)


def segment(text: str, node: ast.AST) -> str:
    """The source of `node` in `text` ('' if it has no position)."""
    return offsets(text).segment(node)
