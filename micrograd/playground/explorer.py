"""The backprop explorer: a program of the `micrograd graph` language, its graph, and the forward
and backward passes run one node at a time by the real engine.

The page (`static/index.html`, `static/explorer.js`) calls these routes; each answers with the
whole view (`Explorer.state`): every node's data and grad, the pass's progress, the chain-rule
lines so far. One backward step does exactly what `Value.backward()` does at one node, in the same
order (reverse topological, children in `_prev` order, ``child.grad += local * out.grad``), so
after the last step every grad is bit for bit the one `backward()` gives.

Routes (POST, JSON; the tab's state lives in its session):
    /api/explorer/load     {"program": str, "layout": "auto"|"dot"|"layered"}  parse and lay out
    /api/explorer/forward  {}                 fill data in topological order
    /api/explorer/step     {}                 one backward step
    /api/explorer/backward {}                 the rest of the backward pass
    /api/explorer/reset    {}                 grads back to 0, data hidden again
    /api/explorer/set      {"node": id, "value": number}  edit a leaf, run both passes again
    /api/explorer/nudge    {"node": id}       the numerical derivative at a leaf
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..engine import OPS, Value, backward_step, explain_local, grad, op_kind, topological_order
from ..expr import ARITY, ProgramError, parse_program
from ..formatting import format_number as fmt
from ..viz import GraphTooLargeError, display_names, trace
from .layout import Box, layout
from .web import HTTPError, Request, json_float

MAX_PROGRAM_CHARS = 5000
MAX_NODES = 500  # Values in one graph
NUDGE_H = 0.001  # the lecture's h
MAX_ABS_VALUE = 1e15  # an edited leaf: beyond this the 4-decimal display is a wall of digits

EXAMPLES = [
    {
        "title": "The neuron with tanh (lecture)",
        "program": "x1 = 2.0; x2 = 0.0\nw1 = -3.0; w2 = 1.0\nb = 6.8813735870195432\n"
        "x1w1 = x1*w1; x2w2 = x2*w2\nx1w1x2w2 = x1w1 + x2w2\nn = x1w1x2w2 + b\no = tanh(n)",
    },
    {
        "title": "L = (a*b + c)*f (lecture)",
        "program": "a = 2.0; b = -3.0; c = 10.0\ne = a*b\nd = e + c\nf = -2.0\nL = d*f",
    },
    {
        "title": "tanh built from exp (lecture)",
        "program": "x1 = 2.0; x2 = 0.0\nw1 = -3.0; w2 = 1.0\nb = 6.8813735870195432\n"
        "n = x1*w1 + x2*w2 + b\ne = exp(2*n)\no = (e - 1)/(e + 1)",
    },
    {
        # The lecture's bug: a _backward that assigns (=) gives a.grad 1; accumulating (+=), 2.
        "title": "b = a + a: a used twice (the lecture's bug: = gives a.grad 1, += gives 2)",
        "program": "a = 3.0\nb = a + a",
    },
    {
        "title": "a used twice, fixed by += (lecture)",
        "program": "a = -2.0; b = 3.0\nd = a*b\ne = a + b\nf = d*e",
    },
    {
        "title": "karpathy's README: g = 24.7041",
        "program": "a = -4.0; b = 2.0\nc = a + b\nd = a*b + b**3\nc = c + c + 1\n"
        "c = c + 1 + c + (-a)\nd = d + d*2 + relu(b + a)\nd = d + 3*d + relu(b - a)\n"
        "e = c - d\nf = e**2\ng = f/2.0\ng = g + 10.0/f",
    },
]
DEFAULT_PROGRAM = EXAMPLES[0]["program"]

# Record geometry, in pixels of the page's 12px monospace font (the page draws the same sizes):
# a record is three rows, label / data / grad, so the graph stays narrow enough for a screen.
CHAR_W = 7.3
RECORD_PAD = 14.0
ROW_H = 16.0
RECORD_H = 3 * ROW_H + 6
OP_H = 24.0


# ------------------------------------------------------------------------ recomputing the graph


def recompute(topo: Sequence[Value], leaves: dict[Value, float]) -> dict[Value, Value]:
    """The graph evaluated again by the engine's own ops, with some leaves set to new numbers;
    fresh Values, nothing in `topo` is touched. Raises the engine's error (log of a negative...)."""
    fresh: dict[Value, Value] = {}
    for v in topo:
        if not v._prev:
            fresh[v] = Value(leaves.get(v, v.data))
        else:
            info = OPS[op_kind(v)]
            p = getattr(v, info.param) if info.param else None  # e.g. the exponent of x ** p
            fresh[v] = info.apply(*(fresh[c] for c in v._prev), p=p)
    return fresh


