"""`build_site`: the playground as a folder of static files that runs micrograd in the browser.

    from micrograd.site.static_site import build_site
    report = build_site("public")      # or, from a shell: micrograd site public

The folder is the whole playground for any static host (GitHub Pages, a university's web space,
``python -m http.server``): ``index.html`` is the explorer, ``train.html`` the Train view,
``gpt.html`` the GPT view, the same pages the server sends (`static/`), told by a ``<meta>`` to
talk to a Web Worker instead
(`static/worker.js`). The worker starts CPython in WebAssembly (Pyodide) from ``pyodide/``,
installs micrograd from the wheel in ``wheels/`` (built here from the installed package: the code
``pip install`` gave), and answers with the same view objects as the server
(`micrograd.playground.serving.worker`). Every URL is relative, so the folder works under any path
(``/site/``, ``/course/micrograd/``), and nothing is fetched from anywhere else at run time.

Pyodide comes from the npm registry at build time, by npm itself (``npm pack
pyodide@PYODIDE_VERSION``); its archive must match `PYODIDE_INTEGRITY` and is kept in a cache
(`cache_dir`), so the next build needs no network. Only the core files that need no network
are copied (`PYODIDE_FILES`).

The build also bakes ``snapshot.json`` (`snapshot`): the answers to the first calls a fresh page
makes (the explorer's examples and its first graph; the Train view's options and its untrained
default network), computed here by the same view objects the worker runs. Until Python is ready
in the browser, the worker's transport (common.js) answers exactly those calls from it, so the
first graph is on screen at once; the calls still go to Python, which reaches the same state,
and its answers are checked against the baked ones.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from importlib import resources

from .. import __version__
from ..core.atomic import atomic_write, prepare_folder
from ..core.download import cache_dir
from ..playground.serving import pages
from ..playground.views import PAGES

PYODIDE_VERSION = "314.0.7"  # CPython 3.14.2 in WebAssembly
# npm's integrity of pyodide-PYODIDE_VERSION.tgz (`npm view pyodide@314.0.7 dist.integrity`)
PYODIDE_INTEGRITY = (
    "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+"
    "HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
)
# What loadPyodide reads: the loader, the interpreter and its standard library. package.json
# goes along for the licence (MPL-2.0) and where the source is.
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "package.json",
)
DIST_NAME = "micrograd-plus"  # the name pip installs micrograd by (pyproject.toml)
WORKER_META = '<meta name="micrograd-transport" content="worker">'  # common.js's pageTransport
NOT_SHIPPED = ("widget.js", "widget.css")  # the widget's
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the same package, the same wheel, byte for byte


class SiteError(Exception):
    """The site cannot be built: one line that says why and what to do."""


@dataclasses.dataclass
class SiteReport:
    """What `build_site` wrote."""

    folder: str
    files: int  # files written
    size: int  # their bytes, in all
    wheel: str  # the wheel's path in the folder
    pyodide_from: str  # "cache" or "npm"


def default_cache() -> pathlib.Path:
    """Where the Pyodide archive is kept: micrograd's cache folder (`core.download.cache_dir`:
    $MICROGRAD_CACHE, else the platform's, e.g. ~/.cache/micrograd)."""
    return cache_dir()


# ------------------------------------------------------------------ Pyodide, from npm


