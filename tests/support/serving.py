"""A folder served on localhost for a browser test: Python's own http.server on a free port."""

from __future__ import annotations

import contextlib
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def served(folder: pathlib.Path) -> Iterator[str]:
    """http://127.0.0.1:PORT/, serving `folder`, until the block ends."""
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port 41234 (...) ..."
        port = re.search(r"port (\d+)", line)
        assert port, f"http.server said {line!r}"
        yield f"http://127.0.0.1:{port.group(1)}/"
    finally:
        server.terminate()
        server.wait(timeout=10)
