"""The package's shape: one version, an import graph without circles, modules of a readable size."""

from __future__ import annotations

import ast
import importlib.metadata
import pathlib

import pytest

import micrograd
from micrograd.commands import cli

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "micrograd"


def test_version_is_written_once(capsys) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("micrograd-plus") == micrograd.__version__
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"micrograd {micrograd.__version__}\n"


def test_export_extra_is_a_lower_bound_and_tests_pin() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert extras["export"] == ["torch>=2.0"]
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    assert "torch==2.13.0" in groups["test"]  # the project's tests, not a public extra


def imports(path: pathlib.Path) -> set[str]:
    """The package modules `path` imports, at the top or inside functions."""
    here = path.relative_to(ROOT).with_suffix("").parts[:-1]  # ('micrograd',) or deeper
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - node.level + 1]
            if node.module:
                found.add(".".join((*base, *node.module.split("."))))
            else:  # from . import x, y: modules of the package
                found.update(".".join((*base, a.name)) for a in node.names)
        elif (
            isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("micrograd")
        ):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("micrograd"))
    return found


def package_modules() -> dict[str, pathlib.Path]:
    """Every module of the package by its dotted name; a folder's __init__.py is the folder."""
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if "notebooks" in parts:
            continue
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {
        name: {m for m in imports(p) if m in modules and m != name}
        for name, p in modules.items()
        if name != "micrograd"
    }


@pytest.mark.slow
def test_the_import_graph_has_no_circle() -> None:
    graph = import_graph()
    # depth-first search for a back edge; report the circle
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                circle = stack[stack.index(n) :] + [n]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    # the library core imports nothing above it: the engine is engine.py with what it stands on
    # in core/ (the registry, the numbers policy, the rules on names, the graph walk, copying),
    # and nn builds on the engine alone
    core = ("registry", "floats", "names", "walk", "copying", "collector", "fast", "gradients")
    core += ("compiled",)  # the compiled core's choice (core/cvalue.c, or pure slots)
    stands_on = {f"micrograd.core.{m}" for m in core}
    assert graph["micrograd.engine"] <= stands_on
    assert graph["micrograd.core.floats"] == set()
    assert all(graph[m] <= stands_on for m in stands_on)
    assert graph["micrograd.nn"] <= stands_on | {"micrograd.engine"}
    assert graph["micrograd.io"] <= {"micrograd.core.atomic", "micrograd.nn", "micrograd.gpt"}


def folder_of(name: str, modules: dict[str, pathlib.Path]) -> str:
    """The folder a module lives in (micrograd.jit for micrograd.jit.plan and for micrograd.jit
    itself); a module at the top of micrograd/ (engine, nn, widgets ...) is a node of its own."""
    parts = name.split(".")
    if modules[name].name == "__init__.py" or len(parts) == 2:
        return name
    return ".".join(parts[:2])


PLAYGROUND = "micrograd.playground"


def room_of(name: str, modules: dict[str, pathlib.Path]) -> str:
    """The playground's room a module lives in (micrograd.playground.training for
    micrograd.playground.training.trainer and for the room itself); a module at the playground's
    top (views, errors ...) is a node of its own; outside the playground, the folder."""
    parts = name.split(".")
    if parts[:2] != PLAYGROUND.split("."):
        return folder_of(name, modules)
    return ".".join(parts[:3])


def folder_circles(
    graph: dict[str, set[str]], modules: dict[str, pathlib.Path], folder=folder_of
) -> list[str]:
    """Every circle of the folders' import graph (a strongly connected set of folders), each
    written with the imports that close it; [] when there is none. `folder` names a module's
    folder (`folder_of`; `room_of` for the playground's rooms)."""
    edges: dict[str, set[str]] = {}
    why: dict[tuple[str, str], list[str]] = {}
    for name, targets in graph.items():
        a = folder(name, modules)
        for target in targets:
            b = folder(target, modules)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), []).append(f"{name} imports {target}")
    # Tarjan's strongly connected components, iteratively (no recursion limit to meet)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(set(edges) | {b for bs in edges.values() for b in bs}):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return [
        " <-> ".join(c)
        + ": "
        + "; ".join(line for a in c for b in c if (a, b) in why for line in why[(a, b)])
        for c in found
    ]


