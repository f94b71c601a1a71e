"""The course notebooks' own checks: grads worked out by hand (or by each op's `_backward`)
against a nudge, at the lecture's numbers and at a second point, and how a check's verdict shows.

    from micrograd.check.notebook import compare_grads, passed, fail
    compare_grads([n, x1, w2], root=o, rerun=lambda: neuron(x1=1.5, x2=-0.5, ...))

`compare_grads` prints a line per node (✓, or ✗ with the mistake its number suggests, named in
the explorer's words: `check.mistakes.diagnose`, the one list of mistakes both use) and
stops with `CheckFailed` at a wrong one. The lecture's numbers can hide a mistake (x2 = 0, so
``w2.grad = x2.data`` comes out right), so a by-hand exercise is run again (`rerun`: the
learner's cell, found in IPython's input history, re-executed with its names bound to the same
graph at a second point where no input is 0 or 1), and a rule exercise is judged on the second
graph its check cell built (`second`).

`CheckFailed` is an AssertionError (a failed check stops "Run all", and ``micrograd grade``
reads it as failed); under IPython it shows as its diagnosis alone, as does an ``assert`` at the
top level of a cell (a check cell's), never a traceback through the checker (`show_plainly`,
installed when `micrograd.check` is imported).
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, NoReturn

from ..viz.formatting import format_number as fmt

H = 1e-6  # the nudge: a central difference, in plain floats
TOLERANCE = 1e-5  # a grad within this (relative, beyond ±1) of the nudge is right
FORWARD: dict[str, Callable[..., float]] = {  # the ops the notebooks' graphs use, in floats
    "+": lambda *xs: math.fsum(xs),
    "*": lambda *xs: math.prod(xs),
    "tanh": math.tanh,
    "exp": math.exp,
    "relu": lambda x: max(0.0, x),
}


class CheckFailed(AssertionError):
    """A check found a mistake; the message is its diagnosis (shown alone under IPython)."""


def fail(diagnosis: str) -> NoReturn:
    show_plainly()  # micrograd.check may have been imported before IPython started
    raise CheckFailed(diagnosis)


def passed(text: str) -> None:
    """The one line a right answer gets."""
    print(f"✓ {text}")


# ------------------------------------------------------------------ the graph, in floats


def _kids(v: Any) -> list[Any]:
    return list(getattr(v, "_prev", ()) or ())


def _graph(root: Any) -> list[Any]:
    """Every node under `root`, children before parents."""
    order: list[Any] = []
    seen: set[int] = set()
    stack = [(root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
        elif id(v) not in seen:
            seen.add(id(v))
            stack.append((v, True))
            stack.extend((k, False) for k in reversed(_kids(v)))
    return order


def _forward(order: list[Any], moved: Any = None, h: float = 0.0) -> float:
    """The root's value recomputed from the leaves' data, with node `moved` shifted by `h`."""
    val: dict[int, float] = {}
    for v in order:
        kids = _kids(v)
        if kids:
            op = getattr(v, "_op", "")
            if op not in FORWARD:
                raise ValueError(f"compare_grads: no forward rule for op {op!r} of {_name(v)}")
            x = FORWARD[op](*(val[id(k)] for k in kids))
        else:
            x = float(v.data)
        val[id(v)] = x + (h if v is moved else 0.0)
    return val[id(order[-1])]


def _nudge(order: list[Any], v: Any) -> float:
    return (_forward(order, v, H) - _forward(order, v, -H)) / (2 * H)


def _local(parent: Any, kid: Any) -> float:
    """∂parent/∂kid, by a central difference of the parent's op alone."""
    kids = _kids(parent)
    f = FORWARD[parent._op]

    def at(d: float) -> float:
        return f(*(float(k.data) + (d if k is kid else 0.0) for k in kids))

    return (at(H) - at(-H)) / (2 * H)


Names = Callable[[Any], str]  # a node -> its name, as the learner's code writes it


