"""The Train view's run in parts (trainer.py: the run; train_pacer.py, train_publish.py, the
model kinds): the run stays small, its parts take typed arguments, not ``tr: Any``, and no test
reaches into a private attribute of them. Read from the syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import micrograd

PLAYGROUND = Path(micrograd.__file__).parent / "playground" / "training"  # the Train view's room
TESTS = Path(__file__).resolve().parent
LECTURE_SHAPES = {"_prev", "_op", "_backward"}  # a Value's own, as the lecture writes them


def test_no_part_takes_the_run_as_any():
    untyped = []
    for name in ("engines.py", "train_frames.py", "train_mlp.py", "train_point.py", "trainer.py"):
        tree = ast.parse((PLAYGROUND / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    note = ast.unparse(arg.annotation) if arg.annotation else ""
                    if arg.arg in ("tr", "mlp", "trainer", "run") and note in ("", "Any"):
                        untyped.append(f"{name}:{node.lineno} {node.name}({arg.arg}: {note})")
    assert untyped == []


def _private_writes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for e in ast.walk(t):
                if (
                    isinstance(e, ast.Attribute)
                    and e.attr.startswith("_")
                    and not e.attr.startswith("__")
                    and e.attr not in LECTURE_SHAPES
                    and not (isinstance(e.value, ast.Name) and e.value.id == "self")
                ):
                    found.append(f"{node.lineno}: {ast.unparse(e)}")
        if (  # monkeypatch.setattr(obj, "_name", ...) and setattr(obj, "_name", ...)
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("setattr", "monkeypatch.setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and str(node.args[1].value).startswith("_")
            and not str(node.args[1].value).startswith("__")
        ):
            found.append(f"{node.lineno}: setattr(..., {node.args[1].value!r})")
    return found


def test_the_reader_sees_a_private_write():
    old = "tr._step, tr._publish = step, publish\ntr._stale = True\nx._prev = set()\n"
    assert _private_writes(ast.parse(old)) == ["1: tr._step", "1: tr._publish", "2: tr._stale"]


def test_no_train_view_test_assigns_a_private_attribute():
    found = {}
    for path in sorted(TESTS.glob("test_*.py")):
        src = path.read_text(encoding="utf-8")
        if "playground.train" in src or "playground.engines" in src or "Trainer" in src:
            writes = _private_writes(ast.parse(src))
            if writes:
                found[path.name] = writes
    assert found == {}
