"""The course in the browser: the course's notebooks, `check` and the widgets in a JupyterLite app,
written by `micrograd site OUT` into ``OUT/course/`` (`add_course`, which the command hands to
`site.build_site`; ``--no-course`` leaves it out).

    OUT/course/start.html                       the start page: the chapters, "Start here"
    OUT/course/notebooks/index.html?path=01_...ipynb   one notebook, alone (a phone's view)
    OUT/course/lab/index.html                   JupyterLab, the notebooks in its file browser
    OUT/course/repl/index.html?code=print(1)    a console that runs the code it is given

JupyterLite is Jupyter itself in the browser: its kernel is Pyodide (CPython in WebAssembly) in a
Web Worker, so nothing runs on the host. The app is made by JupyterLite's own build (``jupyter
lite build``, from the PyPI packages `jupyterlite-core` and `jupyterlite-pyodide-kernel`, the
extra ``micrograd-plus[site]``) and then given everything the kernel loads, so that at run time
nothing is fetched from outside the folder:

- no Pyodide of its own: the kernel starts the site's (``../pyodide/``, the same npm archive),
  so a visitor's browser downloads and caches one copy for the site and its course, through
  ``kernel.js`` (`course-kernel.js`), which restores Python from the kernel's saved start
  (`course_memory.kernel_memory`, `KERNEL_MEMORY`) when the build could save one;
- the pure-Python wheels the kernel loads (micropip, IPython and its dependencies, jedi) and the
  widgets' (comm, ipywidgets, anywidget, psygnal), from PyPI at the versions in `WHEELS`, each
  checked against its pinned sha256 and kept in the cache beside Pyodide's archive (so the next
  build needs no network), plus micrograd's own wheel (`site.package_wheel`);
- a ``pyodide-lock.json`` of the app's own, beside the wheels in ``static/wheels/``, that lists
  exactly those wheels with their sha256 (Pyodide checks each one it loads), and the kernel's own
  three (piplite, ipykernel, pyodide-kernel, from jupyterlite-pyodide-kernel), so every package
  the kernel needs is loaded at once when it starts (none is installed by micropip one after
  the other) and ``import numpy`` is a plain ModuleNotFoundError, not a download;
- the front ends of the widgets (``@jupyter-widgets/jupyterlab-manager`` and anywidget's), taken
  from the same pinned wheels, and no other JupyterLab extension of the build's environment;
- ``jupyter-lite.json``: the kernel's Pyodide is the site's, its lock the app's, and piplite
  never falls back to PyPI (``disablePyPIFallback``).

Only what a browser loads is shipped: no source maps, and of the icon fonts only the WOFF2 and
WOFF files (`UNLOADED_FONTS`: every browser that runs Pyodide reads WOFF2 first).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable

from .. import __version__
from ..core.atomic import atomic_write
from ..core.setup_cell import installed_setup
from ..grading.graded_notebook import without_solutions
from .course_memory import kernel_memory
from .course_start import CHAPTERS, PAGE, start_page
from .course_wheels import WHEELS, all_wheels, sha256
from .static_site import DIST_NAME, PYODIDE_VERSION, SiteError, package_wheel, pyodide_files

COURSE = "course"  # the app's folder in the site
LINK_TEXT = "Learn: the course in your browser"
LINK_HREF = "course/start.html"  # the start page (course_start.py)
LINK_STYLE = "<style>@media (max-width: 600px) { .course-more { display: none; } }</style>\n"
NOTEBOOKS = tuple(c.name for c in CHAPTERS)  # the course's notebooks, in order
TOOLS = ("jupyterlite_core", "jupyterlite_pyodide_kernel", "jupyter_server")  # extra `site`
TOOLS_MISSING = (
    "the course (JupyterLite) was left out: its build tools are not installed "
    '(pip install "micrograd-plus[site]"; --no-course builds the site without it)'
)

FRONT_ENDS = {  # labextension folder in a wheel -> the wheel it comes from
    "anywidget/labextension/": "anywidget",
    "jupyterlab_widgets-3.0.17.data/data/share/jupyter/labextensions/@jupyter-widgets/"
    "jupyterlab-manager/": "jupyterlab-widgets",
}
NOT_IN_KERNEL = ("jupyterlab-widgets",)
# What the lock says of the wheels Pyodide's own lock does not list: (imports, depends)
EXTRA_LOCK = {
    "comm": (["comm"], []),
    "ipywidgets": (["ipywidgets"], ["comm", "ipython", "traitlets"]),
    "psygnal": (["psygnal"], []),
    "anywidget": (["anywidget"], ["ipywidgets", "psygnal", "typing-extensions"]),
}
# The kernel's own wheels, which jupyterlite-pyodide-kernel ships in its extension (and would
# install with micropip, one after the other, as the kernel starts): name -> (file name prefix,
# imports, depends). In the app's lock they load with the rest, at once.
KERNEL_OWN = {
    "piplite": ("piplite-", ["piplite"], ["micropip"]),
    "ipykernel": ("ipykernel-", ["ipykernel"], ["comm"]),
    "pyodide-kernel": ("pyodide_kernel-", ["pyodide_kernel"], ["ipykernel", "ipython", "jedi"]),
}
KERNEL_PYPI = "extensions/@jupyterlite/pyodide-kernel-extension/static/pypi/"  # in the app
WHEELS_DIR = "static/wheels"  # the app's lock and wheels, under course/
# The kernel's Pyodide: the site's, started by kernel.js, which restores Python from KERNEL_MEMORY
# when the build saved one (./ : from the app's root)
KERNEL_JS = "kernel.js"
PYODIDE_URL = f"./{KERNEL_JS}"
KERNEL_MEMORY = f"{WHEELS_DIR}/kernel-memory.gz"
KERNEL_FILES = f"{WHEELS_DIR}/kernel-files.gz"  # site-packages' files, for the restored kernel
# Font files the icon fonts' CSS lists after WOFF2, for browsers that cannot run Pyodide anyway
UNLOADED_FONTS = re.compile(r"build/fa-[a-z]+-\d+\.(?:eot|ttf|svg)")
# Loaded as the kernel starts: what the kernel would otherwise install itself, and micrograd with
# the widgets' Python side (`micrograd.widgets` imports anywidget).
PRELOAD = ["micropip", "comm", "ipython", "jedi", DIST_NAME, "anywidget", *KERNEL_OWN]


# The REPL has no notebooks, so this plugin of JupyterLab's (which needs their tracker) fails there
# with a console error; without it the REPL lacks nothing.
REPL_CONFIG = {
    "jupyter-lite-schema-version": 0,
    "jupyter-config-data": {"disabledExtensions": ["@jupyterlab/codemirror-extension:commands"]},
}
# repl/index.html?code=...: Python unless the address names another kernel (JupyterLite would ask)
REPL_KERNEL = (
    "<script>(function () { const u = new URL(location.href); "
    "if (!u.searchParams.has('kernel')) { u.searchParams.set('kernel', 'python'); "
    "history.replaceState(null, '', u); } })();</script>"
)
KERNELSPEC = {"display_name": "Python (Pyodide)", "language": "python", "name": "python"}
# The single-document view. Its trust badge ("Not Trusted") means nothing to a learner: gone.
# On a phone: the toolbar's buttons (Run among them) touch-sized; the top bar kept (OVERRIDES;
# Notebook hides it on a small screen) with the notebook's name and no logo; code wrapped inside
# its cell (as CodeMirror's own lineWrapping styles it), not cut at the screen's edge. At every
# width, an output's long line (a check's one red line) wraps between words, not inside them
# (JupyterLab's outputs break anywhere: "o / verflows").
PHONE_STYLE = (
    "\n<style>.jp-NotebookTrustedStatus { display: none; } "
    ".jp-Notebook .jp-OutputArea-output pre { word-break: normal; overflow-wrap: anywhere; } "
    "@media (max-width: 600px) { .jp-Toolbar { min-height: 48px; } "
    ".jp-Toolbar .jp-ToolbarButtonComponent { min-width: 44px; min-height: 44px; } "
    "#jp-NotebookLogo { display: none; } "
    "#jp-title h1 { font-size: 1.1rem; overflow: hidden; text-overflow: ellipsis; "
    "white-space: nowrap; } "
    ".jp-Notebook .cm-content { white-space: pre-wrap; word-break: break-word; "
    "overflow-wrap: anywhere; flex-shrink: 1; } }</style>"
)
# A kernel has the learner's files (/drive: where %%writefile writes and import looks) only if
# JupyterLite's service worker is registered when the kernel starts; and a page the worker
# controls, whose app version JupyterLite has no record of, first unregisters every worker and
# registers one anew (jupyterlite 0.8's ServiceWorkerManager, not awaited by the kernel). The
# second notebook a learner opened raced that: its kernel had no /drive, and my_value.py went
# into that kernel's memory, gone for notebook 3. So each page registers the worker and records
# the version itself, and JupyterLite starts after (BOOT: the page's own start, waiting on it).
DRIVE_GATE = """
<script>window.microgradDrive = (async function () {{
  const sw = navigator.serviceWorker;
  if (!sw) return;  // JupyterLite says so itself: its kernels then work without /drive
  const url = new URL("{up}service-worker.js?enableCache={cache}", location.href).href;
  try {{
    await sw.register(url);
    localStorage.setItem(url + "-version", "{version}");
  }} catch (err) {{
    console.warn("micrograd: the course's service worker could not be registered:", String(err));
  }}
}})();</script>"""
BOOT = "await import("  # the page's start: config-utils.js, which loads the app

# When Run All stops at a cell (an error), the page shows that cell, made the active one
# (JupyterLab leaves the page at the notebook's end): the first cell from the top with an error
# (Run All cleared the outputs above it as it ran them).
STOPPED_SCRIPT = """
<script>(function () {
  const runAll = new Set(["notebook:run-all-cells", "notebook:restart-run-all",
    "notebook:run-all-below", "runmenu:run-all"]);
  function showStopped(app) {
    const notebook = app.shell.currentWidget && app.shell.currentWidget.content;
    if (!notebook || !notebook.widgets) return;
    const failed = notebook.widgets.findIndex((cell) => {
      const outputs = cell.model.type === "code" ? cell.model.outputs : null;
      if (!outputs) return false;
      for (let i = 0; i < outputs.length; i++) if (outputs.get(i).type === "error") return true;
      return false;
    });
    if (failed < 0) return;
    notebook.activeCellIndex = failed;
    notebook.widgets[failed].node.scrollIntoView({ block: "center" });
  }
  function watch(app) {
    app.commands.commandExecuted.connect((_, { id, result }) => {
      if (!runAll.has(id)) return;
      Promise.resolve(result).then(
        () => setTimeout(() => showStopped(app), 0),
        (err) => {
          console.warn("micrograd: Run All failed:", err);
          showStopped(app);
        },
      );
    });
  }
  const waiting = setInterval(() => {
    if (window.jupyterapp && window.jupyterapp.commands) {
      clearInterval(waiting);
      watch(window.jupyterapp);
    }
  }, 100);
})();</script>"""
# "Download my work" (site/course-download.js, as course/download.js): the learner's notebooks
# in one archive named for them; every page of the app loads it, a link to DOWNLOAD_LINK runs it.
DOWNLOAD = "download.js"
DOWNLOAD_LINK = "#download-my-work"
# Saved as the learner works, not every two minutes (JupyterLab's default): a reload keeps it.
AUTOSAVE_SECONDS = 3
OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {"autosaveInterval": AUTOSAVE_SECONDS},
    # the notebook's name on top at every width (Notebook's "automatic" hides it on a phone)
    "@jupyter-notebook/application-extension:top": {"visible": "yes"},
}
# Each notebook's title cell ends, in the browser, with where the work is and what a reload means.
KEPT = (
    f"*Your work is kept in this browser, saved every {AUTOSAVE_SECONDS} seconds; "
    f"[Download my work]({DOWNLOAD_LINK}) takes all of it in one archive, to hand in. After a "
    "reload, run the notebook from the top (Run → Run All Cells): the kernel starts empty.*"
)
APP_PAGES = (
    "index.html",
    "lab/index.html",
    "tree/index.html",
    "notebooks/index.html",
    "repl/index.html",
)
UNUSED = (
    "rspack.config.js",
    "rspack.config.analyze.js",
    "rspack.config.watch.js",
)  # the configs of the app's own build


def tools_missing() -> str | None:
    """One line saying what to install when JupyterLite's build tools are missing, else None."""
    if all(importlib.util.find_spec(name) for name in TOOLS):
        return None
    return TOOLS_MISSING