def namer(root: Any, ns: dict[str, Any]) -> Names:
    """Each node of `root`'s graph named as the namespace `ns` (the notebook's) names it
    (x1w1, as the exercise and the explorer write it), else by its label as a formula would."""
    order = _graph(root)
    mine = {id(v) for v in order}
    by_id: dict[int, str] = {}
    for n, v in ns.items():
        if id(v) in mine and not n.startswith("_") and id(v) not in by_id:
            by_id[id(v)] = n
    return lambda v: by_id.get(id(v), _formula(v))


def _name(v: Any) -> str:
    return str(getattr(v, "label", "") or "?")


def _formula(v: Any) -> str:
    """The node as a formula writes it: x1, or (x1*w1) for a label that is not a name."""
    name = _name(v)
    return name if name.isidentifier() else f"({name})"


def _near(x: float, y: float) -> bool:
    return abs(x - y) <= TOLERANCE * max(1.0, abs(y))


# ------------------------------------------------------------------ judging one point


def _why(v: Any, got: float, order: list[Any], truth: dict[int, float], names: Names) -> str:
    """The mistake `got` (v's grad, not truth) suggests, as the explorer names it."""
    from .mistakes import Question, diagnose  # the explorer's list of mistakes, shared

    if v is order[-1]:  # the root: nudging it moves it by exactly as much
        name = names(v)
        return (
            f"{name} is the output itself: nudging {name} by h moves {name} by h, so "
            f"{name}.grad = d{name}/d{name} = 1"
        )
    parents = [p for p in order if any(k is v for k in _kids(p))]
    if len(parents) != 1 or parents[0]._op not in FORWARD:
        return "the chain rule: the sum, over each use, of the local derivative × the grad above"
    p = parents[0]
    out, kid = names(p), names(v)
    theirs = getattr(p, "grad", None)
    if p._op == "tanh" and len(_kids(p)) == 1:  # 1 − t², t the output; not 1 − x², x the input
        x, up = float(v.data), truth[id(p)]
        if not _near(got, truth[id(v)]) and _near(got, (1 - x * x) * up):
            return (
                f"that is (1 − {kid}²) × {out}.grad, with {kid} the input: tanh's local "
                f"derivative is 1 − t², t = {out}.data the output ({fmt(float(p.data))})"
            )
    if isinstance(theirs, (int, float)) and not _near(float(theirs), truth[id(p)]):
        if _near(got, _local(p, v) * float(theirs)):
            return f"it follows from {out}.grad, which is off: fix that one first"
    kids = _kids(p)
    mate = [k for k in kids if k is not v]
    product = p._op == "*" and len(kids) == 2 and len(mate) == 1
    q = Question(
        child=v,
        name=kid,
        parent=p,
        out=out,
        op=p._op,
        want=truth[id(v)],
        had=0.0,
        local=_local(p, v),
        formula=None,
        out_grad=truth[id(p)],
        paths=sum(k is v for k in kids),
        other=names(mate[0]) if product else None,
        own=float(v.data) if product else None,
        product="·".join(names(k) for k in kids) if product else "",
        shown=truth[id(v)],
    )
    said = diagnose(q, got, level=2)
    if said.startswith(("not yet", "close")):
        return f"the chain rule: ∂{out}/∂{kid} × {out}.grad"
    return said


