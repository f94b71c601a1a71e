"""Something built once for the whole test session, however many pytest-xdist workers share it.

The first worker to ask builds under a file lock, in the session's own temporary folder (the
one every worker's folder lies in); the others wait on the lock, then read what the build left,
including what it said and its exit status: a failed build fails each test that needs it, with
the build's own words, and is not tried again. A run without workers is the same, with one."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable
from typing import Any

from filelock import FileLock


def session_folder(tmp_path_factory: Any) -> pathlib.Path:
    """The folder this session's workers share: the base temporary folder of the run (each
    xdist worker's own lies in it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: Any, name: str, build: Callable[[pathlib.Path], dict[str, Any]]
) -> tuple[pathlib.Path, dict[str, Any]]:
    """`build(folder)` run once per session into `<session>/<name>`; returns that folder and the
    JSON-able record `build` returned (the same record for every worker)."""
    shared = session_folder(tmp_path_factory)
    folder = shared / name
    record = shared / f"{name}.json"
    with FileLock(str(shared / f"{name}.lock")):
        if not record.exists():
            folder.mkdir()
            said = build(folder)
            tmp = record.with_suffix(".tmp")
            tmp.write_text(json.dumps(said))
            tmp.replace(record)
    return folder, json.loads(record.read_text())