def notebooks_folder() -> pathlib.Path | None:
    """The course's notebooks: the package's own (``micrograd/notebooks``: package data in a
    wheel, a link to the clone's ``notebooks/`` in an editable install), else the clone's; None
    if neither holds them all."""
    import micrograd

    package = pathlib.Path(micrograd.__file__).resolve().parent
    for folder in (package / "notebooks", package.parent / "notebooks"):
        if all((folder / f"{name}.ipynb").is_file() for name in NOTEBOOKS):
            return folder
    return None


# ------------------------------------------------------------------ the app's Pyodide


def pyodide_lock(
    pyodide_lock_json: bytes,
    wheels: dict[str, bytes],
    mg_wheel: str,
    mg_data: bytes,
    own: dict[str, tuple[str, bytes]] | None = None,
) -> dict:
    """The app's pyodide-lock.json: Pyodide's ``info``, and exactly the wheels shipped (PyPI's
    files, with their sha256; micrograd's; the kernel's `own`, name -> (file name, bytes), as
    `kernel_own_wheels` finds them), so nothing else is ever looked for."""
    upstream = json.loads(pyodide_lock_json)
    packages: dict[str, dict] = {}
    for name, (file_name, data) in (own or {}).items():
        _, imports, depends = KERNEL_OWN[name]
        packages[name] = {
            "name": name,
            "version": file_name.split("-")[1],
            "file_name": file_name,
            "install_dir": "site",
            "package_type": "package",
            "sha256": sha256(data),
            "imports": imports,
            "depends": depends,
            "unvendored_tests": False,
            "shared_library": False,
        }
    kernel = {n: d for n, d in wheels.items() if n not in NOT_IN_KERNEL}
    for name, data in kernel.items():
        file_name = WHEELS[name][0]
        if name in EXTRA_LOCK:
            imports, depends = EXTRA_LOCK[name]
            entry = {"name": name, "imports": imports, "depends": depends}
        else:
            theirs = upstream["packages"][name]
            entry = {k: theirs[k] for k in ("name", "imports", "depends")}
            if theirs["version"] != file_name.split("-")[1]:
                raise SiteError(
                    f"Pyodide {PYODIDE_VERSION}'s lock has {name} "
                    f"{theirs['version']}, the course pins {file_name}"
                )
        packages[name] = entry | {
            "version": file_name.split("-")[1],
            "file_name": file_name,
            "install_dir": "site",
            "package_type": "package",
            "sha256": sha256(data),
            "unvendored_tests": False,
            "shared_library": False,
        }
    for entry in packages.values():  # names as the lock's keys spell them
        entry["depends"] = [re.sub(r"[-_.]+", "-", d).lower() for d in entry["depends"]]
        unknown = [d for d in entry["depends"] if d not in packages]
        if unknown:
            raise SiteError(f"the course's lock: {entry['name']} needs {unknown}, not shipped")
    packages[DIST_NAME] = {
        "name": DIST_NAME,
        "version": __version__,
        "file_name": mg_wheel,
        "install_dir": "site",
        "package_type": "package",
        "sha256": sha256(mg_data),
        "imports": ["micrograd"],
        "depends": [],
        "unvendored_tests": False,
        "shared_library": False,
    }
    return {"info": upstream["info"], "packages": packages}


