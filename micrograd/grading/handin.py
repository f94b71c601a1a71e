"""Work handed in as an archive: the browser course's "Download my work" (``LEARNER.zip``, the
learner's notebooks and files in a folder ``LEARNER/``), or any zip of a learner's notebooks, in
a class folder beside the learners' folders. `unpack` opens one for `micrograd grade` into
``CLASS_DIR/.handed-in/LEARNER/`` (a hidden folder, which the grader's listing of learners
skips), and refuses, in one line, an archive that is not a zip, or whose members would land
outside that folder (an absolute path, ``..``, a link) or are too many or too large (the
sizes counted as the members are read, never as their headers claim).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import stat
import tempfile
import zipfile

from ..core.atomic import atomic_write

UNPACKED = ".handed-in"  # in the class folder: CLASS_DIR/.handed-in/LEARNER/
MAX_FILES = 200  # members of one archive
MAX_FILE = 20 * 2**20  # bytes of one member, as read
MAX_TOTAL = 50 * 2**20  # bytes of one archive's members, as read
SKIPPED = ("__MACOSX",)  # what an archiver adds beside the work (hidden names are skipped too)


class Refused(ValueError):
    """An archive `unpack` will not open; `outside` when a member would land outside its
    folder."""

    def __init__(self, message: str, outside: bool = False) -> None:
        super().__init__(message)
        self.outside = outside


def _parts(name: str, archive: str) -> list[str]:
    """A member's path as its parts, refused if it would land anywhere but under its folder."""
    if "\\" in name or name.startswith("/") or "\x00" in name:
        raise Refused(f"{archive}: member {name!r} would land outside its folder", outside=True)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or ":" in parts[0]:
        raise Refused(f"{archive}: member {name!r} would land outside its folder", outside=True)
    return parts


def members(path: str | os.PathLike) -> dict[str, bytes]:
    """The archive's files, relative path -> bytes, the one folder they are all in (the
    browser's LEARNER/) taken off; refused (`Refused`) as the module says."""
    archive = os.fspath(path)
    try:
        z = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise Refused(f"{archive}: not a zip archive ({exc})") from None
    found: dict[str, bytes] = {}
    total = 0
    with z:
        infos = [i for i in z.infolist() if not i.is_dir()]
        if len(infos) > MAX_FILES:
            raise Refused(f"{archive}: {len(infos)} files, more than the {MAX_FILES} allowed")
        for info in infos:
            parts = _parts(info.filename, archive)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise Refused(f"{archive}: member {info.filename!r} is a link", outside=True)
            if info.flag_bits & 0x1:
                raise Refused(f"{archive}: member {info.filename!r} is encrypted")
            if any(p.startswith(".") or p in SKIPPED for p in parts):
                continue
            chunks, size = [], 0
            try:
                with z.open(info) as f:
                    while chunk := f.read(1 << 16):
                        size += len(chunk)
                        total += len(chunk)
                        if size > MAX_FILE:
                            raise Refused(
                                f"{archive}: member {info.filename!r} is larger than "
                                f"{MAX_FILE // 2**20} MB"
                            )
                        if total > MAX_TOTAL:
                            raise Refused(
                                f"{archive}: its files come to more than {MAX_TOTAL // 2**20} MB"
                            )
                        chunks.append(chunk)
            except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError) as exc:
                raise Refused(
                    f"{archive}: member {info.filename!r} cannot be read: {exc}"
                ) from None
            key = "/".join(parts)
            if key.casefold() in {k.casefold() for k in found}:
                raise Refused(f"{archive}: member {info.filename!r} is in it twice")
            found[key] = b"".join(chunks)
    tops = {k.split("/", 1)[0] for k in found}
    if len(tops) == 1 and all("/" in k for k in found):
        found = {k.split("/", 1)[1]: v for k, v in found.items()}
    return found


def unpack(path: str | os.PathLike, into: str | os.PathLike) -> pathlib.Path:
    """Unpack the archive at `path` into ``into/STEM/`` (its name without .zip: the learner),
    replacing what an earlier run unpacked there, whole or not at all; returns that folder."""
    archive = pathlib.Path(path)
    files = members(archive)
    into = pathlib.Path(into)
    into.mkdir(parents=True, exist_ok=True)
    target = into / archive.stem
    fresh = pathlib.Path(tempfile.mkdtemp(prefix=f".{archive.stem}-", dir=into))
    try:
        root = fresh.resolve()
        for rel, data in files.items():
            dest = (fresh / rel).resolve()
            if not dest.is_relative_to(root):  # _parts allows none such: a second guard
                raise Refused(f"{archive}: member {rel!r} would land outside its folder", True)
            dest.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(dest, data)  # into a fresh folder, renamed into place whole below
        if target.exists():
            old = pathlib.Path(tempfile.mkdtemp(prefix=f".{archive.stem}-old-", dir=into))
            target.rename(old / archive.stem)
            fresh.rename(target)
            shutil.rmtree(old)
        else:
            fresh.rename(target)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return target
