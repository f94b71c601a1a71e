"""Where `micrograd grade` keeps each notebook's result the moment it is graded: a folder of one
JSON file per submission (``--results DIR``, by default ``grade-results`` beside the reports),
each written atomically. So Ctrl-C loses only the notebooks still running; a second run grades
only the submissions that are new or changed since (what it reads: the notebook, the files it
runs beside, the course, the grader's version and time limit, hashed into `digest`); and the
reports are made from every result the folder holds whose notebook is still there.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pathlib
from typing import Any

from ..core.atomic import atomic_write
from .grade import Row, course

VERSION = 2  # the results' format and what grading means: a new one grades everything again


@functools.lru_cache(maxsize=1)
def _course_digest() -> str:
    h = hashlib.sha256()
    for key, nb in sorted(course().items()):
        h.update(key.encode() + json.dumps(nb, sort_keys=True, default=str).encode())
    return h.hexdigest()


def digest(notebook: bytes, files: dict[str, bytes], settings: dict[str, Any]) -> str:
    """What a submission's result depends on, hashed: its bytes, the files beside it that it
    runs with, the course and the grader's settings (the time limit, the sandbox)."""
    from .. import __version__

    h = hashlib.sha256()
    for part in (
        str(VERSION).encode(),
        __version__.encode(),
        _course_digest().encode(),
        json.dumps(settings, sort_keys=True).encode(),
        notebook,
    ):
        h.update(len(part).to_bytes(8, "big") + part)
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


class Store:
    """The results folder: `get` a submission's rows if its digest is unchanged, `put` them."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = pathlib.Path(folder)

    def _file(self, path: str) -> pathlib.Path:
        key = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:24]
        return self.folder / f"{key}.json"

    def get(self, path: str, digest: str) -> list[Row] | None:
        entry = self._read(self._file(path))
        if entry is None or entry.get("digest") != digest:
            return None
        return entry["rows"]

    def put(self, path: str, digest: str, rows: list[Row]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        entry = {
            "version": VERSION,
            "path": os.path.abspath(path),
            "digest": digest,
            "rows": [dataclasses.asdict(r) for r in rows],
        }
        atomic_write(self._file(path), json.dumps(entry, indent=1))

    def _read(self, file: pathlib.Path) -> dict[str, Any] | None:
        """The entry in `file`, its rows as Rows; None if it is not one of this version's."""
        try:
            entry = json.loads(file.read_text(encoding="utf-8"))
            if entry.get("version") != VERSION:
                return None
            entry["rows"] = [Row(**r) for r in entry["rows"]]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"{file} is not a result micrograd grade wrote: {exc}") from None
        return entry

    def everything(self) -> dict[str, list[Row]]:
        """Every result held, by the notebook's absolute path, for notebooks still there."""
        found = {}
        if not self.folder.is_dir():
            return found
        for file in sorted(self.folder.glob("*.json")):
            entry = self._read(file)
            if entry is not None and os.path.isfile(entry["path"]):
                found[entry["path"]] = entry["rows"]
        return found
