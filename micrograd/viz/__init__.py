"""See a computation graph: `trace` lists its nodes and edges, `draw_dot` draws it with Graphviz
(as in the lecture), `render_text` prints it in a terminal with nothing to install.

    from micrograd.viz import draw_dot, render_text
    L.backward()
    draw_dot(L)            # a graphviz.Digraph: shows inline in Jupyter; .render('L') writes a file
    print(render_text(L))  # one block per depth from L, data and grad of every node

Unlike the lecture's `draw_dot`, the walk is iterative (any depth) and deterministic: nodes are
numbered in breadth-first order from the root, children in `_prev` order, so the same graph gives
the same DOT source every time (the lecture used `id()`, which changes from run to run).
Large graphs are refused rather than handed to Graphviz, which takes minutes on tens of thousands
of nodes. `draw_dot` lays the graph out with Graphviz's `dot` program (the OS package
``graphviz``) and the `graphviz` Python package when both are installed; without them it draws
the same picture with micrograd's built-in layered layout (`viz/layout.py`, the one the playground's
explorer uses too) as an SVG that Jupyter shows inline, and says once how to get Graphviz's.

The pictures' folder: this module; layout.py, where a graph's boxes go (Graphviz's dot or a
built-in layered layout, shared with the playground's explorer); formatting.py, how every
number is shown (the playground's static/common.js mirrors it).
"""

from __future__ import annotations

import html
import shutil
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..core.names import WORDS
from ..engine import Value, op_kind
from .formatting import format_number

DEFAULT_MAX_NODES = 2000  # for draw_dot: Graphviz lays out ~2,000 nodes in seconds, not minutes
DEFAULT_TEXT_MAX_NODES = 200  # for render_text: about what a terminal's scrollback shows usefully
RANKDIRS = ("LR", "TB", "RL", "BT")


INSTALL_DOT = (
    "install the OS package 'graphviz' (Debian/Ubuntu: sudo apt install graphviz; "
    "macOS: brew install graphviz; Windows: winget install graphviz; conda: conda install graphviz)"
)


class DotNotFoundError(RuntimeError):
    """Graphviz's `dot` program is not on PATH, so a graph cannot be rendered to an image."""


# ------------------------------------------------------------------------------------------ walk


def _check_root(root: object, what: str) -> None:
    # Any node of the lecture's shape will do: a learner's own Value class draws too.
    if not isinstance(root, Value) and not all(
        hasattr(root, a) for a in ("data", "grad", "_prev", "_op", "label")
    ):
        raise TypeError(f"{what}: root must be a Value, got {type(root).__name__} {root!r}")


def _check_limit(max_nodes: object, what: str) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"{what}: max_nodes must be a positive int, got {max_nodes!r}")


def _walk(root: Value, limit: int | None = None) -> tuple[list[Value], list[int], bool]:
    """Breadth-first from `root`: (nodes, depth of each, stopped_early).

    Each node is listed once, at its shallowest depth. With a `limit` the walk stops as soon as it
    has seen limit + 1 nodes (so a graph of a million nodes is refused in microseconds).
    """
    index: dict[Value, int] = {root: 0}  # Values hash by identity
    nodes, depths = [root], [0]
    i = 0
    while i < len(nodes):
        d = depths[i] + 1
        for child in nodes[i]._prev:
            if child not in index:
                index[child] = len(nodes)
                nodes.append(child)
                depths.append(d)
                if limit is not None and len(nodes) > limit:
                    return nodes, depths, True
        i += 1
    return nodes, depths, False


def trace(
    root: Value, max_nodes: int | None = None
) -> tuple[list[Value], list[tuple[Value, Value]]]:
    """All nodes `root` depends on and the edges between them, as in the lecture's `trace`.

    Returns lists, not sets, in a fixed order: nodes breadth-first from `root` (``nodes[0] is
    root``); edges ``(child, parent)`` for each parent in node order and each child in `_prev`
    order (a child used twice, as in ``a * a``, gives two edges). With `max_nodes`, a ValueError
    if the graph has more nodes than that.
    """
    _check_root(root, "trace")
    if max_nodes is not None:
        _check_limit(max_nodes, "trace")
    nodes, _, over = _walk(root, max_nodes)
    if over:
        raise GraphTooLargeError(_too_large("trace", max_nodes))
    edges = [(child, v) for v in nodes for child in v._prev]
    return nodes, edges


class GraphTooLargeError(ValueError):
    """The graph has more nodes than the limit a picture was asked to stay under."""


def _too_large(what: str, limit: int | None) -> str:
    return (
        f"{what}: the graph has more than {limit} nodes (the walk stopped at {limit + 1}); "
        f"pass max_nodes= a larger number to draw it anyway (Graphviz slows down badly past a "
        f"few thousand nodes), or look at it with render_text()"
    )