def _judge(nodes: Sequence[Any], root: Any, names: Names, where: str = "") -> list[str]:
    """A line per node, printed in order (✓ or ✗), but for the first wrong one, which is the line
    the check stops with (shown once, as its failure); the wrong ones returned."""
    order = _graph(root)
    truth = {id(v): _nudge(order, v) for v in order}
    top = names(root)
    wrong = []
    for v in nodes:
        g = getattr(v, "grad", None)
        name = names(v)
        if g is ...:
            line = (
                f"not attempted: {name}.grad is still `...`: replace it with your number (or "
                f"expression), run that cell, then this one"
            )
            if wrong:
                print(f"✗ {line}")
            wrong.append(line)
            continue
        want = truth[id(v)]
        if isinstance(g, (int, float)) and not isinstance(g, bool) and _near(float(g), want):
            if not where:
                print(f"✓ {name}.grad = {fmt(g)}  (nudge: {want:.6f})")
            continue
        number = isinstance(g, (int, float)) and not isinstance(g, bool)
        said = f"{name}.grad = {fmt(g) if number else repr(g)}, but nudging {name} moves {top} "
        said += f"by {want:.6f} per unit"
        if number:
            said += f": {_why(v, float(g), order, truth, names)}"
        if wrong:  # (the first is the line the check stops with: shown once, there)
            print(f"✗ {where}{said}")
        wrong.append(f"{where}{said}")
    return wrong


# ------------------------------------------------------------------ the second point


def _by_label(nodes: Sequence[Any], root: Any) -> dict[str, Any]:
    return {_name(v): v for v in [*nodes, *_graph(root)]}


def _at(root: Any) -> str:
    leaves = [v for v in _graph(root) if not _kids(v)]
    return ", ".join(f"{_name(v)} = {fmt(v.data)}" for v in leaves)


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _assigned(source: str) -> dict[str, ast.expr] | None:
    """NAME -> the expression a cell assigns to NAME.grad (None: not Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    out: dict[str, ast.expr] = {}

    def bind(target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Attribute) and target.attr == "grad":
            if isinstance(target.value, ast.Name):
                out[target.value.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):  # x1.grad, w1.grad = ..., ...
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for i, t in enumerate(target.elts):
                bind(t, value.elts[i] if pairs else value)  # type: ignore[attr-defined]

    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                bind(t, stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            bind(stmt.target, stmt.value)
    return out


def _exercise(names: dict[str, Any], nodes: Sequence[Any]) -> tuple[str, set[str]] | None:
    """The learner's latest cell (before this one) that sets a given node's grad, and which of
    those nodes it sets from other values (not a plain number: only those can be tried again)."""
    shell = _shell()
    history = getattr(shell, "user_ns", {}).get("In") if shell is not None else None
    if not history:
        return None
    given = {id(v) for v in nodes}
    mine = {n for n, v in names.items() if id(v) in given}
    for source in reversed(history[:-1]):
        assigned = _assigned(source) or {}
        hit = {n for n in assigned if n in mine}
        if hit:
            computed = {
                n for n in hit if any(isinstance(x, ast.Name) for x in ast.walk(assigned[n]))
            }
            return source, computed
    return None


def _rerun(
    nodes: Sequence[Any], root: Any, build: Callable[[], Sequence[Any]], ns: dict[str, Any]
) -> tuple[list[Any], str] | str | None:
    """The learner's exercise cell, run again on the graph `build` makes at a second point: the
    nodes to judge there (the root first) and the names they were set under; a line when it
    cannot be judged there; None without IPython's input history."""
    first = {id(v) for v in _graph(root)}
    names = {n: v for n, v in ns.items() if id(v) in first and not n.startswith("_")}
    found = _exercise(names, nodes)
    if found is None:
        return None
    source, computed = found
    if not computed:
        return "  (your grads are plain numbers: they are checked at the lecture's numbers only)"
    second = build()
    order = _graph(second[0])
    for v in order:  # the grads earlier cells set (notebook 1's steps): right, as checked
        v.grad = _nudge(order, v)
    by_label = _by_label(second, second[0])
    again = dict(ns)
    for n, v in names.items():
        if _name(v) in by_label:
            again[n] = by_label[_name(v)]
    try:
        exec(compile(source, "<your exercise, run again>", "exec"), again)
    except Exception as e:  # the learner's cell: whatever it raises is the verdict
        return f"your cell, run again at a second point ({_at(second[0])}), raised {e!r}"
    hit = {_name(v) for n, v in names.items() if n in computed}
    return [second[0], *(by_label[_name(v)] for v in nodes if _name(v) in hit)], ""