# The single-document view's tab icon, swapped as the kernel turns busy or idle for two icons of
# Jupyter Notebook's own server (static/favicons/) that JupyterLite does not have: each swap was a
# 404 and a tab without an icon
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"
NO_TAB_ICON = "@jupyter-notebook/notebook-extension:tab-icon"


def lite_config() -> dict:
    """jupyter-lite.json: the kernel's Pyodide is the site's, its packages the app's lock's,
    nothing falls back to PyPI, nothing asked for that the app has not."""
    kernel = {
        "pyodideUrl": PYODIDE_URL,
        "disablePyPIFallback": True,
        # the kernel resolves an option whose name ends in URL from the app's root
        "loadPyodideOptions": {
            "packages": PRELOAD,
            "lockFileURL": f"./{WHEELS_DIR}/pyodide-lock.json",
            # kernel.js's (left out when none is saved)
            "memoryURL": f"./{KERNEL_MEMORY}",
            "filesURL": f"./{KERNEL_FILES}",
        },
    }
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": f"micrograd {__version__}: the course",
            "litePluginSettings": {KERNEL_SETTINGS: kernel},
            "exposeAppInBrowser": True,
            "disabledExtensions": [NO_TAB_ICON],
        },
    }


# ------------------------------------------------------------------ the build


