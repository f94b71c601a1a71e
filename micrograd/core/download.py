"""Files downloaded once, checked, and cached: the way `micrograd.data.names()` gets makemore's
names.txt, as torchvision and scikit-learn get their data sets.

`cache_dir()` is the user's cache folder for micrograd (MICROGRAD_CACHE, else the platform's:
``~/.cache/micrograd`` on Linux, ``~/Library/Caches/micrograd`` on macOS,
``%LOCALAPPDATA%\\micrograd\\Cache`` on Windows, as platformdirs says); `data_dir()` is where
downloaded data sets are kept (MICROGRAD_DATA, as scikit-learn's SCIKIT_LEARN_DATA; else the
cache folder). `download(url, sha256, dest)` reads the whole body into memory (the files are
small), checks its length and sha256, and only then writes it atomically: no network, a
refused connection, a body cut short or a wrong checksum leave nothing behind, and raise
`DownloadError` with one line that says why.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys
import urllib.error
import urllib.request
from typing import TextIO

from .atomic import atomic_write

CACHE_ENV = "MICROGRAD_CACHE"  # another cache folder (Pyodide's archive, wheels, data sets)
DATA_ENV = "MICROGRAD_DATA"  # another folder for the data sets alone
TIMEOUT = 30.0  # seconds a silent server is waited for


class DownloadError(OSError):
    """A download that did not give the file: its one-line reason is ``str(e)``."""


def cache_dir() -> pathlib.Path:
    """Where micrograd keeps what it downloads (the folder may not exist yet)."""
    if os.environ.get(CACHE_ENV):
        return pathlib.Path(os.environ[CACHE_ENV])
    home = pathlib.Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return pathlib.Path(base) / "micrograd" / "Cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "micrograd"
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / "micrograd"


def data_dir() -> pathlib.Path:
    """Where downloaded data sets are kept: MICROGRAD_DATA, else `cache_dir()`."""
    if os.environ.get(DATA_ENV):
        return pathlib.Path(os.environ[DATA_ENV])
    return cache_dir()


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(url: str, sha256: str, dest: pathlib.Path, what: str) -> pathlib.Path:
    """Fetch `url`, check its sha256, write it to `dest` atomically, and say once on stderr where
    it went (with a progress line on a terminal). Raises DownloadError (nothing written)."""
    if sys.platform == "emscripten":  # Pyodide: Python in a browser opens no sockets
        raise DownloadError(f"a browser's Python cannot download {what} from {url}")
    try:
        body = _fetch(url, what, sys.stderr)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise DownloadError(f"could not download {what} from {url}: {_reason(e)}") from None
    got = hashlib.sha256(body).hexdigest()
    if got != sha256:
        raise DownloadError(
            f"{url} gave {len(body):,} bytes that are not {what} (sha256 {got[:12]}…, "
            f"expected {sha256[:12]}…)"
        )
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(dest, body)
    except OSError as e:
        raise DownloadError(
            f"downloaded {what}, but cannot write {dest}: {e.strerror or e}"
        ) from None
    print(
        f"micrograd: downloaded {what} ({len(body):,} bytes, sha256 checked) to {dest}",
        file=sys.stderr,
        flush=True,
    )
    return dest


def _fetch(url: str, what: str, err: TextIO) -> bytes:
    """The whole body; a body shorter than its Content-Length raises (http.client's
    IncompleteRead). A progress line on stderr when it is a terminal."""
    request = urllib.request.Request(url, headers={"User-Agent": "micrograd"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        total = int(response.headers.get("Content-Length") or 0)
        tty = err.isatty()
        chunks: list[bytes] = []
        done = 0
        while True:
            chunk = response.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            done += len(chunk)
            if tty and total:
                bar = "#" * (20 * done // total)
                err.write(f"\rdownloading {what}: [{bar:<20}] {100 * done // total}%")
                err.flush()
        if tty and total:
            err.write("\n")
        if total and done != total:
            raise OSError(f"the connection closed after {done:,} of {total:,} bytes")
        return b"".join(chunks)


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {e.reason}"
    if isinstance(e, urllib.error.URLError):
        e = e.reason if isinstance(e.reason, BaseException) else OSError(str(e.reason))
    return getattr(e, "strerror", None) or str(e) or type(e).__name__