def test_folder_circles_sees_a_circle_the_module_graph_cannot() -> None:
    # the circle the issue names: two folders importing each other through different modules
    modules = {
        "micrograd.a": pathlib.Path("a/__init__.py"),
        "micrograd.a.x": pathlib.Path("a/x.py"),
        "micrograd.b": pathlib.Path("b/__init__.py"),
        "micrograd.b.y": pathlib.Path("b/y.py"),
        "micrograd.b.z": pathlib.Path("b/z.py"),
    }
    graph = {
        "micrograd.a": set(),
        "micrograd.a.x": {"micrograd.b.y"},
        "micrograd.b": set(),
        "micrograd.b.y": set(),
        "micrograd.b.z": {"micrograd.a"},
    }
    assert folder_circles(graph, modules) == [
        "micrograd.a <-> micrograd.b: micrograd.a.x imports micrograd.b.y; "
        "micrograd.b.z imports micrograd.a"
    ]
    graph["micrograd.b.z"] = set()
    assert folder_circles(graph, modules) == []


@pytest.mark.slow
def test_the_folders_import_graph_has_no_circle() -> None:
    # The module graph above has no circle, but two folders can still lean on each other through
    # different modules (jit/train.py -> train, train/plots.py -> jit.train): then neither folder
    # can be read, tested or moved without the other. Folders here are micrograd's subpackages;
    # each module at the top of micrograd/ counts as one of its own.
    circles = folder_circles(import_graph(), package_modules())
    assert not circles, "folders that import each other:\n" + "\n".join(circles)


# The playground's rooms, each a folder by concern, and the rooms each may import (its
# __init__.py says so): the explorer and the Train view stand alone, the GPT view on the Train
# view's run, the transports on the views; at the playground's top, the views and what the rooms
# share (errors, limits, the tab's keepsake).
ROOMS = {
    "explore": set(),
    "training": set(),
    "gpt": {"training"},
    "serving": {"explore", "training", "gpt"},
}
PLAYGROUND_TOP = {"__init__", "views", "errors", "limits", "keepsake"}


def test_room_circles_sees_a_circle_between_two_rooms() -> None:
    modules = {
        f"{PLAYGROUND}": pathlib.Path("playground/__init__.py"),
        f"{PLAYGROUND}.views": pathlib.Path("playground/views.py"),
        f"{PLAYGROUND}.gpt": pathlib.Path("playground/gpt/__init__.py"),
        f"{PLAYGROUND}.gpt.gpt_view": pathlib.Path("playground/gpt/gpt_view.py"),
        f"{PLAYGROUND}.training": pathlib.Path("playground/training/__init__.py"),
        f"{PLAYGROUND}.training.trainer": pathlib.Path("playground/training/trainer.py"),
        f"{PLAYGROUND}.training.train_point": pathlib.Path("playground/training/train_point.py"),
    }
    graph = {name: set() for name in modules}
    graph[f"{PLAYGROUND}.gpt.gpt_view"] = {f"{PLAYGROUND}.training.trainer"}
    graph[f"{PLAYGROUND}.training.train_point"] = {f"{PLAYGROUND}.views"}
    assert folder_circles(graph, modules, room_of) == []  # the folder test sees one folder
    graph[f"{PLAYGROUND}.views"] = {f"{PLAYGROUND}.gpt.gpt_view"}
    assert folder_circles(graph, modules, room_of) == [
        f"{PLAYGROUND}.gpt <-> {PLAYGROUND}.training <-> {PLAYGROUND}.views: "
        f"{PLAYGROUND}.gpt.gpt_view imports {PLAYGROUND}.training.trainer; "
        f"{PLAYGROUND}.training.train_point imports {PLAYGROUND}.views; "
        f"{PLAYGROUND}.views imports {PLAYGROUND}.gpt.gpt_view"
    ]
    assert folder_circles(graph, modules) == []  # one folder, micrograd.playground


def test_the_playground_is_in_rooms_with_no_circle_between_them() -> None:
    playground = PACKAGE / "playground"
    top = {p.stem for p in playground.glob("*.py")}
    assert top == PLAYGROUND_TOP and len(top) <= 8
    rooms = {p.name for p in playground.iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(ROOMS)
    for room in rooms:
        doc = ast.get_docstring(ast.parse((playground / room / "__init__.py").read_text()))
        assert doc and "may import" in doc and len(doc.splitlines()) == 3, room
    graph = import_graph()
    modules = package_modules()
    circles = folder_circles(graph, modules, room_of)
    assert not circles, "rooms that import each other:\n" + "\n".join(circles)
    # and each room imports only the rooms its docstring names
    beyond = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name.startswith(PLAYGROUND + ".") and name.split(".")[2] in ROOMS
        for target in targets
        if target.startswith(PLAYGROUND + ".")
        and target.split(".")[2] in ROOMS
        and target.split(".")[2] != name.split(".")[2]
        and target.split(".")[2] not in ROOMS[name.split(".")[2]]
    )
    assert not beyond, "imports between rooms beyond the rooms' rule:\n" + "\n".join(beyond)
    # the room's rule in words: the lower rooms never import the playground's top but errors
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name.startswith(PLAYGROUND + ".")
        and name.split(".")[2] in ("explore", "training", "gpt")
        for target in targets
        if target.startswith(PLAYGROUND + ".")
        and target.split(".")[2] in PLAYGROUND_TOP - {"errors"}
    )
    assert not upward, upward


