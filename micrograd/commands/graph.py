"""The `micrograd graph` command: run a program of the expression language (`expr.py`), then
print its graph as text or write it as a picture. One line and an exit status for every failure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib
import shutil
import sys
from typing import Any

from ..core.atomic import atomic_write
from ..expr import ProgramError, function_names, parse_program
from .options import errors

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot", ".txt": "txt"}

_DESCRIPTION = """\
Evaluate a tiny program of assignments (names become labels), run backward from the last
assignment, and show the computation graph with every node's data and grad.

A program is assignments like `x = 2.0` separated by ';' or newlines, using numbers, earlier
names, + - * / **, unary -, parentheses and {functions}. Nothing else is run.
A leaf may say what it is: `w: param = -3.0` (a parameter), `x: data = 2.0` (data); a
re-assigned name is numbered in the picture (x, x₂, x₃).
As in Python, numbers combine as plain numbers (`y = 1.0 + 2.0*3.0` is one leaf, 7.0); anything
involving a name becomes a node of the graph (`x = 2.0; y = 1.0 + x*3.0` has * and + nodes).
"""

_EPILOG = """\
examples:
  micrograd graph "a = 2.0; b = -3.0; c = 10.0; e = a*b; d = e + c; f = -2.0; L = d*f"
  micrograd graph "x1 = 2.0; w1 = -3.0; b = 6.88; n = x1*w1 + b; o = tanh(n)" -o neuron.svg
  echo "x = 3.0; y = x**2 + log(x)" | micrograd graph - -o y.dot

output: without -o the text view is printed (one block per depth from the output; needs
nothing installed). With -o FILE the graph is written in the format of FILE's extension:
.svg .png .pdf (need the 'graphviz' Python package and Graphviz's 'dot' program), .dot/.gv
(the DOT source) or .txt (the text view); add --text to print the text view as well.

exit status: 0 done; 2 the program, an option or the output extension is wrong, or the graph is
larger than --max-nodes; 1 Graphviz is missing or the file cannot be written.
"""


def add_graph_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `micrograd graph` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "graph",
        help="draw the computation graph of a small expression, with its gradients",
        description=_DESCRIPTION.format(functions=function_names()),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("program", metavar="EXPR", help="the program, or - to read it from stdin")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the graph to FILE: .svg .png .pdf .dot .gv or .txt, by extension",
    )
    parser.add_argument(
        "--text",
        action="store_true",
        help="print the text view (the default when no -o is given)",
    )
    parser.add_argument(
        "--max-nodes",
        type=int,
        metavar="N",
        help="refuse to draw more than N nodes (default 2000); the text view shows at most N "
        "nodes (default 200)",
    )
    parser.add_argument(
        "--rankdir",
        choices=("LR", "TB"),
        default="LR",
        help="direction of the drawing: LR left to right (default), TB top to bottom",
    )
    parser.set_defaults(run=run_graph)
    return parser


_fail = errors("graph")


def run_graph(args: argparse.Namespace) -> int:
    """`micrograd graph`: returns the exit status."""
    from .. import viz

    try:
        program = sys.stdin.read() if args.program == "-" else args.program
    except UnicodeDecodeError as exc:
        return _fail(f"the program on stdin is not valid text: {exc}", 2)
    if args.max_nodes is not None and args.max_nodes < 1:
        return _fail(f"--max-nodes must be at least 1, got {args.max_nodes}", 2)
    kind = None
    if args.output is not None:
        kind = FORMATS.get(pathlib.Path(args.output).suffix.lower())
        if kind is None:
            known = " ".join(FORMATS)
            return _fail(f"cannot tell the format of {args.output!r}: use one of {known}", 2)
    try:
        names = parse_program(program)
    except ProgramError as exc:
        return _fail(f"{exc} ({exc.hint})" if exc.hint else str(exc), 2)
    root = next(reversed(names.values()))
    root.backward()

    text_limit = args.max_nodes or viz.DEFAULT_TEXT_MAX_NODES
    if kind is None or args.text:
        sys.stdout.write(viz.render_text(root, max_nodes=text_limit))
    if kind is None:
        return 0
    try:
        if kind == "txt":
            data = viz.render_text(root, max_nodes=text_limit).encode()
        else:
            if kind != "dot" and shutil.which("dot") is None:
                raise viz.DotNotFoundError(kind)
            # The DOT text needs no program: draw_dot's note about its built-in layout (drawn
            # without `dot`) does not apply to it.
            with contextlib.redirect_stderr(io.StringIO()):
                graph = viz.draw_dot(
                    root,
                    rankdir=args.rankdir,
                    max_nodes=args.max_nodes or viz.DEFAULT_MAX_NODES,
                )
            data = graph.source.encode() if kind == "dot" else graph.pipe(format=kind)
    except ValueError:  # too many nodes: the only ValueError left once the options are checked
        limit = args.max_nodes or viz.DEFAULT_MAX_NODES
        return _fail(
            f"the graph has more than {limit} nodes; pass --max-nodes N with a larger N to draw "
            f"it anyway (Graphviz slows down badly past a few thousand), or drop -o for the "
            f"text view",
            2,
        )
    except viz.DotNotFoundError:
        return _fail(
            f"writing {args.output!r} needs Graphviz's 'dot' program, which is not on PATH: "
            f"{viz.INSTALL_DOT}; a .dot file can be written without it",
            1,
        )
    except ImportError as exc:  # the graphviz Python package, for the DOT text
        return _fail(f"writing {args.output!r}: {exc}", 1)
    try:
        atomic_write(args.output, data)  # never a half-written file over a good one
    except OSError as exc:
        return _fail(f"cannot write {args.output!r}: {exc.strerror or exc}", 1)
    return 0