# ----------------------------------------------------------------------------------------- names


def display_names(nodes: list[Value]) -> dict[Value, str]:
    """A distinct, stable name for each node: its label, or, for an unlabelled one, ``c1, c2, ...``
    for a leaf (a constant, or an input or parameter without a label) and ``t1, t2, ...`` for an
    intermediate result, numbered in the order of `nodes`. Made-up names skip the graph's labels."""
    taken = {v.label for v in nodes if v.label}
    names: dict[Value, str] = {}
    counters = {"c": 0, "t": 0}
    for v in nodes:
        if v.label:
            names[v] = v.label
            continue
        prefix = "t" if v._prev else "c"
        while True:
            counters[prefix] += 1
            name = f"{prefix}{counters[prefix]}"
            if name not in taken:
                break
        names[v] = name
    return names


def caption(v: Value) -> str:
    """How an op node is captioned in pictures: its caption in `names.WORDS` (a fused neuron
    reads better as what it computes), else its `_op`."""
    words = WORDS.get(op_kind(v))
    return words.caption if words is not None else v._op


# --------------------------------------------------------------------------------------- numbers


def _short(x: float) -> str:
    """An operand's value, short (as the Go article prints it: -3.2, 2, 1.68)."""
    return f"{x:.6g}"


# ------------------------------------------------------------------------------------- graphviz


def _import_graphviz() -> ModuleType:
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError(
            "drawing a graph needs the 'graphviz' Python package: "
            'pip install "micrograd-plus[viz]" (render_text() needs nothing)'
        ) from exc
    return graphviz


_GRAPH_CLASSES: dict[ModuleType, type] = {}


