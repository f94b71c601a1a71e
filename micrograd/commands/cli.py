"""The `micrograd` command: `graph` draws a computation graph, `demo` trains a network,
`playground` opens the explorer in a browser, `grade` runs learners' notebooks, `course` writes
a learner's copies of the notebooks and opens JupyterLab on them, `site` writes the playground
as a static site, `gpt` trains Karpathy's microgpt and samples names.

Each subcommand's command-line code has a module of its own, apart from the library code it drives
(`commands/graph.py` runs `expr.py`, `commands/demo.py` runs `train/demo.py`,
`commands/playground.py` the playground, `commands/grade.py` runs `grading/grade.py`,
`commands/course.py` copies the course, `commands/site.py` runs `site/static_site.py`,
`commands/gpt.py` runs `gpt.py`), and adds
itself here with an `add_*_command(subparsers)` function. `main(argv)` returns the exit status (it
never raises SystemExit), so tests call it in-process.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

try:  # first: karpathy's micrograd installed over this one is one line, not a traceback
    from .. import core  # noqa: F401
except ImportError as exc:
    if "pip uninstall -y micrograd micrograd-plus" in str(exc):  # core/install.py's line
        raise SystemExit(str(exc)) from None
    raise

from .. import __version__  # noqa: E402


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse says "argument --steps: " before an option type's message, which names the
        # option itself ("--steps must be at least 1, got 0"): the option once
        flag, _, rest = message.removeprefix("argument ").partition(": ")
        if message.startswith("argument ") and rest.startswith(flag.split("/")[-1] + " "):
            message = rest
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .course import add_course_command
    from .demo import add_demo_command
    from .gpt import add_gpt_command
    from .grade import add_grade_command
    from .graph import add_graph_command
    from .playground import add_playground_command
    from .site import add_site_command

    parser = _Parser(
        prog="micrograd",
        description="A scalar autograd engine for learning backpropagation.",
    )
    parser.add_argument("--version", action="version", version=f"micrograd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_graph_command(sub)
    add_demo_command(sub)
    add_playground_command(sub)
    add_grade_command(sub)
    add_course_command(sub)
    add_site_command(sub)
    add_gpt_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a bad option (2), --help or --version (0)
        return e.code if isinstance(e.code, int) else 1
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:  # a command that has no finer message of its own
        print(f"micrograd {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
