"""`kernel_memory`: the course's kernel started once at build time and its Python memory saved,
so that a browser restores it (``course/kernel.js``, from `course-kernel.js`) instead of starting
Python, unpacking the kernel's wheels and importing IPython and the kernel on every visit.

The site does this for its own worker (`static_site.python_memory`). Here, in Node.js, the same
Pyodide unpacks every wheel of the app's lock and imports KERNEL_IMPORTS, and Pyodide's
`makeMemorySnapshot` (an API Pyodide marks private: `PYODIDE_VERSION` is pinned to the byte)
saves the memory, gzipped.

Two things a saved memory cannot carry, and how they are carried:

- the files: the memory holds Python's objects, not the file system, so the build also saves
  every file of site-packages in one archive of its own (a 4-byte little-endian length, a JSON
  index of that length, ``[path under site-packages, size]`` a file, then the files' bytes in
  order; gzipped), which kernel.js writes back where it was before the kernel goes on (in a
  tenth of the time Pyodide's `loadPackage` takes to unpack the 25 wheels again). The build
  unpacks the wheels into site-packages, never the working directory (`unpackArchive`'s
  default): a package imported at build time keeps the ``__path__`` it was imported from, and a
  ``micrograd`` imported from ``/home/pyodide`` would look for ``micrograd.viz.plot`` there after
  the restore and fail with ModuleNotFoundError, its files present in site-packages;
- a few JavaScript objects the saved Python holds (Pyodide's ``loadPackage``, its module as
  ``pyodide_js``, ...): the build names each by where it lives on the Pyodide object, and
  kernel.js hands the restored Python the restored Pyodide's own.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable

from .static_site import node_snapshot

# What the kernel's worker imports as it starts, and each notebook's set-up line
KERNEL_IMPORTS = ("piplite.piplite", "pyodide_kernel", "micrograd.check")
_SCRIPT = """
const fs = await import("node:fs");
const url = await import("node:url");
const [dir, wheels, out, imports] = process.argv.slice(-4);
const { loadPyodide } = await import(url.pathToFileURL(`${dir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${dir}/`, _makeSnapshot: true });
const extractDir = py._api.sitepackages;  // where the kernel's loadPackage installs them
for (const w of wheels.split(",")) {
  py.unpackArchive(new Uint8Array(fs.readFileSync(w)), "wheel", { extractDir });
}
py.runPython(imports.split(",").map((m) => `import ${m}`).join("\\n"));
// garbage the imports left (a ZipFile in a reference cycle, say) goes now, while its file is
// open: collected after the restore, where its descriptor means nothing, it would close with
// "Exception ignored ... OSError: Bad file descriptor" in the middle of a learner's cell
py.runPython("import gc\\ngc.collect()");
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
fs.writeFileSync(out, py.makeMemorySnapshot({ serializer: where }));
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
    Node.js (the kernel then starts Python afresh). Raises SiteError (one line) when Node.js
    fails."""
    if shutil.which("node") is None and shutil.which("nodejs") is None:
        log("no Node.js here: the course's Python start is not saved (its kernel starts afresh)")
        return None
    memory, files = node_snapshot(
        _SCRIPT, pyodide, wheels, KERNEL_IMPORTS, ["", ".files"], "the course kernel's start", 600
    )
    return gzip.compress(memory, 6, mtime=0), gzip.compress(files, 6, mtime=0)