# ------------------------------------------------------------------------ names and explanations


_SIMPLE = re.compile(r"[^\W\d]\w*(')*|\d[\w.]*")  # a name (α, x', t1) or a non-negative number
_CALL = re.compile(r"[^\W\d]\w*\([^()]*\)")


def _ref(name: str) -> str:
    """A name as it reads inside a formula: 'x1*w1' becomes '(x1*w1)', '-2' becomes '(-2)'."""
    return name if _SIMPLE.fullmatch(name) or _CALL.fullmatch(name) else f"({name})"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------------ the graph's drawing


def _record_width(nodes: Sequence[Value], names: dict[Value, str], grads: dict[Value, float]):
    chars = max(
        len("grad -0.0000"),
        max(len(names[v]) for v in nodes),
        max(len("data " + fmt(v.data)) for v in nodes),
        max(len("grad " + fmt(grads[v])) for v in nodes),
    )
    return round(chars * CHAR_W + RECORD_PAD, 1)


def _drawing(
    root: Value, nodes: Sequence[Value], ids: dict[Value, str], names: dict[Value, str], engine: str
) -> dict[str, Any]:
    # Field widths fit the numbers before and after the backward pass, so nothing moves later.
    record_w = _record_width(nodes, names, _final_grads(root))
    boxes: list[Box] = []
    edges: list[tuple[str, str]] = []
    info: list[dict[str, Any]] = []
    for v in nodes:
        vid = ids[v]
        boxes.append(Box(vid, record_w, RECORD_H))
        info.append(
            {
                "id": vid,
                "kind": "value",
                "name": names[v],
                "named": bool(v.label),
                "leaf": not v._prev,
            }
        )
        if v._prev:
            op = OPS.get(op_kind(v))
            caption = (op.caption if op else "") or v._op
            w = max(30.0, len(caption) * CHAR_W + 14)
            boxes.append(Box(vid + "op", w, OP_H, "ellipse"))
            edges.append((vid + "op", vid))
            info.append({"id": vid + "op", "kind": "op", "caption": caption, "of": vid})
    for v in nodes:
        for child in v._prev:
            edges.append((ids[child], ids[v] + "op"))
    placed = layout(boxes, edges, engine)
    for item, box in zip(info, boxes):
        x, y = placed.centers[box.id]
        item.update(x=round(x, 1), y=round(y, 1), w=round(box.width, 1), h=box.height)
    return {
        "width": round(placed.width, 1),
        "height": round(placed.height, 1),
        "row": ROW_H,
        "nodes": info,
        "edges": [{"from": s, "to": t, "d": d} for (s, t), d in zip(edges, placed.paths)],
        "engine": placed.engine,
        "notes": placed.notes,
    }


def _final_grads(root: Value) -> dict[Value, float]:
    """Every node's grad after a full backward pass, computed aside (no `.grad` is touched)."""
    topo = topological_order(root)
    return dict(zip(topo, grad(root, topo)))


# ------------------------------------------------------------------------ the session's state


