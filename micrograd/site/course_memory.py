"""`kernel_memory`: the course's kernel started once at build time and its Python memory saved,
so that a browser restores it (``course/kernel.js``, from `course-kernel.js`) instead of starting
Python, unpacking the kernel's wheels and importing IPython and the kernel on every visit.

The site does this for its own worker (`static_site.python_memory`). Here, in Node.js, the same
Pyodide unpacks every wheel of the app's lock and imports KERNEL_IMPORTS, and Pyodide's
`makeMemorySnapshot` (an API Pyodide marks private: `PYODIDE_VERSION` is pinned to the byte)
saves the memory, gzipped.

Two things a saved memory cannot carry, and how they are carried:

- the files: the memory holds Python's objects, not the file system, so the build also saves every
  file of site-packages in one archive of its own (a 4-byte little-endian length, a JSON index of
  that length, ``[path under site-packages, size]`` a file, then the files' bytes in order;
  gzipped; without the files the course never reads, `UNREAD`, nor the sources of the modules the
  memory holds but `SOURCES_KEPT`), which kernel.js writes back where it was before the kernel
  goes on (in a tenth of the time Pyodide's `loadPackage` takes to unpack the 25 wheels again).
  The build unpacks the wheels into site-packages, never the working directory (`unpackArchive`'s
  default): a package imported at build time keeps the ``__path__`` it was imported from, and a
  ``micrograd`` imported from ``/home/pyodide`` would look for ``micrograd.viz.plot`` there after
  the restore and fail with ModuleNotFoundError, its files present in site-packages;
- nothing open: a file descriptor in the saved memory means nothing after the restore, and the
  collector closing its file there printed ``Exception ignored while calling deallocator
  <function ZipFile.__del__ …> OSError: [Errno 8] Bad file descriptor`` in every fresh kernel
  (importlib.metadata's cache of `FastPath`s held a ``zipfile.Path`` of python314.zip, open).
  `CLOSE` empties that cache and collects before the memory is saved. (It does not look through
  ``gc.get_objects()`` for what else is open: that list's freed buffers, 100,000 pointers, would
  be saved with the memory, 0.5 MB more for every visitor; the course's tests restore the memory
  and look there.)
- a few JavaScript objects the saved Python holds (Pyodide's ``loadPackage``, its module as
  ``pyodide_js``, ...): the build names each by where it lives on the Pyodide object, and
  kernel.js hands the restored Python the restored Pyodide's own.
"""

from __future__ import annotations

import gzip
import json
import re
import struct
from collections.abc import Callable, Collection

from .static_site import node_snapshot

