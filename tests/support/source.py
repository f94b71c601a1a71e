"""The package's source read as syntax trees, for tests that hold something about the code itself
(an expression written once, a loop written as the lecture writes it) or edit one place of it in
a copy: they read `ast`, never the text, so a comment or a reformatting cannot fool them."""

from __future__ import annotations

import ast
import pathlib


def tree(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text())


def replace_node(path: pathlib.Path, node: ast.AST, new: str) -> None:
    """Write `new` over the source of `node` in the file (as a contributor edits that one place);
    the tree's columns count UTF-8 bytes."""
    lines = path.read_bytes().splitlines(keepends=True)
    start = sum(map(len, lines[: node.lineno - 1])) + node.col_offset
    end = sum(map(len, lines[: node.end_lineno - 1])) + node.end_col_offset
    text = b"".join(lines)
    path.write_bytes(text[:start] + new.encode() + text[end:])


def occurrences(package: pathlib.Path, expression: str) -> int:
    """How many expressions in the package's syntax trees are `expression` (names included)."""
    want = ast.dump(ast.parse(expression, mode="eval").body)
    return sum(
        ast.dump(node) == want
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.expr)
    )


def calls(path: pathlib.Path, name: str) -> list[ast.Call]:
    """Every call in the module of a function or method called `name` (`f(...)`, `x.f(...)`)."""
    return [
        node
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    ]


def names(path: pathlib.Path) -> set[str]:
    """Every name and attribute the module uses."""
    found = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def strings(path: pathlib.Path) -> list[str]:
    """Every string constant of the module (docstrings included; f-strings' literal parts)."""
    return [
        node.value
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