# The modules above the playground: the commands that start it, the notebook's widgets (a
# transport of its views) and the static site's builders (site/: they pack its pages and bake the
# views' first answers). Everything else in the package lies below it.
PLAYGROUND_USERS = {
    "micrograd.commands.cli",
    "micrograd.commands.gpt",  # the GPT view's rule for a word and the block size (check_fits)
    "micrograd.commands.playground",
    "micrograd.commands.site",
    "micrograd.widgets",
}
SITE = "micrograd.site"


@pytest.mark.slow
def test_layers_point_down_only() -> None:
    # No module below the playground imports it: what the playground shares with the rest (the
    # graph layout viz draws with, the data sets the demo trains on) lives below both.
    modules = package_modules()
    upward = sorted(
        f"{name} imports {m}"
        for name, path in modules.items()
        if not name.startswith(("micrograd.playground", SITE)) and name not in PLAYGROUND_USERS
        for m in imports(path)
        if m.split(".")[:2] == ["micrograd", "playground"]
    )
    assert not upward, "upward imports:\n" + "\n".join(upward)
    # and only the site command imports the site's builders
    builders = sorted(
        f"{name} imports {m}"
        for name, path in modules.items()
        if not name.startswith(SITE) and name != "micrograd.commands.site"
        for m in imports(path)
        if m.startswith(SITE)
    )
    assert not builders, builders
    # and nothing but the commands imports a command
    commands = sorted(
        f"{name} imports {m}"
        for name, path in modules.items()
        if not name.startswith("micrograd.commands")
        for m in imports(path)
        if m.startswith("micrograd.commands")
    )
    assert commands == ["micrograd.__main__ imports micrograd.commands.cli"], commands
    assert "micrograd.viz.layout" in modules and "micrograd.playground.layout" not in modules
    users = {
        name
        for name, path in modules.items()
        if any(m.startswith("micrograd.viz.layout") for m in imports(path))
    }
    assert {"micrograd.viz", "micrograd.playground.explore.drawing"} <= users


# The top of micrograd/ is the lecture: the engine, nn, and what a learner of the lecture looks
# for next (gpt.py: microgpt, the lecture's engine carrying a GPT); everything else is in a folder
# named by what it is for. (widgets.py is only the name the notebooks import: the module is the
# playground's, test_documented_import_paths_work.)
TOP = {"engine", "nn", "losses", "optim", "data", "gradcheck", "io", "widgets", "gpt"}