class Explorer:
    """One tab's explorer: the program's graph and how far the passes have gone."""

    def __init__(self, program: str, engine: str) -> None:
        names_by_label = parse_program(program)
        self.program = program
        self.root = next(reversed(names_by_label.values()))
        self.nodes, _ = trace(self.root, max_nodes=MAX_NODES)
        self.ids = {v: f"v{i}" for i, v in enumerate(self.nodes)}
        self.by_id = {i: v for v, i in self.ids.items()}
        self.topo = topological_order(self.root)
        self.names = display_names(self.topo)  # c1, c2, ... and t1, t2, ... as in pictures
        self.engine = engine
        self.drawing = _drawing(self.root, self.nodes, self.ids, self.names, engine)
        self.order = [v for v in reversed(self.topo) if v._prev]  # the backward steps after seed
        self.reset()

    # -- passes

    def reset(self) -> None:
        for v in self.nodes:
            v.grad = 0.0
        self.phase = "built"  # built -> forward -> backward -> done
        self.done_steps = 0  # 0 = nothing yet; 1 = the seed; 1 + k = k nodes processed
        self.log: list[dict[str, Any]] = []
        self.current: str | None = None
        self.touched: list[str] = []
        self.nudge: dict[str, Any] | None = None

    @property
    def total_steps(self) -> int:
        return 1 + len(self.order)

    def forward(self) -> None:
        if self.phase == "built":
            self.phase = "forward"
            self.current = None

    def step(self) -> None:
        """One step of the backward pass: the seed first, then one node per step."""
        self.forward()
        if self.done_steps >= self.total_steps:
            return
        self.phase = "backward"
        out_name = _ref(self.names[self.root])
        if self.done_steps == 0:
            # What backward() does first: d(root)/d(root) = 1 (a leaf root accumulates).
            if self.root._prev:
                self.root.grad = 1.0
            else:
                self.root.grad += 1.0
            text = (
                f"{out_name}.grad = 1.0000  (∂{out_name}/∂{out_name} = 1: the backward pass "
                f"starts at the output)"
            )
            self.current = self.ids[self.root]
            self.touched = []
            self.log.append({"node": self.current, "lines": [text]})
        else:
            v = self.order[self.done_steps - 1]
            name = _ref(self.names[v])
            child_names = [_ref(self.names[c]) for c in v._prev]
            formulas = explain_local(v, child_names, name)  # the op table's formula
            g = v.grad
            lines = []
            steps = backward_step(v)  # exactly backward()'s update, in the same order
            for (_child, d, after), formula, cname in zip(steps, formulas, child_names):
                # "∂e/∂a = b = -3.0000"; a formula that is a number is shown once: "= 1.0000"
                shown = fmt(d) if _is_number(formula) else f"{formula} = {fmt(d)}"
                lines.append(
                    f"{cname}.grad += (∂{name}/∂{cname} = {shown}) × {name}.grad ({fmt(g)}) "
                    f"→ {fmt(after)}"
                )
            self.current = self.ids[v]
            self.touched = [self.ids[c] for c in v._prev]
            self.log.append({"node": self.current, "lines": lines})
        self.done_steps += 1
        if self.done_steps == self.total_steps:
            self.phase = "done"

    def backward(self) -> None:
        while self.done_steps < self.total_steps:
            self.step()

    # -- editing a leaf

    def leaf(self, node_id: object) -> Value:
        if not isinstance(node_id, str) or node_id not in self.by_id:
            raise HTTPError(400, f"no node {str(node_id)[:40]!r} in this graph")
        v = self.by_id[node_id]
        if v._prev:
            raise HTTPError(
                400,
                f"{self.names[v]} is computed from other nodes; only a leaf (an input) can be set",
            )
        return v

    def set_leaf(self, node_id: object, value: object) -> None:
        v = self.leaf(node_id)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise HTTPError(400, f"the value must be a number, got {str(value)[:40]!r}")
        value = float(value)
        if not math.isfinite(value) or abs(value) > MAX_ABS_VALUE:
            raise HTTPError(
                400, f"the value must be a number between -1e15 and 1e15, got {value!r}"
            )
        try:
            fresh = recompute(self.topo, {v: value})
        except (ArithmeticError, ValueError) as exc:
            raise HTTPError(400, f"with {self.names[v]} = {value:g}: {exc}") from None
        for node in self.topo:
            node.data = fresh[node].data
            node._local = fresh[node]._local
        self.reset()
        self.drawing = _drawing(self.root, self.nodes, self.ids, self.names, self.engine)
        self.backward()
        self.log = [
            {
                "node": node_id,
                "lines": [
                    f"{self.names[v]} = {fmt(value)}: the forward and backward passes ran again"
                ],
            }
        ]
        self.current = None
        self.touched = []
        self.nudge = self.nudge_at(v)

    def nudge_at(self, v: Value) -> dict[str, Any]:
        """The lecture's numerical derivative: (L(a + h) - L(a)) / h with h = 0.001."""
        a, out = _ref(self.names[v]), _ref(self.names[self.root])
        base = self.root.data
        try:
            bumped = recompute(self.topo, {v: v.data + NUDGE_H})[self.root].data
        except (ArithmeticError, ValueError) as exc:
            return {"node": self.ids[v], "text": f"{out}({a} + h) cannot be computed: {exc}"}
        slope = (bumped - base) / NUDGE_H
        text = (
            f"({out}({a} + h) - {out}({a})) / h = ({bumped:.6f} - {_paren6(base)}) / "
            f"{NUDGE_H:g} = {fmt(slope)}"
        )
        if self.phase == "done":
            compare = f"{a}.grad = {fmt(v.grad)} (backprop)"
        else:
            compare = f"{a}.grad: run the backward pass to compare"
        return {"node": self.ids[v], "text": text, "compare": compare, "slope": json_float(slope)}

    # -- the answer

    def state(self, with_drawing: bool = False) -> dict[str, Any]:
        shown = self.phase != "built"
        values = {
            self.ids[v]: {
                "data": json_float(v.data) if shown or not v._prev else None,
                "grad": json_float(v.grad),
            }
            for v in self.nodes
        }
        answer: dict[str, Any] = {
            "phase": self.phase,
            "values": values,
            "step": self.done_steps,
            "steps": self.total_steps,
            "current": self.current,
            "touched": self.touched,
            "log": self.log,
            "nudge": self.nudge,
            "output": self.ids[self.root],
            "forward_order": [self.ids[v] for v in self.topo],
        }
        if with_drawing:
            answer["drawing"] = self.drawing
            answer["program"] = self.program
        return answer


