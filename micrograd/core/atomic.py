"""`atomic_write`: the one way the package writes a file (model JSON, plots, `micrograd graph -o`).

The bytes go to a temporary file in the target's folder, are flushed to disk (fsync), and only
then replace the target (`os.replace`, atomic on POSIX and Windows). A write that fails half way
(full disk, Ctrl-C) leaves the old file as it was and no temporary file behind; every error names
the file the caller asked for, never the temporary one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile

_PREFIX, _SUFFIX = ".micrograd-", ".tmp"


def _named(exc: OSError, path: str) -> OSError:
    """The same kind of error, about `path` (the user's file) instead of a temporary one:
    ``.filename`` is `path`, ``.strerror`` says why, ``str()`` reads ``[Errno 28] ...: 'path'``."""
    if exc.errno is None:
        err = OSError(f"cannot write {path}: {exc}")
        err.filename, err.strerror = path, str(exc)
        return err
    return type(exc)(exc.errno, exc.strerror or str(exc), path)


def describe(exc: OSError) -> str:
    """One line for a user: which file, and why it could not be written."""
    if exc.filename is None:  # not one of ours: say what it says
        return str(exc)
    return f"cannot write {exc.filename}: {exc.strerror or exc}"


def check_writable(path: str | os.PathLike) -> None:
    """Raise the OSError `atomic_write(path, ...)` would meet on the way in, without writing:
    the folder is missing or not writable, or `path` is a folder. Used to fail before work."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"the folder {folder} does not exist", path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_PREFIX, suffix=_SUFFIX, dir=folder)
    except OSError as exc:
        raise _named(exc, path) from None
    os.close(fd)
    os.unlink(tmp)


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write `data` (str as UTF-8) to `path` atomically: all of it, or the old file untouched."""
    path = os.fspath(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    check_writable(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=_PREFIX, suffix=_SUFFIX, dir=folder)
    except OSError as exc:
        raise _named(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's file is private; a normal file's mode
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:  # KeyboardInterrupt included: never leave the temporary file
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _named(exc, path) from None
        raise


_UMASK: list[int] = []


def _umask() -> int:
    # Read once: os.umask can only be read by setting it, which would race with other threads.
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def prepare_folder(folder: str, paths: list[str], what: str = "folder") -> bool:
    """Create `folder` and check each of `paths` in it can be written, before any long work
    (else a one-line ValueError naming the folder or file). True if it made the folder."""
    if not folder:
        raise ValueError(f"{what} is empty; name a folder, e.g. {what} runs/moons")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{what} {folder} is a file, not a folder")
    created = not os.path.isdir(folder)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        parent = os.path.dirname(os.path.abspath(folder))
        why = f"folders cannot be made in {parent}" if os.path.isdir(parent) else e.strerror
        raise ValueError(f"cannot create the folder '{folder}': {why}") from None
    for path in paths:
        try:
            check_writable(path)
        except OSError as e:
            if created:
                remove_if_empty(folder)
            raise ValueError(describe(e)) from None
    return created


def remove_if_empty(folder: str) -> None:
    """Take away a folder a run made and wrote nothing into (never one that was there)."""
    with contextlib.suppress(OSError):
        os.rmdir(folder)  # refuses a folder that is not empty