def _front_ends(wheels: dict[str, bytes], into: pathlib.Path) -> list[pathlib.Path]:
    """The widgets' JupyterLab extensions, unpacked from their wheels into `into`."""
    folders = []
    for prefix, name in FRONT_ENDS.items():
        dest = into / name
        with zipfile.ZipFile(io.BytesIO(wheels[name])) as z:
            members = [m for m in z.namelist() if m.startswith(prefix) and not m.endswith("/")]
            if not members:
                raise SiteError(f"{WHEELS[name][0]} has no {prefix}")
            for m in members:
                path = dest / m[len(prefix) :]
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, z.read(m))
        folders.append(dest)
    return folders


def _kernel_front_end() -> pathlib.Path:
    """The Pyodide kernel's JupyterLab extension, as jupyterlite-pyodide-kernel installed it."""
    for base in (sys.prefix, sys.base_prefix):
        path = pathlib.Path(
            base, "share", "jupyter", "labextensions", "@jupyterlite", "pyodide-kernel-extension"
        )
        if (path / "package.json").is_file():
            return path
    raise SiteError(
        "jupyterlite-pyodide-kernel is installed but its JupyterLab extension is not "
        "in share/jupyter/labextensions; reinstall it (pip install "
        '"micrograd-plus[site]")'
    )


