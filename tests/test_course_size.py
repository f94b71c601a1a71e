"""What a first visit to the course fetches, and that what the build leaves out of it the course
never reads (issue 55: the goal of 25 MB over the wire). The restored kernel's site-packages
archive (`course_memory.UNREAD`) is without jedi's stubs of Django and of packages the app has
not, Pygments' lexers of other languages, and the front ends a wheel installs beside its
package; the kernel, restored in Node.js from the site test_course_site.py builds (its fixture:
no second build), still imports everything the course's notebooks import, shows a traceback with
its source line, colours Python with Pygments and completes with jedi."""

from __future__ import annotations

import ast
import gzip
import json
import pathlib
import re
import shutil
import subprocess
import zipfile

import pytest

from micrograd.site import course_app as course_site
from micrograd.site import course_memory

from .conftest import _unavailable
from .support.serving import served
from .test_course_site import _kernel_js_for_node, built  # noqa: F401 (fixture: the built site)

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Imported by a notebook inside a try (numpy, matplotlib, torch: none in the browser) or its own
OPTIONAL = {"numpy", "matplotlib", "torch", "my_value", "sklearn"}


def _files(built: pathlib.Path) -> dict[str, int]:  # noqa: F811
    data = gzip.decompress((built / "s" / "course" / course_site.KERNEL_FILES).read_bytes())
    return dict(course_memory.archive_index(data))


def _course_imports() -> list[str]:
    """The modules the course's notebooks import outside a try, at a cell's top level."""
    found: set[str] = set()
    for name in course_site.NOTEBOOKS:
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        for cell in nb["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or source.lstrip().startswith("%"):
                continue
            for node in ast.parse(source).body:
                if isinstance(node, ast.Import):
                    found.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module)
    return sorted(m for m in found if m.split(".")[0] not in OPTIONAL)


@pytest.mark.slow
def test_the_kernels_archive_leaves_out_only_what_the_course_never_reads(
    built: pathlib.Path,  # noqa: F811
) -> None:
    files = _files(built)
    assert not [p for p in files if course_memory.UNREAD.match(p)]
    # what was left out is in the wheels (a kernel started afresh has it), and it was a lot
    wheels = built / "s" / "course" / course_site.WHEELS_DIR
    left_out = 0
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as z:
            left_out += sum(
                i.file_size for i in z.infolist() if course_memory.UNREAD.match(i.filename)
            )
    assert left_out > 5e6, left_out  # (of about 18 MB)
    # and what is read is there: the stdlib's stubs and six's, parso's grammar, micrograd's
    # files, every one (a traceback goes through them), the widgets' Python
    for kept in (
        "jedi/third_party/typeshed/stdlib/2and3/math.pyi",
        "jedi/third_party/typeshed/third_party/3/six/__init__.pyi",
        "parso/python/grammar313.txt",
        "anywidget/__init__.py",
        "ipywidgets/__init__.py",
    ):
        assert kept in files, kept
    (mg,) = wheels.glob("micrograd_plus-*.whl")
    with zipfile.ZipFile(mg) as z:
        ours = {n for n in z.namelist() if n.startswith("micrograd/") and not n.endswith("/")}
    assert ours and ours <= files.keys(), sorted(ours - files.keys())[:5]


RESTORED = """
const [kernel, base, imports] = process.argv.slice(-3);
const { loadPyodide } = await import(kernel);
const py = await loadPyodide({
  memoryURL: `${base}course/static/wheels/kernel-memory.gz`,
  filesURL: `${base}course/static/wheels/kernel-files.gz`,
});
py.globals.set("imports", imports);
console.log(py.runPython(`
import importlib, json, sys
# the sources of the modules the memory holds (imported at build time) are left out, but
# micrograd's: looked at before anything else is imported
import os, micrograd
root = os.path.dirname(os.path.dirname(micrograd.__file__)) + "/"
left = {}
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if isinstance(f, str) and f.startswith(root):
        left[f[len(root):]] = os.path.exists(f)
failed = []
for name in imports.split(","):
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {type(e).__name__}: {e}")
import pyodide_kernel  # (imported at build time: the kernel's shell, as a cell meets it)
shell, kernel = pyodide_kernel.ipython_shell, pyodide_kernel.kernel_instance
shell.run_cell("def g():\\\\n    return 1 / 0\\\\ng()")
shown = shell._last_traceback["traceback"]
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
coloured = highlight("x = 1", get_lexer_by_name("python"), HtmlFormatter())
shell.run_cell("import math")
completed = kernel.complete("math.sq", None)["matches"]
import jedi  # (the completion above is jedi's: the kernel's Completer.use_jedi)
shell.run_cell("from micrograd.engine import Value")
on_value = kernel.complete("Value(2.0).backw", None)["matches"]  # (micrograd's source kept)
shell.run_cell("import traitlets\\\\ntraitlets.Int().validate(None, 'x')")  # (its source kept)
through = shell._last_traceback["traceback"]
json.dumps({"failed": failed, "traceback": "\\\\n".join(shown), "coloured": coloured,
            "completed": completed, "jedi": shell.Completer.use_jedi, "on_value": on_value,
            "through": "\\\\n".join(through), "left": left})
`));
"""


