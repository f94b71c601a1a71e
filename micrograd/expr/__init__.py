"""A tiny expression language: what `micrograd graph` and the playground evaluate (the command
itself is in `commands/graph.py`).

    micrograd graph "a = 2.0; b = -3.0; e = a*b; L = e*-2"            # text view in the terminal
    micrograd graph "x = 2.0; w = -3.0; o = tanh(x*w + 6.88)" -o o.svg  # an image (needs Graphviz)

A program is assignments separated by ``;`` or newlines. The right-hand sides use numbers, names
assigned earlier, ``+ - * / **``, unary ``-``, parentheses, and the engine's ops as functions,
each taking as many arguments as its declaration says (`FUNCTIONS` and `ARITY`, read live from
the op registry: ``tanh(x)``, ``relu(x)``, ``maximum(a, b)``, ...). Each name labels
the Value it is given; the last assignment is the output, and backpropagation runs from it.
Numbers combine as numbers (``e * -2`` multiplies by the constant -2, ``x ** 2`` is the op
``**2``); anything involving a name becomes a node of the graph. Numbers are written in decimal
(``0x10`` is refused, not read as 16).

A name given a number is a leaf, and a leaf is a *parameter* (what training moves, as the
lecture's weights and bias) or *data* (what it does not, as the lecture's inputs). A marker on
the assignment says which, in Python's own annotation syntax: ``w1: param = -3.0``,
``x1: data = 2.0``. Without one, a named leaf is a parameter (the lecture nudges a, b, c and f of
``L = (a*b + c)*f`` alike); a number written inside an expression (the 2 of ``2*n``) is a
constant, neither. A re-assigned name labels each new node with a subscript: ``x``, ``x₂``,
``x₃`` (never primes, which read as derivatives).

`parse_program` reads the text with `ast` and evaluates only the node types above, one by one,
without recursion; it never calls eval or exec, so anything else (attribute access, other calls,
imports, indexing, strings, ...) is a `ProgramError` naming the line and the construct, in one
short line (its `hint` says what the language has, for a caller that does not show it already).

The expression language's folder: this module (parsing and evaluating a program); nesting.py,
how deep a program may nest where a browser's stack is small; positions.py, where each node is
written in the text.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from ..core.floats import FLOAT_MAX_TEXT
from ..engine import OPS, OpInfo, Value
from . import nesting
from .positions import Offsets as _Offsets
from .positions import Span
from .positions import offsets as _offsets
from .positions import segment as _segment


class _Functions(Mapping):
    """Every primitive of the engine with a method of its own and a fixed number of inputs, by
    its method name: tanh(x) is x.tanh(), maximum(a, b) is a.maximum(b). (Operators such as +
    and ** are written as operators; dot and sum take any number.) Read live from the registry:
    an op registered later is a function of the language too."""

    def _all(self) -> dict[str, OpInfo]:
        return {
            info.method.__name__: info
            for info in OPS.values()
            if info.arity and not info.param and not info.method.__name__.startswith("_")
        }

    def __getitem__(self, name: str) -> Callable[..., Value]:
        return self._all()[name].method

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def arity(self, name: str) -> int:
        return self._all()[name].arity  # type: ignore[return-value]


class _Arity(Mapping):
    """How many arguments each function of `FUNCTIONS` takes: as many as its op declares."""

    def __getitem__(self, name: str) -> int:
        return FUNCTIONS.arity(name)

    def __iter__(self) -> Iterator[str]:
        return iter(FUNCTIONS)

    def __len__(self) -> int:
        return len(FUNCTIONS)


FUNCTIONS = _Functions()
ARITY = _Arity()


def function_names() -> str:
    """The functions of the language, as the help text lists them: 'relu/exp/log/...'."""
    return "/".join(FUNCTIONS)


def language() -> str:
    """The language in one sentence, for messages."""
    return (
        "a program is assignments like `x = 2.0` separated by ';' or newlines, using numbers, "
        f"earlier names, + - * / **, unary -, parentheses and {function_names()}; a leaf may be "
        "marked `w: param = 1.0` or `x: data = 2.0`"
    )


def __getattr__(name: str) -> str:  # LANGUAGE and FUNCTION_NAMES, as they are now
    if name == "LANGUAGE":
        return language()
    if name == "FUNCTION_NAMES":
        return function_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ROLES = ("param", "data")  # the markers of a leaf: `w: param = 1.0`, `x: data = 2.0`
BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
UNARY_OPS: dict[type, Callable[[Any], Any]] = {ast.USub: lambda a: -a, ast.UAdd: lambda a: a}

# What to call the constructs the language refuses, so the message says what was written (and,
# after a "; ", how to write it instead).
_REFUSED = {
    ast.Attribute: "attribute access",
    ast.Subscript: "indexing",
    ast.Lambda: "lambda",
    ast.Import: "import",
    ast.ImportFrom: "import",
    ast.List: "a list",
    ast.Tuple: "a tuple",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Compare: "a comparison",
    ast.BoolOp: "and/or",
    ast.IfExp: "a conditional expression",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "the := operator",
    ast.Starred: "unpacking with *",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.AugAssign: "augmented assignment; write `x = x + 1`",
}
_OPERATOR_TEXT = {
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.Not: "not",
    ast.Invert: "~",
}


class ProgramError(ValueError):
    """A program the expression language does not accept, or whose arithmetic fails: one short
    line. `hint` is what the language has (`language()`) when the construct is outside it, for a
    caller that does not show that already (the command line adds it; the playground's page has
    it written under the box)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