def build_app(
    notebooks: pathlib.Path,
    wheels: dict[str, bytes],
    log: Callable[[str], None],
    work: pathlib.Path,
    solutions: bool = True,
) -> pathlib.Path:
    """Run ``jupyter lite build`` in `work` (the notebooks `without_solutions` unless
    `solutions`); returns the folder it wrote."""
    lite = work / "lite"
    contents = lite / "files"
    contents.mkdir(parents=True)
    for name in NOTEBOOKS:  # the app's kernel is "python" (Pyodide), not the notebooks' python3
        nb = json.loads(installed_setup((notebooks / f"{name}.ipynb").read_text("utf-8")))
        nb = nb if solutions else without_solutions(nb)
        nb.setdefault("metadata", {})["kernelspec"] = KERNELSPEC
        title = nb["cells"][0]  # the note ends the title's cell: no cell moves
        title["source"] = "".join(title["source"]).rstrip("\n") + "\n\n" + KEPT
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        atomic_write(contents / f"{name}.ipynb", text)
    atomic_write(lite / "jupyter-lite.json", json.dumps(lite_config(), indent=1))
    atomic_write(lite / "overrides.json", json.dumps(OVERRIDES, indent=1))
    (lite / "repl").mkdir()
    atomic_write(lite / "repl" / "jupyter-lite.json", json.dumps(REPL_CONFIG, indent=1))
    extensions = [*_front_ends(wheels, work / "front-ends"), _kernel_front_end()]
    out = work / "app"
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lite",
        "build",
        "--lite-dir",
        str(lite),
        "--output-dir",
        str(out),
        "--contents",
        str(contents),
        "--no-sourcemaps",
        "--no-unused-shared-packages",
        "--no-libarchive",
        "--ignore-sys-prefix",
        "--apps",
        "lab",
        "--apps",
        "repl",
        "--apps",
        "notebooks",
        "--apps",
        "tree",
        *[f"--LiteBuildConfig.federated_extensions={p}" for p in extensions],
    ]
    log("building the course's JupyterLite app (jupyter lite build)...")
    env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1")
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=900, cwd=work, env=env
        )
    except subprocess.TimeoutExpired:
        raise SiteError("jupyter lite build took more than 15 minutes") from None
    if done.returncode != 0 or not (out / "jupyter-lite.json").is_file():
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        raise SiteError(
            "jupyter lite build failed: "
            + (lines[-1][:300] if lines else f"exit status {done.returncode}")
        )
    return out