# What the kernel's worker imports as it starts, and each notebook's set-up line
KERNEL_IMPORTS = ("piplite.piplite", "pyodide_kernel", "micrograd.check")
# Files of site-packages that the restored kernel never reads, left out of its archive (issue 55:
# 1.8 MB of the 4.5 a first visit fetched; the wheels keep them, for a kernel started afresh):
# jedi's stubs of Django and of the packages the app has not (its completions of the standard
# library, of six and typing_extensions are kept: jedi lists typeshed/third_party, which must be
# there), Pygments' lexers of other languages than Python (IPython colours Python with it),
# IPython's terminal with prompt_toolkit and wcwidth (what the kernel takes of them is imported at
# build time, run from the memory; the rest serves a terminal the browser has not), and what a
# wheel installs beside its package: JupyterLab's and Notebook's front ends (the app has its own,
# in extensions/), a man page.
UNREAD = re.compile(
    r"IPython/terminal/|prompt_toolkit/|wcwidth/"
    r"|jedi/third_party/django-stubs/"
    r"|jedi/third_party/typeshed/third_party/(?!3/six/|2and3/typing_extensions\.pyi$)"
    r"|pygments/lexers/(?!(?:__init__|_mapping|python)\.py$)"
    r"|[^/]+-[^/]+\.data/"
    r"|anywidget/(?:labextension|nbextension)/"
)
# The sources of the modules imported at build time are left out of the archive too: Python runs
# them from the memory (0.9 MB less over the wire: IPython, jedi, parso, Pygments, micropip,
# stack_data, ...). What that costs: a traceback through them shows no source line, `??` on
# them no source, and jedi completes less on their objects (`get_ipython().` but by name). Kept:
# micrograd's (a learner's traceback goes through it, and its source is the course's to read),
# and the widgets' stack (traitlets, comm), whose errors a learner meets with its lines.
SOURCES_KEPT = ("micrograd/", "traitlets/", "comm/", "ipywidgets/", "anywidget/", "psygnal/")
# Run just before the memory is saved: what the imports left open, closed
CLOSE = """
def _close():
    import gc, sys
    metadata = sys.modules.get("importlib.metadata")
    if metadata is not None:  # its FastPath cache: a zipfile.Path of each zip on sys.path, open
        metadata.FastPath.__new__.cache_clear()
    gc.collect()  # (they hang in cycles): each ZipFile closed here, by its __del__
_close()
del _close
"""
_SCRIPT = """
const [dir, wheels, out, imports] = process.argv.slice(-4);
const py = await startToSave(dir);  // static_site.SNAPSHOT_JS's, as save is
const extractDir = py._api.sitepackages;  // where the kernel's loadPackage installs them
for (const w of wheels.split(",")) {
  py.unpackArchive(new Uint8Array(fs.readFileSync(w)), "wheel", { extractDir });
}
py.runPython(imports.split(",").map((m) => `import ${m}`).join("\\n"));
py.runPython(__CLOSE__);
const roots = { pyodide: py, api: py._api, module: py._module };
function where(o) {  // [kind, root, key]: how kernel.js finds it again
  for (const [root, obj] of Object.entries(roots)) {
    for (const key of Object.getOwnPropertyNames(obj)) {
      let value;
      try { value = obj[key]; } catch { continue; }  // (a getter that throws holds no object)
      if (value === o) return [typeof o, root, key];
    }
  }
  throw new Error(`Python holds a JavaScript object the build cannot name: ${String(o)}`);
}
fs.writeFileSync(out, save(py, { serializer: where }));
// the files of the modules the saved Python has imported, under site-packages (after the save:
// this leaves nothing in the memory)
fs.writeFileSync(`${out}.imported`, py.runPython(`
import json, sys
root = ${JSON.stringify(extractDir + "/")}
files = (getattr(m, "__file__", None) for m in list(sys.modules.values()))
json.dumps(sorted({f[len(root):] for f in files if isinstance(f, str) and f.startswith(root)}))
`));
// site-packages' files: [path, size] for each, then their bytes (no __pycache__: not in a wheel)
const index = [];
const parts = [];
(function walk(dir) {
  for (const name of py.FS.readdir(dir).sort()) {
    if (name === "." || name === ".." || name === "__pycache__") continue;
    const path = `${dir}/${name}`;
    if (py.FS.isDir(py.FS.stat(path).mode)) { walk(path); continue; }
    const data = py.FS.readFile(path);
    index.push([path.slice(extractDir.length + 1), data.length]);
    parts.push(data);
  }
})(extractDir);
const head = Buffer.from(JSON.stringify(index));
const size = Buffer.alloc(4);
size.writeUInt32LE(head.length);
fs.writeFileSync(`${out}.files`, Buffer.concat([size, head, ...parts]));
"""


def kernel_memory(
    pyodide: dict[str, bytes],
    wheels: dict[str, bytes],
    log: Callable[[str], None] = print,
) -> tuple[bytes, bytes] | None:
    """The kernel's Python memory and site-packages' files, each gzipped: `pyodide`
    (`static_site.pyodide_files`) started in Node.js, `wheels` (file name -> bytes: every wheel
    of the app's lock) unpacked into site-packages, KERNEL_IMPORTS imported. None without
    Node.js or with a Pyodide that lacks its snapshot calls (the kernel then starts Python
    afresh). Raises SiteError (one line) when Node.js fails otherwise."""
    saved = node_snapshot(
        _SCRIPT.replace("__CLOSE__", json.dumps(CLOSE)),
        pyodide,
        wheels,
        KERNEL_IMPORTS,
        ["", ".files", ".imported"],
        "the course's Python start",
        600,
        "its kernel starts afresh",
        log,
    )
    if saved is None:
        return None
    memory, files, imported = saved
    # level 9: 0.2 MB less than 6 for every first visit; about 10 s more to build on a loaded
    # 2-core machine
    kept = read_only(files, frozenset(json.loads(imported)))
    return gzip.compress(memory, 9, mtime=0), gzip.compress(kept, 9, mtime=0)


def archive_index(files: bytes) -> list[tuple[str, int]]:
    """The ``[path, size]`` index of site-packages' archive (`_SCRIPT`'s format)."""
    (length,) = struct.unpack_from("<I", files)
    return [(path, size) for path, size in json.loads(files[4 : 4 + length])]


def read_only(files: bytes, imported: Collection[str] = ()) -> bytes:
    """Site-packages' archive without the files UNREAD matches, nor the `imported` ones (the
    sources of the modules the saved memory holds, paths under site-packages) but those
    SOURCES_KEPT."""
    (length,) = struct.unpack_from("<I", files)
    at = 4 + length
    index, parts = [], []
    for path, size in archive_index(files):
        if not UNREAD.match(path) and (path not in imported or path.startswith(SOURCES_KEPT)):
            index.append([path, size])
            parts.append(files[at : at + size])
        at += size
    if at != len(files):
        raise ValueError(f"site-packages' archive: {len(files) - at} bytes past its index")
    head = json.dumps(index).encode()
    return struct.pack("<I", len(head)) + head + b"".join(parts)