def _where(node: ast.AST, text: str) -> tuple[str, str]:
    """('line N: ', ' `the source`') for a message."""
    snippet = _segment(text, node)
    snippet = " ".join(snippet.split())
    if len(snippet) > 40:
        snippet = snippet[:37] + "..."
    return f"line {getattr(node, 'lineno', '?')}: ", f" `{snippet}`" if snippet else ""


def _refuse(node: ast.AST, text: str, what: str) -> ProgramError:
    """ "line 2: attribute access is not allowed: `a.b`" (and its own hint after "; ", if any)."""
    at, snippet = _where(node, text)
    what, _, instead = what.partition("; ")
    message = f"{at}{what} is not allowed{':' + snippet if snippet else ''}"
    return ProgramError(f"{message}; {instead}" if instead else message, language())


# Python reads 0x10 as 16, 0o10 as 8, 0b10 as 2: a learner who types them means something else
_NOT_DECIMAL = {"x": "hexadecimal", "o": "octal", "b": "binary"}


def _check_expression(expr: ast.expr, text: str) -> None:
    """Refuse every node type outside the language, before anything is evaluated."""
    for node in ast.walk(expr):  # breadth-first and iterative
        if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop)):
            continue  # judged with the node that holds them
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                kind = "a string" if isinstance(value, (str, bytes)) else f"the constant {value!r}"
                raise _refuse(node, text, kind)
            if isinstance(value, float) and value in (float("inf"), float("-inf")):
                raise _refuse(node, text, f"a number too large for a float ({FLOAT_MAX_TEXT})")
            written = _segment(text, node).lower()
            if written[:1] == "0" and written[1:2] in _NOT_DECIMAL:
                at, _ = _where(node, text)
                raise ProgramError(
                    f"{at}{written} is a {_NOT_DECIMAL[written[1]]} number ({value} in decimal): "
                    f"write numbers in decimal, like {value} or 2.5"
                )
        elif isinstance(node, ast.Name):
            pass  # defined or not is known only when evaluating, in order
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in BINARY_OPS:
                raise _refuse(node, text, f"the operator {_OPERATOR_TEXT.get(type(node.op), '?')}")
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in UNARY_OPS:
                raise _refuse(node, text, f"the operator {_OPERATOR_TEXT.get(type(node.op), '?')}")
        elif isinstance(node, ast.Call):
            func = node.func
            if not isinstance(func, ast.Name):
                raise _refuse(node, text, f"calling anything but {function_names()}")
            if func.id not in FUNCTIONS:
                raise _refuse(node, text, f"calling {func.id}()")
            n = ARITY[func.id]
            if (
                node.keywords
                or len(node.args) != n
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                at, snippet = _where(node, text)
                takes = "exactly one argument" if n == 1 else f"exactly {n} arguments"
                raise ProgramError(f"{at}{func.id}() takes {takes}{snippet}")
        else:
            raise _refuse(node, text, _REFUSED.get(type(node), type(node).__name__))


def _number(value: int | float, node: ast.AST, text: str) -> int | float:
    # An int stays an int, as in Python, so `x ** 2` is the op '**2' (not '**2.0').
    try:
        float(value)
    except OverflowError:
        at, snippet = _where(node, text)
        raise ProgramError(f"{at}the number is too large for a float{snippet}") from None
    return value


def _evaluate(
    expr: ast.expr,
    names: dict[str, Value],
    text: str,
    sources: dict[Value, Span] | None = None,
    at: _Offsets | None = None,
) -> tuple[Value | int | float, Span | None]:
    """Post-order evaluation with an explicit stack: no recursion of our own. Returns the value
    and, if it is a number, where it is written. A number meeting a Value becomes a constant
    leaf here, before the op (as the op itself would make it: the same graph), so that `sources`
    can record where each constant is written (a constant an op makes of its own, such as the -1
    of ``a - b``, is written nowhere)."""
    results: list[Value | int | float] = []
    spans: list[Span | None] = []  # beside each result: where a number result is written

    def constant(x: int | float, span: Span | None) -> Value:
        v = Value(x)
        if sources is not None and span is not None:
            sources[v] = span
        return v

    def where(node: ast.AST) -> Span | None:
        return at.span(node) if at is not None else None

    stack: list[tuple[ast.expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, ast.Constant):
            results.append(_number(node.value, node, text))
            spans.append(where(node))
        elif isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                raise _refuse(node, text, f"using the function {node.id} as a value")
            if node.id not in names:
                at, _ = _where(node, text)
                raise ProgramError(f"{at}the name {node.id!r} is used before it is assigned")
            results.append(names[node.id])
            spans.append(None)
        elif not ready:
            stack.append((node, True))
            operands = (
                [node.left, node.right]
                if isinstance(node, ast.BinOp)
                else [node.operand]
                if isinstance(node, ast.UnaryOp)
                else node.args  # a Call, checked to have as many arguments as its op declares
            )
            stack.extend((child, False) for child in reversed(operands))
        elif isinstance(node, ast.BinOp):
            b, a = results.pop(), results.pop()
            b_at, a_at = spans.pop(), spans.pop()
            if isinstance(a, Value) or isinstance(b, Value):
                if not isinstance(a, Value):
                    a = constant(a, a_at)
                elif not isinstance(b, Value) and not isinstance(node.op, ast.Pow):
                    b = constant(b, b_at)  # (x ** 2 keeps its number: the op '**2')
                results.append(BINARY_OPS[type(node.op)](a, b))
                spans.append(None)
            else:  # two numbers: fold them, with the engine's checks (0 ** -1, (-8) ** 0.5)
                results.append(BINARY_OPS[type(node.op)](Value(a), b).data)
                spans.append(where(node))
        elif isinstance(node, ast.UnaryOp):
            x = results.pop()
            results.append(UNARY_OPS[type(node.op)](x))
            spans.pop()
            spans.append(None if isinstance(x, Value) else where(node))  # -3.0 is one number
        else:
            n = len(node.args)
            args = [
                a if isinstance(a, Value) else constant(a, a_at)
                for a, a_at in zip(results[-n:], spans[-n:])
            ]
            del results[-n:], spans[-n:]
            results.append(FUNCTIONS[node.func.id](*args))
            spans.append(None)
    return results[0], spans[0]


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _version(name: str, k: int) -> str:
    # A re-assigned name labels each new node apart (x, x₂, x₃, ...): a picture or a chain-rule
    # line where two different nodes are both called `x` would be unreadable. Subscripts, not
    # primes (x' reads as a derivative); and no name the learner could write clashes with them
    # (Python names cannot hold subscript digits).
    return name if k == 0 else name + str(k + 1).translate(_SUBSCRIPTS)


def parse_program(
    text: str,
    sources: dict[Value, Span] | None = None,
    roles: dict[Value, tuple[str | None, Span]] | None = None,
) -> dict[str, Value]:
    """Run a program of the expression language; return every assigned name and its Value.

    The dict is in order of assignment, last assigned last: its last value is the program's output.
    A name labels the Value it is first given (``b = a`` leaves `a`'s label alone); a re-assigned
    name labels its new Value with a subscript (``x = 2.0; x = x*3`` gives `x` and `x₂`). No
    backward pass is run. Raises `ProgramError` (a ValueError) for anything outside the language
    and for arithmetic that fails (``log(-1)``, division by zero), naming the line.

    `sources`, if given, is filled with where each leaf is written: ``{Value: (start, end)}``
    with ``text[start:end]`` the number (``a = 2.0`` gives a's ``2.0``; ``y = 2*x`` the constant's
    ``2``), so an edit of a leaf's value can be written back into the text.

    `roles`, if given, is filled for each leaf a name is given (``a = 2.0``, ``w: param = 1.0``)
    with its marker ("param", "data", or None when it has none: then it is a parameter) and where
    the name and its marker are written (``w: param`` of ``w: param = 1.0``, ``a`` of ``a =
    2.0``), so a change of role can be written back into the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_program needs the program as a str, got {type(text).__name__}")
    too_deep = nesting.too_deep(text)  # (on Pyodide only: see micrograd/expr/nesting.py)
    if too_deep:
        raise ProgramError(too_deep)
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError as exc:
        at = f"line {exc.lineno}: " if exc.lineno else ""
        raise ProgramError(f"{at}syntax error: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ProgramError(
            "an expression is nested too deeply for Python's parser (about 2,000 terms in one "
            "chain); split it over several assignments"
        ) from None
    except ValueError as exc:  # e.g. a NUL byte in the source
        raise ProgramError(f"the program cannot be parsed: {exc}") from None

    names: dict[str, Value] = {}
    assigned: dict[str, int] = {}  # how often each name was assigned so far
    at = _offsets(text) if sources is not None or roles is not None else None
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            _check_expression(stmt.value, text)
            at, snippet = _where(stmt, text)
            raise ProgramError(f"{at}expected an assignment like `y = ...`, got{snippet}")
        role = _role(stmt, text)
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            raise _refuse(
                stmt, text, _REFUSED.get(type(stmt), f"a {type(stmt).__name__} statement")
            )
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            at, snippet = _where(stmt, text)
            raise ProgramError(f"{at}assign to exactly one name at a time{snippet}")
        target = targets[0]
        name = target.id
        expr = cast(ast.expr, stmt.value)  # `x: param` without a value: refused by _role
        if name in FUNCTIONS:
            raise _refuse(stmt, text, f"assigning to the function name {name!r}")
        _check_expression(expr, text)
        try:
            value, span = _evaluate(expr, names, text, sources, at)
        except ProgramError:
            raise
        except (ArithmeticError, ValueError, TypeError) as exc:  # the engine's own messages
            raise ProgramError(f"line {stmt.lineno}: {exc}") from None
        if not isinstance(value, Value):
            value = Value(value)
            if sources is not None and span is not None:
                sources[value] = span
            if roles is not None and at is not None:
                end = stmt.annotation if isinstance(stmt, ast.AnnAssign) else target
                roles[value] = (role, (at.span(target)[0], at.span(end)[1]))
        elif role is not None:
            at_line, snippet = _where(stmt, text)
            raise ProgramError(
                f"{at_line}only a name given a number can be marked `{role}` "
                f"(`{name}: {role} = 2.0`), not{snippet}"
            )
        if not value.label:
            value.label = _version(name, assigned.get(name, 0))
        assigned[name] = assigned.get(name, 0) + 1
        names.pop(name, None)  # a re-assigned name moves to the end: it is the latest output
        names[name] = value
    if not names:
        raise ProgramError("the program assigns nothing", language())
    return names


def _role(stmt: ast.stmt, text: str) -> str | None:
    """The marker of ``w: param = 1.0`` ("param"), None for a plain assignment; a ProgramError for
    any other annotation."""
    if not isinstance(stmt, ast.AnnAssign):
        return None
    at, snippet = _where(stmt, text)
    marker = stmt.annotation
    if not isinstance(marker, ast.Name) or marker.id not in ROLES or not stmt.simple:
        raise ProgramError(
            f"{at}a name is marked `param` or `data` (`w: param = 1.0`), nothing else:{snippet}"
        )
    if stmt.value is None:
        name = _segment(text, stmt.target)
        raise ProgramError(
            f"{at}`{name}: {marker.id}` needs a number: write `{name}: {marker.id} = 1.0`"
        )
    return marker.id