def course_files(
    archive: bytes,
    cache_dir: pathlib.Path,
    log: Callable[[str], None] = print,
    solutions: bool = True,
    wheel: tuple[str, bytes] | None = None,
) -> dict[str, bytes]:
    """Every file of the course app, by its path under the site (``course/...``); {} with a line
    in the log when the notebooks or the build tools are missing. `solutions`: False for a
    class's hand-out (`without_solutions`). `wheel`: micrograd's, (file name, bytes), as the
    site ships it (with makemore's names where the site has them); default `package_wheel()`."""
    missing = tools_missing()
    if missing:
        log(missing)
        return {}
    notebooks = notebooks_folder()
    if notebooks is None:
        log(
            "the course was left out: its notebooks are missing from this micrograd "
            "(micrograd/notebooks): reinstall micrograd-plus"
        )
        return {}
    wheels = all_wheels(cache_dir, log)
    mg_name, mg_data = wheel or package_wheel()
    pyodide = pyodide_files(archive)
    with tempfile.TemporaryDirectory(prefix="micrograd-lite-") as tmp:
        app = build_app(notebooks, wheels, log, pathlib.Path(tmp), solutions)
        files = {
            p.relative_to(app).as_posix(): p.read_bytes()
            for p in sorted(app.rglob("*"))
            if p.is_file() and not p.name.startswith(".jupyterlite.doit") and p.name not in UNUSED
        }
    files[PAGE] = start_page(notebooks, lite_config()["jupyter-config-data"]["appName"])
    _insert(files, "repl/index.html", '<meta charset="utf-8">', REPL_KERNEL)
    _insert(files, "notebooks/index.html", "<head>", PHONE_STYLE + STOPPED_SCRIPT)
    _insert(files, "lab/index.html", "<head>", STOPPED_SCRIPT)
    data = json.loads(files["jupyter-lite.json"])["jupyter-config-data"]
    cache = str(data.get("enableServiceWorkerCache", "false")).lower()
    for page in APP_PAGES:  # else the browser asks the host's root for /favicon.ico
        up = "../" * page.count("/")
        gate = DRIVE_GATE.format(up=up or "./", cache=cache, version=data["appVersion"])
        _insert(files, page, "<head>", gate)
        _insert(files, page, BOOT, "", before="await window.microgradDrive;\n        ")
        _insert(files, page, "<head>", f'\n<link rel="icon" href="{up}lab/favicon.ico">')
        _insert(files, page, "<head>", f'\n<script type="module" src="{up}{DOWNLOAD}"></script>')
    files[DOWNLOAD] = (importlib.resources.files(__package__) / "course-download.js").read_bytes()
    for rel in [rel for rel in files if UNLOADED_FONTS.fullmatch(rel)]:
        del files[rel]
    own = kernel_own_wheels(files)
    lock = pyodide_lock(pyodide["pyodide-lock.json"], wheels, mg_name, mg_data, own)
    files[f"{WHEELS_DIR}/pyodide-lock.json"] = json.dumps(lock, indent=1).encode()
    for name, data in wheels.items():
        if name not in NOT_IN_KERNEL:
            files[f"{WHEELS_DIR}/{WHEELS[name][0]}"] = data
    for file_name, data in own.values():
        files[f"{WHEELS_DIR}/{file_name}"] = data
    files[f"{WHEELS_DIR}/{mg_name}"] = mg_data
    files[KERNEL_JS] = (importlib.resources.files(__package__) / "course-kernel.js").read_bytes()
    in_lock = [e["file_name"] for e in lock["packages"].values()]
    saved = kernel_memory(pyodide, {n: files[f"{WHEELS_DIR}/{n}"] for n in in_lock}, log)
    if saved is None:  # kernel.js starts Python afresh
        config = json.loads(files["jupyter-lite.json"])
        options = config["jupyter-config-data"]["litePluginSettings"][KERNEL_SETTINGS]
        del options["loadPyodideOptions"]["memoryURL"], options["loadPyodideOptions"]["filesURL"]
        files["jupyter-lite.json"] = json.dumps(config, indent=2).encode()
    else:
        files[KERNEL_MEMORY], files[KERNEL_FILES] = saved
    return {f"{COURSE}/{rel}": data for rel, data in files.items()}