def _graph_class(graphviz: ModuleType) -> type:
    """graphviz.Digraph whose rendering methods explain how to install `dot` when it is missing."""
    cls = _GRAPH_CLASSES.get(graphviz)
    if cls is not None:
        return cls

    def guarded(name: str) -> Callable[..., Any]:
        method = getattr(graphviz.Digraph, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if shutil.which("dot") is None:
                raise DotNotFoundError(_no_dot_message())
            try:
                return method(self, *args, **kwargs)
            except graphviz.ExecutableNotFound as exc:
                raise DotNotFoundError(_no_dot_message()) from exc

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = method.__doc__
        return wrapper

    # Jupyter's display goes through pipe(), so it is covered too.
    methods: dict[str, Any] = {n: guarded(n) for n in ("pipe", "render", "view", "unflatten")}
    # A repr without a memory address, so notebooks that show a graph store the same text each run.
    methods["__repr__"] = lambda self: f"<ComputationGraph: {len(self.body)} DOT statements>"
    cls = type("ComputationGraph", (graphviz.Digraph,), {**methods, "__module__": __name__})
    _GRAPH_CLASSES[graphviz] = cls
    return cls


def _no_dot_message() -> str:
    return (
        f"rendering the graph needs Graphviz's 'dot' program, which is not on PATH: "
        f"{INSTALL_DOT}. The DOT text is still available as .source"
    )


def _record_text(text: str) -> str:
    # Braces, bars and angle brackets structure a record label; a backslash starts an escape.
    text = text.replace("\\", "\\\\").replace("\n", " ").replace("\r", " ")
    for ch in "{}|<>":
        text = text.replace(ch, "\\" + ch)
    return text


def draw_dot(
    root: Value,
    format: str = "svg",
    rankdir: str = "LR",
    max_nodes: int = DEFAULT_MAX_NODES,
) -> Any:
    """The graph behind `root` as a `graphviz.Digraph`, drawn as in the lecture.

    Each Value is a record ``{ label | data 2.0000 | grad 6.0000 }`` (an unlabelled one shows its
    made-up name from `display_names`, in grey); each op is a small ellipse between its operands
    and its result (a fused neuron's `dot` reads ``w·x+b``). `format` is the
    image format for ``.render()`` / ``.pipe()``, `rankdir` the direction ('LR' left to right,
    'TB' top to bottom). Graphs of more than `max_nodes` Values are refused with a ValueError.

    Without Graphviz's `dot` program (or the `graphviz` Python package) it returns a
    `GraphPicture` instead: the same records and ops laid out by micrograd's built-in layout, an
    SVG that Jupyter shows inline (``.svg``; ``.source`` is the DOT text when the Python package
    is there, else an ImportError naming the extra to install), and a one-line note, once, on
    how to get Graphviz's layout. A `Digraph` made
    while `dot` was there raises `DotNotFoundError` (a RuntimeError) if it is rendered after
    `dot` went away; ``.source`` always works.
    """
    _check_root(root, "draw_dot")
    _check_limit(max_nodes, "draw_dot")
    if rankdir not in RANKDIRS:
        raise ValueError(f"draw_dot: rankdir must be one of {', '.join(RANKDIRS)}, got {rankdir!r}")
    nodes, _, over = _walk(root, max_nodes)
    if over:
        raise GraphTooLargeError(_too_large("draw_dot", max_nodes))
    try:
        graphviz = _import_graphviz()
    except ImportError:
        graphviz = None
    if graphviz is None or shutil.which("dot") is None:
        _say_once(graphviz is None)
        source = _digraph(graphviz, nodes, format, rankdir).source if graphviz else None
        return GraphPicture(_svg(nodes), source)
    return _digraph(graphviz, nodes, format, rankdir)


def _digraph(graphviz: ModuleType, nodes: list[Value], format: str, rankdir: str) -> Any:
    dot = _graph_class(graphviz)(format=format, graph_attr={"rankdir": rankdir})
    ids = {v: f"v{i}" for i, v in enumerate(nodes)}
    names = display_names(nodes)
    for v in nodes:
        uid = ids[v]
        data, grad = format_number(v.data), format_number(v.grad)
        label = f"{{ {_record_text(names[v])} | data {data} | grad {grad} }}"
        # Made-up names of unlabelled nodes are grey: they are not in the user's program.
        extra = {} if v.label else {"fontcolor": "gray30"}
        dot.node(name=uid, label=label, shape="record", **extra)
        if v._op:
            dot.node(
                name=uid + "op", label=caption(v), shape="ellipse", fontsize="11", margin="0.02"
            )
            dot.edge(uid + "op", uid)
    for v in nodes:
        # An op node sits between the operands and the result; a node built by hand with children
        # but no op gets its edges directly.
        target = ids[v] + "op" if v._op else ids[v]
        for child in v._prev:
            dot.edge(ids[child], target)
    return dot


# ------------------------------------------------------ without Graphviz: the built-in layout

CHAR_W, FONT = 7.0, 12  # a monospace character's width at the font size, in pixels
RECORD_H, OP_H, PAD = 26.0, 22.0, 8.0
_SAID: list[bool] = []  # the note about Graphviz's layout, said once per process


def _say_once(no_package: bool) -> None:
    if _SAID or sys.platform == "emscripten":  # in a browser the built-in layout is the normal
        return
    _SAID.append(True)
    package = ', and pip install "micrograd-plus[viz]"' if no_package else ""
    print(
        f"draw_dot: drawn with micrograd's built-in layout; for Graphviz's layout, "
        f"{INSTALL_DOT}{package}",
        file=sys.stderr,
    )


class GraphPicture:
    """A graph drawn by the built-in layout: `svg` is the picture (Jupyter shows it inline);
    `source` the DOT text when the graphviz Python package is installed, else an ImportError
    that names the extra to install (never None)."""

    def __init__(self, svg: str, source: str | None) -> None:
        self.svg = svg
        self._source = source

    @property
    def source(self) -> str:
        """Graphviz's DOT text of the graph (it needs the graphviz Python package)."""
        if self._source is None:
            raise ImportError(
                "the DOT text (.source) needs the graphviz Python package: pip install "
                '"micrograd-plus[viz]" (this picture, drawn without it, is .svg)'
            )
        return self._source

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        """The picture zoomed to fit the output's width, down to half size; past that it keeps
        half size and scrolls inside its own box (a wide graph never widens the notebook)."""
        width = float(self.svg.split('width="', 1)[1].split('"', 1)[0])
        fit = f'style="max-width:100%;min-width:{width / 2:.0f}px;height:auto" '
        return (
            '<div class="micrograd-graph" style="overflow-x:auto;max-width:100%">'
            + self.svg.replace("<svg ", "<svg " + fit, 1)
            + "</div>"
        )

    def pipe(self, format: str | None = None, **kwargs: Any) -> bytes:
        """Only Graphviz renders other formats: this raises `DotNotFoundError` (use `.svg`)."""
        raise DotNotFoundError(_no_dot_message())

    render = view = pipe

    def __repr__(self) -> str:
        return f"<GraphPicture: {self.svg.count('<rect')} values, built-in layout>"


def _svg(nodes: list[Value]) -> str:
    """The lecture's picture as an SVG, laid out by `layout.layered`: a record
    (name | data | grad) per Value, an ellipse per op, arrows from operands to op to result."""
    from .layout import Box, layered

    ids = {v: f"v{i}" for i, v in enumerate(nodes)}
    names = display_names(nodes)
    fields = {
        v: (names[v], f"data {format_number(v.data)}", f"grad {format_number(v.grad)}")
        for v in nodes
    }
    widths = {v: [len(t) * CHAR_W + 2 * PAD for t in fields[v]] for v in nodes}
    boxes, edges, ops = [], [], {}
    for v in nodes:
        boxes.append(Box(ids[v], sum(widths[v]), RECORD_H))
        if v._op:
            ops[v] = caption(v)
            boxes.append(Box(ids[v] + "op", max(30.0, len(ops[v]) * CHAR_W + 14), OP_H, "ellipse"))
            edges.append((ids[v] + "op", ids[v]))
    for v in nodes:
        for child in v._prev:
            edges.append((ids[child], ids[v] + "op" if v._op else ids[v]))
    placed = layered(boxes, edges)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{placed.width:.0f}" '
        f'height="{placed.height:.0f}" viewBox="0 0 {placed.width:.1f} {placed.height:.1f}" '
        f'font-family="monospace" font-size="{FONT}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>',
    ]
    for d in placed.paths:
        out.append(f'<path d="{d}" fill="none" stroke="#555" marker-end="url(#arrow)"/>')
    for v in nodes:
        cx, cy = placed.centers[ids[v]]
        x = cx - sum(widths[v]) / 2
        colour = "black" if v.label else "#555"
        out.append(
            f'<rect x="{x:.1f}" y="{cy - RECORD_H / 2:.1f}" width="{sum(widths[v]):.1f}" '
            f'height="{RECORD_H}" fill="white" stroke="black"/>'
        )
        for i, (text, w) in enumerate(zip(fields[v], widths[v])):
            if i:
                out.append(
                    f'<line x1="{x:.1f}" y1="{cy - RECORD_H / 2:.1f}" x2="{x:.1f}" '
                    f'y2="{cy + RECORD_H / 2:.1f}" stroke="black"/>'
                )
            out.append(
                f'<text x="{x + w / 2:.1f}" y="{cy + 4:.1f}" text-anchor="middle" '
                f'fill="{colour if i == 0 else "black"}">{html.escape(text)}</text>'
            )
            x += w
        if v in ops:
            ox, oy = placed.centers[ids[v] + "op"]
            w = max(30.0, len(ops[v]) * CHAR_W + 14)
            out.append(
                f'<ellipse cx="{ox:.1f}" cy="{oy:.1f}" rx="{w / 2:.1f}" ry="{OP_H / 2}" '
                f'fill="white" stroke="black"/><text x="{ox:.1f}" y="{oy + 4:.1f}" '
                f'text-anchor="middle" font-size="11">{html.escape(ops[v])}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ text

MAX_OPERANDS_SHOWN = 8  # a fused neuron has 2n + 1 operands; past this the line gets unreadable


def _operands(v: Value, names: dict[Value, str]) -> str:
    shown = [names[c] for c in v._prev[:MAX_OPERANDS_SHOWN]]
    extra = len(v._prev) - len(shown)
    if extra > 0:
        shown.append(f"… {extra} more")
    return " ".join(shown)


def render_text(root: Value, max_nodes: int = DEFAULT_TEXT_MAX_NODES) -> str:
    """The graph behind `root` as text: one block per depth from the root, dashed lines between.

    In the spirit of the Go article's `DisplayGraph`; each node appears once, at its shallowest
    depth, as ``name | data 4.0000 | grad -2.0000 | prev { + [e c] }``, operands by name. A name
    is the node's label, or for an unlabelled node a made-up one (`display_names`): ``c1, c2,
    ...`` for leaves such as constants, ``t1, t2, ...`` for intermediate results. At most
    `max_nodes` nodes are shown, then a line ``… N more nodes``.
    """
    _check_root(root, "render_text")
    _check_limit(max_nodes, "render_text")
    nodes, depths, _ = _walk(root)  # the whole graph, to say how many nodes are not shown
    shown = nodes[:max_nodes]
    names = display_names(nodes)
    width = max(len(names[v]) for v in shown)

    lines: list[str] = []
    for v in shown:
        data, grad = format_number(v.data), format_number(v.grad)
        line = f"{names[v].ljust(width)} | data {data} | grad {grad}"
        if v._prev:
            line += f" | prev {{ {v._op or '?'} [{_operands(v, names)}] }}"
        lines.append(line)
    rule = "-" * max(len(line) for line in lines)

    out: list[str] = []
    for i, line in enumerate(lines):
        if i and depths[i] != depths[i - 1]:
            out.append(rule)
        out.append(line)
    out.append(rule)
    hidden = len(nodes) - len(shown)
    if hidden:
        nodes = "node" if hidden == 1 else "nodes"
        out.append(f"… {hidden} more {nodes} (raise max_nodes, or --max-nodes, to see them)")
    return "\n".join(out) + "\n"


from .health_plots import health_plots as health_plots  # noqa: E402  (makemore part 3: matplotlib lazily)