def compare_grads(
    nodes: Sequence[Any],
    root: Any,
    *,
    rerun: Callable[[], Sequence[Any]] | None = None,
    second: Sequence[Any] | None = None,
    ns: dict[str, Any] | None = None,
) -> None:
    """Each node's grad against a nudge of it (how much `root` moves per unit), a line each;
    `CheckFailed` at a wrong one. Then the same at a second point: `rerun` builds the graph
    there (the root first) and the learner's exercise cell (the latest in IPython's input
    history that sets one of these grads) runs again on it; `second` is that graph already
    computed (the root first). Nodes are named as `ns` names them (by default the caller's
    globals, the notebook's), else by label; the second graph's are matched by label."""
    ns = ns if ns is not None else sys._getframe(1).f_globals
    names = namer(root, ns)
    wrong = _judge(nodes, root, names)
    there: list[Any] = []
    if not wrong and rerun is not None:
        done = _rerun(nodes, root, rerun, ns)
        if isinstance(done, str):
            if done.startswith("  "):
                print(done)
            else:
                wrong = [done]
        elif done is not None:
            there = done[0]
    elif not wrong and second is not None:
        by_label = _by_label(second, second[0])
        there = [second[0], *(by_label[_name(v)] for v in nodes if _name(v) in by_label)]
    if there:
        label = {_name(v): names(v) for v in _graph(root)}
        wrong = _judge(
            there[1:],
            there[0],
            lambda v: label.get(_name(v), _formula(v)),
            f"at a second point ({_at(there[0])}): ",
        )
    if wrong:
        more = len(wrong) - 1
        fail(wrong[0] + (f" (and {more} more, above)" if more else ""))
    also = ", at the lecture's numbers and at a second point" if there else ""
    passed(f"all {len(nodes)} grad{'s' * (len(nodes) != 1)} right{also}")


# ------------------------------------------------------------------ += in each _backward

HELD = (0.25, -0.5)  # the grads a and b already hold (from another use) when an op's runs
UPSTREAM = 1.5


def accumulates(value_class: type, ops: Sequence[str] = ("+", "*", "tanh")) -> None:
    """Each op's `_backward` adds (+=) to its inputs' grads, which may already hold a gradient
    from another use: a = 3, b = -2 holding grads 0.25 and -0.5, out = a op b with out.grad =
    1.5, then out._backward() alone. An input's grad that comes out as its local derivative ×
    1.5, the 0.25 (or -0.5) gone, was assigned (=); `CheckFailed` names the op and the input
    (self or other), whatever the other input did. A ✓ line when all add."""
    build = {
        "+": (lambda a, b: a + b, lambda x, y: (1.0, 1.0)),
        "*": (lambda a, b: a * b, lambda x, y: (y, x)),
        "tanh": (lambda a, b: a.tanh(), lambda x, y: (1 - math.tanh(x) ** 2,)),
    }
    for op in ops:
        make, local = build[op]
        a, b = value_class(3.0), value_class(-2.0)
        a.grad, b.grad = HELD
        out = make(a, b)
        out.grad = UPSTREAM
        out._backward()
        inputs = [("a", a, "self"), ("b", b, "other")][: len(local(3.0, -2.0))]
        for (name, v, role), held, d in zip(inputs, HELD, local(3.0, -2.0)):
            got, want = v.grad, held + d * UPSTREAM
            if isinstance(got, (int, float)) and _near(float(got), want):
                continue
            expr = f"a {op} b" if op != "tanh" else "a.tanh()"
            said = (
                f"{op}: {name}.grad held {held} before out._backward() (from another use) and "
                f"is {got!r} after it for out = {expr} with out.grad = {UPSTREAM}, expected "
                f"{held} + {d:.6g} × {UPSTREAM} = {want:.6g}"
            )
            if isinstance(got, (int, float)) and _near(float(got), d * UPSTREAM):
                said += (
                    f": `_backward` assigns (=) {role}.grad instead of adding to it (+=), so a "
                    f"node used twice keeps only its last use's gradient"
                )
            fail(said)
    passed(f"{', '.join(ops[:-1])} and {ops[-1]} add (+=) to the grads their inputs already hold")