def kernel_own_wheels(files: dict[str, bytes]) -> dict[str, tuple[str, bytes]]:
    """KERNEL_OWN's wheels, as the app's build copied them from jupyterlite-pyodide-kernel:
    name -> (file name, bytes)."""
    own = {}
    for name, (prefix, _, _) in KERNEL_OWN.items():
        found = sorted(
            rel
            for rel in files
            if rel.startswith(KERNEL_PYPI + prefix) and rel.endswith("-py3-none-any.whl")
        )
        if len(found) != 1:
            raise SiteError(
                f"jupyter lite build wrote {len(found)} {name} wheels in {KERNEL_PYPI}, "
                "expected one: reinstall jupyterlite-pyodide-kernel (pip install "
                '"micrograd-plus[site]")'
            )
        own[name] = (found[0].rsplit("/", 1)[1], files[found[0]])
    return own


def _insert(files: dict[str, bytes], page: str, after: str, text: str, before: str = "") -> None:
    html = files[page].decode("utf-8")
    if html.count(after) != 1:
        raise SiteError(f"jupyter lite build wrote a {page} without one {after}")
    files[page] = html.replace(after, before + after + text, 1).encode("utf-8")


def link_pages(files: dict[str, bytes], pages: tuple[str, ...]) -> None:
    """Put "Learn: the course in your browser" in the pages' navigation ("Learn" alone on a
    phone's width, where the rest would wrap the bar onto four lines)."""
    short, rest = LINK_TEXT.split(":", 1)
    link = (
        f'<a href="{LINK_HREF}" title="{LINK_TEXT}">{short}<span class="course-more">:{rest}'
        f"</span></a></nav>"
    )
    for name in pages:
        html = files[name].decode("utf-8")
        if html.count("</nav>") < 1 or "</head>" not in html:
            raise SiteError(f"{name} has no <nav> to link the course from")
        html = html.replace("</nav>", link, 1).replace("</head>", LINK_STYLE + "</head>", 1)
        files[name] = html.encode("utf-8")


def add_course(
    files: dict[str, bytes],
    archive: bytes,
    cache_dir: pathlib.Path,
    pages: tuple[str, ...],
    log: Callable[[str], None] = print,
    solutions: bool = True,
) -> None:
    """`build_site`'s hook: the course's files into the site's `files`, and its link on `pages`
    (nothing, with a line in the log, when it cannot be built here). The course's kernel loads
    the site's own wheel of micrograd (makemore's names in it where the site has them)."""
    (name,) = [rel for rel in files if rel.startswith("wheels/") and rel.endswith(".whl")]
    wheel = (name.split("/", 1)[1], files[name])
    course = course_files(archive, cache_dir, log, solutions, wheel)
    if course:
        files.update(course)
        link_pages(files, pages)
