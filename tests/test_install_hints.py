"""Every install hint the package gives is for the package as installed from PyPI: `pip install
"micrograd-plus[EXTRA]"` with an extra pyproject.toml declares (or `pip install micrograd-plus`),
never a clone's `pip install -e ".[x]"` nor a bare dependency that leaves the extra's others out.
Read from every string of every module (adjacent literals joined, as Python joins them) and the
page scripts."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "micrograd"
EXTRAS = set(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
)
HINT = re.compile(r"pip install\s+(?:-\S+\s+)*(\S+)")
GOOD = re.compile(r'"micrograd-plus\[([a-z,]+)\]"|micrograd-plus\b')


def sources() -> list[pathlib.Path]:
    # micrograd/notebooks links to the course's notebooks: not the package's messages
    return [
        p
        for p in sorted(PACKAGE.rglob("*"))
        if p.suffix in (".py", ".js", ".html") and "notebooks" not in p.relative_to(PACKAGE).parts
    ]


def strings(path: pathlib.Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [text]
    tree = ast.parse(text)
    out = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    # an f-string's literal parts, joined (its {fields} as one space)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append(
                "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
            )
    return out + [line for line in text.splitlines() if line.lstrip().startswith("#")]


def bad_hints(texts: list[str]) -> list[str]:
    bad = []
    for text in texts:
        for m in HINT.finditer(text):
            good = GOOD.match(m.group(1))
            if good is None or (good.group(1) and not set(good.group(1).split(",")) <= EXTRAS):
                bad.append(m.group(0))
    return bad


def test_every_install_hint_names_micrograd_plus_and_a_real_extra() -> None:
    found = {str(p.relative_to(ROOT)): bad_hints(strings(p)) for p in sources()}
    assert {k: v for k, v in found.items() if v} == {}
    said = sum((strings(p) for p in sources()), [])
    assert len([t for t in said if 'pip install "micrograd-plus[' in t]) >= 10  # they are read


def test_a_clones_hint_or_a_bare_package_is_caught() -> None:
    assert bad_hints(['needs matplotlib: pip install -e ".[plot]"']) == ['pip install -e ".[plot]"']
    assert bad_hints(["pip install graphviz"]) == ["pip install graphviz"]
    assert bad_hints(["pip install 'micrograd-plus[viz]'"]) == ["pip install 'micrograd-plus[viz]'"]
    assert bad_hints(['pip install "micrograd-plus[nope]"']) == [
        'pip install "micrograd-plus[nope]"'
    ]
    assert bad_hints(['pip install "micrograd-plus[viz]" and pip install micrograd-plus']) == []
