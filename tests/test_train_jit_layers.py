"""The training library stands on the compiler, never the other way round: no module of
micrograd/jit/ imports micrograd/train/ (they once imported each other, a folder circle the
module-level import test could not see). Imports are read from each module's syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import micrograd

PACKAGE = Path(micrograd.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of its code, as an absolute dotted name."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{a.name}" for a in node.names)
    return found


def folder_imports(folder: str) -> dict[str, set[str]]:
    return {
        str(p.relative_to(PACKAGE)): imported_modules(p)
        for p in sorted((PACKAGE / folder).rglob("*.py"))
    }


def test_the_reader_resolves_relative_imports():
    # train/plots.py imports `from .jit_step import forward_numpy`: train/ on jit/ is allowed,
    # and the reader must see it, or the test below could pass by reading nothing
    assert "micrograd.train.jit_step" in imported_modules(PACKAGE / "train" / "plots.py")
    assert "micrograd.jit" in imported_modules(PACKAGE / "train" / "jit_step.py")


def test_no_jit_module_imports_the_training_library():
    offenders = {
        module: sorted(
            m for m in names if m == "micrograd.train" or m.startswith("micrograd.train.")
        )
        for module, names in folder_imports("jit").items()
    }
    assert {k: v for k, v in offenders.items() if v} == {}