def integrity(data: bytes) -> str:
    """npm's integrity string of `data` (sha512, base64)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def pyodide_archive(
    cache_dir: pathlib.Path, log: Callable[[str], None] = print
) -> tuple[bytes, str]:
    """The npm archive of Pyodide PYODIDE_VERSION, checked: from the cache, else by ``npm pack``
    (then cached). Returns (bytes, "cache" or "npm")."""
    cached = cache_dir / f"pyodide-{PYODIDE_VERSION}.tgz"
    if cached.is_file():
        data = cached.read_bytes()
        if integrity(data) == PYODIDE_INTEGRITY:
            return data, "cache"
        log(f"{cached} does not match its integrity; fetching it again")
    npm = shutil.which("npm")
    if npm is None:
        raise SiteError(
            f"npm is needed once, to fetch Pyodide {PYODIDE_VERSION} from the npm registry (then "
            f"it is cached in {cache_dir}): install it (Debian/Ubuntu: sudo apt install npm; "
            f"or Node.js from nodejs.org), or run scripts/ensure-npm"
        )
    log(f"fetching Pyodide {PYODIDE_VERSION} with npm (about 6.5 MB, once)...")
    with tempfile.TemporaryDirectory(prefix="micrograd-npm-") as tmp:
        try:
            done = subprocess.run(
                [
                    npm,
                    "pack",
                    f"pyodide@{PYODIDE_VERSION}",
                    "--pack-destination",
                    tmp,
                    "--json",
                    "--ignore-scripts",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            raise SiteError(
                "npm pack pyodide took more than 10 minutes; is the npm registry reachable?"
            ) from None
        if done.returncode != 0:
            why = _last_error_line(done.stderr) or f"exit status {done.returncode}"
            raise SiteError(f"npm pack pyodide@{PYODIDE_VERSION} failed: {why}")
        tgz = sorted(pathlib.Path(tmp).glob("pyodide-*.tgz"))
        if not tgz:
            raise SiteError(f"npm pack pyodide@{PYODIDE_VERSION} wrote no archive")
        data = tgz[0].read_bytes()
    got = integrity(data)
    if got != PYODIDE_INTEGRITY:
        raise SiteError(
            f"the npm archive of pyodide@{PYODIDE_VERSION} is not the one this "
            f"micrograd was built for: integrity {got[:24]}..., expected "
            f"{PYODIDE_INTEGRITY[:24]}..."
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(cached, data)
    return data, "npm"


def _last_error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    # npm's "npm ERR! ...", Node.js's "Error: ..." (before its stack and its "Node.js v22...")
    errors = [ln for ln in lines if "ERR" in ln or re.match(r"\w*Error:", ln)] or lines
    return errors[-1][:200] if errors else ""


def pyodide_files(archive: bytes) -> dict[str, bytes]:
    """PYODIDE_FILES out of the npm archive (its files sit under package/)."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for name in PYODIDE_FILES:
            try:
                member = tar.getmember(f"package/{name}")
            except KeyError:
                raise SiteError(f"the Pyodide archive has no {name}") from None
            f = tar.extractfile(member)
            if f is None:
                raise SiteError(f"the Pyodide archive's {name} is not a file")
            out[name] = f.read()
    return out


# ------------------------------------------------------------------ micrograd, as a wheel