def test_the_top_level_is_the_lecture_and_folders_say_what_they_offer() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert top == TOP and len(top) <= 9
    folders = [p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    assert {f.name for f in folders} >= {"core", "viz", "jit", "train", "expr", "check"}
    for folder in folders:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        assert doc and len(doc) > 80, f"{folder.name}/__init__.py says what the folder offers"
    # the guide's layout (docs/layout.md) draws every folder
    layout = (ROOT / "docs" / "layout.md").read_text()
    for folder in folders:
        assert f"  {folder.name}/ " in layout, folder.name


# The import paths the README and the notebooks give: each imports, as the module named (a move
# inside the package keeps them).
DOCUMENTED = {
    "micrograd.widgets": "micrograd.playground.serving.widgets",
    "micrograd.playground.explore": "micrograd.playground.explore",
    "micrograd.jit": "micrograd.jit",
    "micrograd.check": "micrograd.check",
    "micrograd.viz": "micrograd.viz",
    "micrograd.playground.serve": "micrograd.playground",
    "micrograd.io": "micrograd.io",
}


@pytest.mark.parametrize("path", sorted(DOCUMENTED))
def test_documented_import_paths_work(path: str) -> None:
    import importlib

    if path == "micrograd.widgets":
        pytest.importorskip("anywidget", reason="the widgets need anywidget")
    if path == "micrograd.playground.serve":  # a function: from micrograd.playground import serve
        from micrograd.playground import serve

        assert callable(serve) and serve.__module__ == "micrograd.playground.serving.server"
        return
    module = importlib.import_module(path)
    assert module.__name__ == DOCUMENTED[path]
    assert module is importlib.import_module(DOCUMENTED[path])
    if path == "micrograd.widgets":  # what the notebooks use, on the playground's own module
        from micrograd.widgets import PlaygroundWidget, explore, train

        assert explore.__module__ == train.__module__ == "micrograd.playground.serving.widgets"
        assert PlaygroundWidget is module.PlaygroundWidget


@pytest.mark.parametrize("name", ["jit", "check"])
def test_modules_named_after_their_function_are_modules_and_callable(name: str) -> None:
    import importlib

    module = importlib.import_module(f"micrograd.{name}")
    assert getattr(micrograd, name) is module  # `import micrograd.jit as mj` gives the module
    assert callable(module) and module.__call__.__doc__ == f"Call micrograd.{name}.{name}."


def test_gradcheck_is_an_ordinary_module_and_the_package_gives_its_function() -> None:
    import subprocess
    import sys
    import types

    # a fresh interpreter: `import micrograd.gradcheck as g` as a newcomer types it
    code = (
        "import sys, types\n"
        "import micrograd.gradcheck as g\n"
        "import micrograd\n"
        "from micrograd.gradcheck import gradcheck, numerical_grad, analytic_grad\n"
        "module = sys.modules['micrograd.gradcheck']\n"
        "assert type(module) is types.ModuleType, type(module)  # no class swapped in\n"
        "assert g is micrograd.gradcheck is gradcheck is module.gradcheck  # as torch.autograd\n"
        "assert g(lambda a, b: a * b + a.tanh(), [0.3, -1.2])\n"
        "assert micrograd.numerical_grad is numerical_grad and callable(analytic_grad)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    assert type(sys.modules["micrograd.gradcheck"]) is types.ModuleType


def _private_imports(path: pathlib.Path) -> list[str]:
    """Where `path` reaches into another package module's private names: ``from .x import _y``,
    or ``x._y`` on a package module `x` it imported (dunder names are public)."""
    here = path.relative_to(ROOT).with_suffix("").parts[:-1]
    tree = ast.parse(path.read_text())
    modules: set[str] = set()  # local names bound to package modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            inside = node.level or (node.module or "").startswith("micrograd")
            if not inside:
                continue  # the standard library's own (sys._getframe) is not ours to judge
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if private:
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import {a.name}")
                base = here[: len(here) - node.level + 1] if node.level else ()
                full = ".".join((*base, *(node.module or "").split("."), a.name)).replace("..", ".")
                if (ROOT / (full.replace(".", "/") + ".py")).exists():
                    modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules.update(
                (a.asname or a.name).split(".")[0]
                for a in node.names
                if a.name.startswith("micrograd")
            )
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


@pytest.mark.slow
def test_no_module_imports_another_modules_private_names() -> None:
    # A private name is a module's own business: what another module needs is made public (or
    # moved to where it is used), so renaming a helper can never change another module.
    found = [hit for p in sorted(PACKAGE.rglob("*.py")) for hit in _private_imports(p)]
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_import_micrograd_loads_the_checker_only_when_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, micrograd\n"
        "assert 'micrograd.check' not in sys.modules, 'micrograd.check loaded eagerly'\n"
        "from micrograd import check\n"
        "assert check is sys.modules['micrograd.check'] and callable(check)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# Module names that more than one folder uses, each for one concern: a command and the library it
# runs (commands/grade.py runs grading/grade.py), the GPT and its jit, micrograd.widgets and the
# playground's module it names. Any other shared name is two concerns under one name.
SAME_CONCERN = {
    "demo.py": {"commands", "train"},
    "grade.py": {"commands", "grading"},
    "gpt.py": {"", "commands", "jit"},
    "widgets.py": {"", "playground/serving"},
}


def shared_names(package: pathlib.Path) -> dict[str, set[str]]:
    """Each module name (not __init__.py) used in more than one folder -> those folders."""
    folders: dict[str, set[str]] = {}
    for p in package.rglob("*.py"):
        if "notebooks" in p.parts or p.name == "__init__.py":
            continue
        folders.setdefault(p.name, set()).add(p.parent.relative_to(package).as_posix().strip("."))
    return {name: where for name, where in folders.items() if len(where) > 1}


def test_no_two_modules_share_a_name_for_different_concerns(tmp_path: pathlib.Path) -> None:
    assert shared_names(PACKAGE) == SAME_CONCERN
    for folder in ("check", "grading"):  # the test can fail: two sandbox.py, as there were
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "sandbox.py").write_text("")
    assert shared_names(tmp_path) == {"sandbox.py": {"check", "grading"}}