# ------------------------------------------------------------------ how a failed check shows


PLACEHOLDER = "`...`"


def unfilled(obj: Any) -> str | None:
    """Where a learner's exercise (a function or class defined in the notebook) still holds a
    `...` placeholder: the first one's line (its comment, which says what goes there, if it has
    one) and how many more; "" for a plain `...`; None when it holds none (or is not the
    learner's)."""
    import inspect

    if obj is ...:
        return ""
    if getattr(obj, "__module__", None) != "__main__":
        return None  # micrograd's, or a module's: not an exercise
    if inspect.isclass(obj):  # its methods, in the order they are written
        methods = [getattr(f, "__func__", f) for f in vars(obj).values()]  # static ones too
        functions = [f for f in methods if inspect.isfunction(f)]
    elif inspect.isfunction(obj):
        functions = [obj]
    else:
        return None
    spots: list[tuple[str, str]] = []
    for f in sorted(functions, key=lambda f: f.__code__.co_firstlineno):
        spots += _dots(f)
    if not spots:
        return None
    line, where = spots[0]
    if "#" in line:  # the comment beside it says what goes there
        said = line.split("#", 1)[1].strip()
    elif line == "...":
        said = f"the body of {where}"
    else:
        said = f"at `{line}` in {where.split('(')[0]}"
    more = len(spots) - 1
    return said + (f", and {more} more" if more else "")


def _dots(f: Any) -> list[tuple[str, str]]:
    """The lines of function `f` that hold a `...` (each stripped), each with the function as
    a call names it (``softmax(logits)``, ``Neuron.__init__(self, nin)``)."""
    import inspect
    import textwrap

    try:
        signature = str(inspect.signature(f))
    except (TypeError, ValueError):
        signature = "()"
    where = f"{f.__qualname__}{signature}"
    try:
        source = textwrap.dedent(inspect.getsource(f))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):  # no source kept: its constants say it
        return [("...", where)] if ... in f.__code__.co_consts else []
    lines = source.splitlines()
    at = sorted(
        {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value is ...}
    )
    return [(lines[i - 1].strip(), where) for i in at]


def not_attempted(name: str, where: str) -> str:
    """The one line for an exercise still holding `...` (`where`: what `unfilled` said)."""
    what = f" ({where})" if where else ""
    return (
        f"not attempted: {name} still has {PLACEHOLDER}{what}: replace each {PLACEHOLDER} with "
        f"your code, run that cell, then this one"
    )


def attempted(name: str, obj: Any) -> None:
    """`CheckFailed` ("not attempted", and what goes where) when the learner's `obj` still holds
    a `...` placeholder: the check's first step, before it calls the learner's code."""
    where = unfilled(obj)
    if where is not None:
        fail(not_attempted(name, where))


def _cell_source(tb: TracebackType | None) -> str:
    """The source of the cell a traceback starts in (IPython keeps each cell in linecache)."""
    import linecache

    cell = tb.tb_next if tb is not None else None
    if cell is None:
        return ""
    return "".join(linecache.getlines(cell.tb_frame.f_code.co_filename))