def _paren6(x: float) -> str:
    text = f"{x:.6f}"
    return f"({text})" if text.startswith("-") else text


# ------------------------------------------------------------------------ routes


def _explorer(req: Request) -> Explorer:
    ex = req.session.state.get("explorer")
    if ex is None:
        raise HTTPError(409, "no expression yet: build a graph first")
    return ex


def _body(req: Request) -> dict[str, Any]:
    if req.body is None:
        return {}
    if not isinstance(req.body, dict):
        raise HTTPError(400, "the request body must be a JSON object")
    return req.body


def load(req: Request) -> dict[str, Any]:
    body = _body(req)
    program = body.get("program")
    if not isinstance(program, str):
        raise HTTPError(400, "the expression must be text")
    if len(program) > MAX_PROGRAM_CHARS:
        raise HTTPError(
            400,
            f"the expression is {len(program)} characters; at most {MAX_PROGRAM_CHARS} are allowed",
        )
    if not program.strip():
        raise HTTPError(400, "the expression is empty: write assignments like `a = 2.0; b = a*a`")
    engine = body.get("layout", "auto")
    if engine not in ("auto", "dot", "layered"):
        raise HTTPError(400, "layout must be 'auto', 'dot' or 'layered'")
    try:
        ex = Explorer(program, engine)
    except ProgramError as exc:
        raise HTTPError(400, str(exc)) from None
    except GraphTooLargeError:
        limit = MAX_NODES
        raise HTTPError(
            400, f"the graph has more than {limit} nodes; the explorer shows at most {limit}"
        ) from None
    except RuntimeError as exc:  # layout="dot" without Graphviz
        raise HTTPError(400, str(exc)) from None
    with req.session.lock:
        req.session.state["explorer"] = ex
        return ex.state(with_drawing=True)


def _action(method: str) -> Callable[[Request], dict[str, Any]]:
    def handler(req: Request) -> dict[str, Any]:
        with req.session.lock:
            ex = _explorer(req)
            getattr(ex, method)()
            return ex.state()

    handler.__name__ = method
    return handler


def set_value(req: Request) -> dict[str, Any]:
    body = _body(req)
    with req.session.lock:
        ex = _explorer(req)
        ex.set_leaf(body.get("node"), body.get("value"))
        return ex.state(with_drawing=True)


def nudge(req: Request) -> dict[str, Any]:
    body = _body(req)
    with req.session.lock:
        ex = _explorer(req)
        ex.nudge = ex.nudge_at(ex.leaf(body.get("node")))
        return ex.state()


def _signature(name: str, arity: int) -> str:
    """How the page lists a function of the language: tanh(x), maximum(a, b)."""
    return f"{name}({'x' if arity == 1 else ', '.join('abcd'[:arity])})"


def examples(req: Request) -> dict[str, Any]:
    functions = [_signature(name, n) for name, n in ARITY.items()]
    return {"examples": EXAMPLES, "default": DEFAULT_PROGRAM, "functions": functions}


ROUTES = {
    ("GET", "/api/explorer/examples"): examples,
    ("POST", "/api/explorer/load"): load,
    ("POST", "/api/explorer/forward"): _action("forward"),
    ("POST", "/api/explorer/step"): _action("step"),
    ("POST", "/api/explorer/backward"): _action("backward"),
    ("POST", "/api/explorer/reset"): _action("reset"),
    ("POST", "/api/explorer/set"): set_value,
    ("POST", "/api/explorer/nudge"): nudge,
}
