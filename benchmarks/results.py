"""benchmarks/RESULTS.md, one section per benchmark script: each script writes its own.

A section sits between two markers named after its script, ``<!-- bench_engine -->`` and
``<!-- /bench_engine -->``; a script's run replaces what is between them (or adds the section at the
end of the file), and the rest of the file, the other sections and the notes kept by hand around
them, stays as it was. The file is written atomically (``micrograd.core.atomic``), so a run stopped
half way leaves the old file. Each section says the command that measured it, when, the machine's
load average when it started and the Python it ran on.

A script records its section by running its ``main`` through :func:`recorded`:

    if __name__ == "__main__":
        sys.exit(recorded("bench_engine", main))

which prints as before and, when ``main`` returns 0, writes what it printed as the section.
``MICROGRAD_BENCH_NO_WRITE=1`` runs it without writing (a smoke run); `make bench` runs them all.
"""

from __future__ import annotations

import datetime
import io
import os
import platform
import shlex
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
sys.path.insert(0, str(ROOT))

from micrograd.core.atomic import atomic_write  # noqa: E402  (the clone's package, as above)


def markers(name: str) -> tuple[str, str]:
    """The two lines a section sits between."""
    return f"<!-- {name} -->", f"<!-- /{name} -->"


def load_average() -> str:
    """The machine's load average now (1, 5, 15 minutes), or why there is none."""
    if not hasattr(os, "getloadavg"):
        return "not available here"
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def heading(command: str, load: str, when: datetime.datetime | None = None) -> str:
    """The first line of a section: what measured it, when, on what."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    return (
        f"Measured {when:%Y-%m-%d %H:%M} UTC with `{command}`; Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, load average at start {load}."
    )


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with section `name`'s content replaced by `body` (the section added at the end when
    the file has none). A marker without its partner is an error naming the section."""
    begin, end = markers(name)
    starts, ends = text.count(begin), text.count(end)
    if (starts, ends) == (0, 0):
        return f"{text.rstrip()}\n\n{begin}\n{body.strip()}\n{end}\n"
    if (starts, ends) != (1, 1) or text.index(begin) > text.index(end):
        raise ValueError(
            f"RESULTS.md: section {name!r} needs one {begin} and one {end} after it "
            f"(found {starts} and {ends})"
        )
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return f"{head}{begin}\n{body.strip()}\n{end}{tail}"


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Write section `name` of the results file (atomically; the rest kept)."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    atomic_write(path, replace_section(text, name, body))


def command_line() -> str:
    """How this script was run, as a reader would type it from the repository's root."""
    script = Path(sys.argv[0]).resolve()
    where = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return shlex.join(["python", str(where), *sys.argv[1:]])


class _Tee(io.TextIOBase):
    """Writes go to the terminal as before and are kept."""

    def __init__(self, out: io.TextIOBase) -> None:
        self.out, self.kept = out, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def recorded(name: str, main: Callable[[], int | None], path: Path = RESULTS) -> int:
    """Run `main()`, printing as it prints; when it returns 0 (or None), write what it printed as
    section `name`, under the command, the date, the load average at start and the Python."""
    load, command = load_average(), command_line()
    tee = _Tee(sys.stdout)
    with redirect_stdout(tee):
        status = main() or 0
    if status == 0 and not os.environ.get("MICROGRAD_BENCH_NO_WRITE"):
        printed = tee.kept.getvalue().rstrip()
        write_section(name, f"{heading(command, load)}\n\n```text\n{printed}\n```", path)
        print(f"wrote section {name} of {path}", file=sys.stderr)
    return status