def package_wheel(names: bytes | None = None) -> tuple[str, bytes]:
    """A wheel of the installed micrograd package, made in memory: every file of the package as
    it is installed (its modules and package data, no caches), less the course's notebooks,
    which the browser never reads (a clone's micrograd/notebooks is a link rglob does not follow,
    an installed one a folder: without them the site is the same either way, and every visitor
    downloads 0.1 MB less), and the engine's compiled core (`NATIVE`); with `names` (makemore's
    names.txt), the file `data.names()` reads first in a build that carries it
    (micrograd/datasets/names.txt, beside its licence). Returns (file name, bytes).
    """
    import micrograd

    root = pathlib.Path(micrograd.__file__).resolve().parent
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.relative_to(root).parts[0] != "notebooks"
        and not p.name.startswith(".")
        and p.suffix not in (".pyc", ".pyo", *NATIVE)
    )
    dist = DIST_NAME.replace("-", "_")
    info = f"{dist}-{__version__}.dist-info"
    entries = [(f"micrograd/{p.relative_to(root).as_posix()}", p.read_bytes()) for p in files]
    entries = [e for e in entries if e[0] != "micrograd/datasets/names.txt"]  # (an old copy)
    if names is not None:
        entries.append(("micrograd/datasets/names.txt", names))
    entries += [
        (
            f"{info}/METADATA",
            (
                f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: "
                f"{__version__}\nRequires-Python: >=3.10\n"
            ).encode(),
        ),
        (
            f"{info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: micrograd site\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
        ),
    ]
    record = (
        "".join(f"{name},sha256={_urlsafe_sha256(data)},{len(data)}\n" for name, data in entries)
        + f"{info}/RECORD,,\n"
    )
    entries.append((f"{info}/RECORD", record.encode()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            entry = zipfile.ZipInfo(name, _ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return f"{dist}-{__version__}-py3-none-any.whl", buf.getvalue()


NATIVE = (".so", ".pyd", ".c")  # the compiled core and its source: Pyodide runs the pure engine


def _urlsafe_sha256(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


# ------------------------------------------------------------------ Python, started once

# Python started here once, in Node.js, with micrograd imported, and its memory saved by Pyodide
# (`makeMemorySnapshot`, an API Pyodide marks private: PYODIDE_VERSION is pinned to the byte):
# the browser's worker restores it (worker.js) in about a fifth of the time a fresh start takes,
# unpacking the standard library, starting the interpreter and importing micrograd.
MEMORY = "python-memory.gz"
MEMORY_IMPORTS = (
    "micrograd.playground.serving.worker",
    "micrograd.jit.js_target",
    "micrograd.playground.training.train_js",
)
# The one place the builds call Pyodide's private snapshot API, put before each script
# `node_snapshot` runs: `startToSave(dir)` starts Pyodide with its `_makeSnapshot` option;
# `save(py, options)` is its `makeMemorySnapshot`. A Pyodide without either (no such method, or
# one that says the option was not passed) fails with LACKS and the call's name: the build then
# saves no start, in one line (tests/test_site.py tries every private call on the pinned Pyodide).
LACKS = "this Pyodide lacks"
SNAPSHOT_JS = """
const fs = await import("node:fs");
const url = await import("node:url");
async function startToSave(dir) {
  const { loadPyodide } = await import(url.pathToFileURL(`${dir}/pyodide.mjs`).href);
  const py = await loadPyodide({ indexURL: `${dir}/`, _makeSnapshot: true });
  if (typeof py.makeMemorySnapshot !== "function") {
    throw new Error("__LACKS__ makeMemorySnapshot");
  }
  return py;
}
function save(py, options) {
  try {
    return py.makeMemorySnapshot(options);
  } catch (err) {  // "Can only use [it] if the _makeSnapshot option is passed to loadPyodide"
    if (/option/.test(err.message)) throw new Error(`__LACKS__ _makeSnapshot (${err.message})`);
    throw err;
  }
}
""".replace("__LACKS__", LACKS)
_MEMORY_SCRIPT = """
const [dir, wheel, out, imports] = process.argv.slice(-4);
const py = await startToSave(dir);
py.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel");
py.runPython(imports.split(",").map((m) => `import ${m}`).join("\\n"));
fs.writeFileSync(out, save(py));
"""


def python_memory(
    pyodide: dict[str, bytes], wheel: bytes, log: Callable[[str], None] = print
) -> bytes | None:
    """Pyodide's memory after starting Python and importing MEMORY_IMPORTS from `wheel`, made in
    Node.js and gzipped (the browser's DecompressionStream unpacks it); None without Node.js or
    with a Pyodide that lacks its snapshot calls (the worker then starts Python afresh, as it
    does in a browser that cannot restore it)."""
    saved = node_snapshot(
        _MEMORY_SCRIPT,
        pyodide,
        {"micrograd.whl": wheel},
        MEMORY_IMPORTS,
        [""],
        "Python's start",
        300,
        "the site's pages start it afresh",
        log,
    )
    return None if saved is None else gzip.compress(saved[0], compresslevel=6, mtime=0)


def node_snapshot(
    script: str,
    pyodide: dict[str, bytes],
    files: dict[str, bytes],
    imports: tuple[str, ...],
    outputs: list[str],
    what: str,
    timeout: float,
    fallback: str,
    log: Callable[[str], None],
) -> list[bytes] | None:
    """Run `script` (an ES module, after SNAPSHOT_JS) in Node.js on Pyodide's files and `files`
    (name -> bytes), all written into a temporary folder, with the arguments (that folder, the
    files' paths joined by commas, an output path, `imports` joined by commas); return the bytes
    of the output path plus each suffix of `outputs` (the script writes them). Without Node.js,
    or with a Pyodide that lacks a snapshot call, None, and one line to `log` saying why and
    the `fallback`. A SiteError in one line, naming `what` it saved, when Node.js fails
    otherwise or takes more than `timeout` seconds."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        log(f"no Node.js here: {what} is not saved ({fallback})")
        return None
    with tempfile.TemporaryDirectory(prefix="micrograd-memory-") as tmp:
        for name, data in {**pyodide, **files}.items():
            atomic_write(os.path.join(tmp, name), data)
        out = pathlib.Path(tmp, "memory")
        paths = ",".join(os.path.join(tmp, name) for name in files)
        try:
            done = subprocess.run(
                [
                    node,
                    "--input-type=module",
                    "-e",
                    SNAPSHOT_JS + script,
                    tmp,
                    paths,
                    str(out),
                    ",".join(imports),
                ],
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ, "NODE_OPTIONS": ""},
            )
        except subprocess.TimeoutExpired:
            raise SiteError(
                f"saving {what} in Node.js took more than {timeout / 60:g} minutes"
            ) from None
        made = [pathlib.Path(f"{out}{suffix}") for suffix in outputs]
        if done.returncode != 0 or not all(m.is_file() for m in made):
            lacking = re.search(rf"Error: {LACKS} (\w+)", done.stderr)
            if lacking:
                call = lacking[1]
                log(f"Pyodide {PYODIDE_VERSION} lacks {call}: {what} is not saved ({fallback})")
                return None
            why = _last_error_line(done.stderr) or f"exit status {done.returncode}"
            raise SiteError(f"saving {what} in Node.js failed: {why}")
        return [m.read_bytes() for m in made]


# ------------------------------------------------------------------ the site


def page(view: str) -> str:
    """A playground page as the site serves it: the server's page, told to use the worker."""
    html = pages.page_html(view)
    marked, n = re.subn(r'(<meta charset="utf-8">)', rf"\1\n{WORKER_META}", html, count=1)
    if n != 1:
        raise SiteError(
            f'static/{PAGES[view]} has no <meta charset="utf-8"> to put the worker\'s <meta> after'
        )
    return marked


# The calls a fresh page makes first, in its order (explorer.js's init, train-controls.js's start
# with no settings in its address): (view, action, body); None stands for the default program
# the examples answer names. The layout: "auto" in a browser is the built-in layout, which is
# what "layered" computes here, where Graphviz may be installed.
FIRST_CALLS = (
    ("explorer", "examples", {}),
    ("explorer", "load", None),
    ("train", "options", {}),
    ("train", "config", {}),
)


def snapshot(log: Callable[[str], None] = print) -> list[dict]:
    """The answers to FIRST_CALLS, by the views the worker runs (`Tab(jit="javascript")`), as
    [{view, action, body, answer}]. The Train view's engine runs the same generated JavaScript
    here in Node.js; without Node.js only the explorer's calls are baked (the Train view then
    waits for Python, as a link with other settings does)."""
    from ..playground.training.engines import javascript_host
    from ..playground.views import Tab

    tab = Tab(jit="javascript")  # type: ignore[arg-type]
    baked: list[dict] = []
    program = None
    for view, action, body in FIRST_CALLS:
        if view == "train" and shutil.which("node") is None and shutil.which("nodejs") is None:
            log("no Node.js here: the Train view's first frame is not baked (it waits for Python)")
            break
        if body is None:  # the explorer's first graph: the default program, as the page sends it
            page_body: dict = {"program": program, "layout": "auto"}
            answer = tab.call(view, action, {"program": program, "layout": "layered"})
        else:
            page_body, answer = body, tab.call(view, action, body)
        if action == "examples":
            program = answer["default"]
        if action == "options":  # whether numpy is here: the browser's Python has none
            answer = {**answer, "jit": False}
        baked.append({"view": view, "action": action, "body": page_body, "answer": answer})
    tab.close()
    if baked and baked[-1]["view"] == "train":
        javascript_host().close()  # the Node.js process the bake started
    return baked


def page_files() -> dict[str, bytes]:
    """The playground's pages (told to use the worker) and the static/ files they load, by their
    path in the site: static/'s own files and its pages' folders' (explorer/, train/, gpt/),
    all but the pages' sources and the widget's files."""
    files = {name: page(view).encode("utf-8") for view, name in PAGES.items()}
    static = resources.files("micrograd.playground") / "static"
    for entry in static.iterdir():
        inside = [entry] if entry.is_file() else [f for f in entry.iterdir() if f.is_file()]
        for file in inside:
            name = file.name if file is entry else f"{entry.name}/{file.name}"
            if name not in PAGES.values() and name not in NOT_SHIPPED:
                files[f"static/{name}"] = file.read_bytes()
    return files


def site_files(
    archive: bytes, log: Callable[[str], None] = print, names: bytes | None = None
) -> dict[str, bytes]:
    """Every file of the site, by its path in the folder; `names`: makemore's names.txt, in the
    wheel (the GPT view and the course train on them), or None (the GPT view's built-in words)."""
    files = page_files()
    pyodide = pyodide_files(archive)
    for name, data in pyodide.items():
        files[f"pyodide/{name}"] = data
    wheel_name, wheel = package_wheel(names)
    files[f"wheels/{wheel_name}"] = wheel
    memory = python_memory(pyodide, wheel, log)
    if memory is not None:
        files[MEMORY] = memory
    files["site.json"] = json.dumps(
        {
            "micrograd": __version__,
            "wheel": f"wheels/{wheel_name}",
            "pyodide": PYODIDE_VERSION,
            "memory": None if memory is None else MEMORY,
            # what a first visit downloads before micrograd answers: Pyodide, Python's saved
            # start and micrograd's wheel (the browser keeps them after; the pages add ~0.2 MB)
            "pyodide_mb": round(
                (sum(len(d) for d in pyodide.values()) + len(memory or b"") + len(wheel)) / 1e6,
                1,
            ),
        },
        indent=1,
    ).encode()
    files["snapshot.json"] = json.dumps(
        snapshot(log), allow_nan=False, separators=(",", ":")
    ).encode()
    files[".nojekyll"] = b""  # GitHub Pages: serve the folder as it is
    return files


def _names_txt() -> bytes:
    from ..data import names_file

    try:
        return names_file().read_bytes()
    except OSError as e:
        raise SiteError(f"{e} (or build without them: --no-names)") from None


def build_site(
    out_dir: str | os.PathLike,
    cache_dir: str | os.PathLike | None = None,
    log: Callable[[str], None] = print,
    course: Callable[..., None] | None = None,
    names: bool = True,
) -> SiteReport:
    """Write the static site into `out_dir` (made if missing; other files in it are left alone,
    older wheels of ours removed). Each file is written atomically. `names`: carry makemore's
    names.txt (`data.names_file()`: MICROGRAD_NAMES_FILE, the cache, else downloaded once).
    Raises SiteError (one line) when Pyodide or the names cannot be had, ValueError when the
    folder cannot be written."""
    folder = os.fspath(out_dir)
    prepare_folder(folder, [os.path.join(folder, "site.json")], "OUT_DIR")
    names_txt = _names_txt() if names else None
    cache = pathlib.Path(cache_dir) if cache_dir is not None else default_cache()
    archive, source = pyodide_archive(cache, log)
    files = site_files(archive, log, names_txt)
    if course is not None:  # the course in the browser: course_app.add_course, in course/
        course(files, archive, cache, tuple(PAGES.values()), log)
    for rel, data in files.items():
        path = os.path.join(folder, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, data)
    wheel = next(rel for rel in files if rel.startswith("wheels/"))
    wheels = pathlib.Path(folder, "wheels")
    for old in wheels.glob(f"{DIST_NAME.replace('-', '_')}-*.whl"):  # an older build's
        if old.name != pathlib.PurePosixPath(wheel).name:
            old.unlink()
    return SiteReport(
        folder=folder,
        files=len(files),
        size=sum(map(len, files.values())),
        wheel=wheel,
        pyodide_from=source,
    )