def _not_attempted(shell: Any, source: str) -> str | None:
    """The one line for a cell that stopped on an exercise still holding `...`: the first name
    the cell reads whose value (a function or class of the notebook's, or a plain `...`) does."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    ns = getattr(shell, "user_ns", {})
    seen: set[str] = set()
    read = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for node in sorted(read, key=lambda n: (n.lineno, n.col_offset)):
        if node.id in seen or node.id not in ns:
            continue
        seen.add(node.id)
        where = unfilled(ns[node.id])
        if where is None:
            continue
        return not_attempted(node.id, where)
    return None


def _not_defined(shell: Any, value: NameError, tb: TracebackType | None, source: str) -> str | None:
    """The one line for a name not defined in the cell's own code (its top level, or a function
    it defines and calls, as notebook 4's check does) that the cell does not define itself: the
    cell that defines it (an exercise, or one before) has not run yet."""
    import difflib

    cell = tb.tb_next if tb is not None else None
    name = getattr(value, "name", None)
    if cell is None or not isinstance(name, str):
        return None
    last = cell
    while last.tb_next is not None:
        last = last.tb_next
    if last.tb_frame.f_code.co_filename != cell.tb_frame.f_code.co_filename:
        return None  # raised in code of another cell or module: shown as Python shows it
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    stored |= {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    if name in stored:
        return None
    known = [k for k in getattr(shell, "user_ns", {}) if not k.startswith("_")]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    if close:
        return f"{name} is not defined: did you mean {close[0]}? (else run the cells above first)"
    return (
        f"{name} is not defined yet: run the cell that defines it first (the exercise above, "
        f"where you write it, and the cells before it), then this one"
    )


def _said_by_the_notebook(value: BaseException, tb: TracebackType | None) -> bool:
    """An error a cell raises itself, at its top level, ``from None``: the notebook's own words
    to the reader (chapter 7 run before notebook 2 wrote my_value.py), not a crash."""
    cell = tb.tb_next if tb is not None else None
    return (
        cell is not None
        and cell.tb_next is None
        and cell.tb_frame.f_code.co_name == "<module>"
        and value.__suppress_context__
        and value.__cause__ is None
        and bool(str(value))
    )


def _report_headline(shell: Any, value: BaseException, source: str) -> str | None:
    """A check cell's ``assert report.ok, report.headline``: the report shown above already
    lists that problem, so the cell stops with the report's verdict, not its headline again."""
    from .report import CheckReport

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    ns = getattr(shell, "user_ns", {})
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(ns.get(n.id), CheckReport):
            report = ns[n.id]
            if not report.ok and str(value) == report.headline:
                first = "the one" if len(report.problems) == 1 else "the first"
                return f"{report.summary()}: fix {first} ✗ above, then run the cells again"
    return None


def _plainly(
    shell: Any, etype: type, value: BaseException, tb: TracebackType | None, tb_offset: Any = None
) -> list[str]:
    """IPython's handler of a cell's exceptions, so that a learner's slip is one red line (the
    error's kind is kept, for `micrograd grade` and Run all): a check that found a mistake (its
    diagnosis), an exercise still holding `...` ("not attempted", and what goes there), a name
    a cell before has not defined yet (run it first). Anything else keeps its traceback, as does
    an assert deeper than a cell's top level."""
    source = _cell_source(tb)
    line = _not_attempted(shell, source)
    if line is None and isinstance(value, NameError):
        line = _not_defined(shell, value, tb, source)
    if line is None and _said_by_the_notebook(value, tb):
        line = str(value)
    if line is None and isinstance(value, AssertionError):
        cell = tb.tb_next if tb is not None else None
        top = (
            cell is not None and cell.tb_next is None and cell.tb_frame.f_code.co_name == "<module>"
        )
        if isinstance(value, CheckFailed) or top:
            line = _report_headline(shell, value, source) or str(value) or "a check failed"
    if line is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return []
    stb = [f"\x1b[1;31m✗ {line}\x1b[0m"]
    # a check's failure keeps the kind AssertionError (CheckFailed is one): what `micrograd grade`
    # reads as "failed", not "error"
    shell._showtraceback(AssertionError if isinstance(value, AssertionError) else etype, value, stb)
    return stb


def show_plainly() -> None:
    """Under IPython, show a failed check as its diagnosis (nothing outside IPython, nor where
    another handler of exceptions is already set)."""
    shell = _shell()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return
    if shell.custom_exceptions not in ((), (AssertionError,), (Exception,)):
        return
    shell.set_custom_exc((Exception,), _plainly)