@pytest.mark.slow
def test_the_restored_kernel_still_runs_what_the_course_needs(
    built: pathlib.Path,  # noqa: F811
    tmp_path: pathlib.Path,
) -> None:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        _unavailable("Node.js is needed to restore the course's kernel outside a browser")
    imports = _course_imports()
    assert {"micrograd.check.language", "micrograd.gpt", "micrograd.widgets"} <= set(imports)
    kernel = _kernel_js_for_node(built, tmp_path)
    with served(built) as url:
        done = subprocess.run(
            [node, "--input-type=module", "-e", RESTORED, kernel, f"{url}s/", ",".join(imports)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["failed"] == [], seen["failed"]
    shown = re.sub(r"\x1b\[[0-9;]*m", "", seen["traceback"])  # (IPython's colours)
    assert "ZeroDivisionError" in shown and "return 1 / 0" in shown, shown
    assert '<span class="mi">1</span>' in seen["coloured"], seen["coloured"]
    assert seen["completed"] == ["sqrt"], seen["completed"]
    assert seen["jedi"] is True
    assert seen["on_value"] == ["backward"], seen["on_value"]
    # a traceback through the widgets' traitlets keeps its lines
    through = re.sub(r"\x1b\[[0-9;]*m", "", seen["through"])
    assert "TraitError" in through and "raise TraitError(value" in through, through
    left = seen["left"]
    assert left["micrograd/check/notebook.py"] and left["traitlets/traitlets.py"], left
    assert left["IPython/core/interactiveshell.py"] is False  # run from the memory
    present = sorted(
        f for f, there in left.items() if there and not f.startswith(course_memory.SOURCES_KEPT)
    )
    assert not present, present[:5]


def _archive(files: dict[str, bytes]) -> bytes:
    head = json.dumps([[path, len(data)] for path, data in files.items()]).encode()
    return len(head).to_bytes(4, "little") + head + b"".join(files.values())


def test_the_archive_keeps_every_file_but_those_never_read() -> None:
    files = {
        "micrograd/engine.py": b"class Value: ...\n",
        "pygments/lexers/html.py": b"class HtmlLexer: ...\n",
        "pygments/lexers/python.py": b"class PythonLexer: ...\n",
        "prompt_toolkit/__init__.py": b"",
        "anywidget-0.11.0.data/data/share/jupyter/labextensions/anywidget/package.json": b"{}",
        "jedi/third_party/typeshed/third_party/2and3/requests/api.pyi": b"def get(): ...\n",
        "jedi/third_party/typeshed/third_party/3/six/__init__.pyi": b"def b(): ...\n",
    }
    kept = course_memory.read_only(_archive(files))
    want = ["micrograd/engine.py", "pygments/lexers/python.py"]
    want.append("jedi/third_party/typeshed/third_party/3/six/__init__.pyi")
    assert kept == _archive({p: files[p] for p in want})
    # and the sources of the modules the memory holds, but micrograd's
    imported = {"micrograd/engine.py", "pygments/lexers/python.py"}
    kept = course_memory.read_only(_archive(files), imported)
    assert kept == _archive({p: files[p] for p in want if p != "pygments/lexers/python.py"})
    with pytest.raises(ValueError, match="3 bytes past its index"):
        course_memory.read_only(_archive(files) + b"abc")
