"""The README and the guide it links (docs/*.md): their Python examples run as written (they are a
contract with the reader), and every link between the repository's own files resolves, to the
file and to the heading it names."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = [README, *sorted((ROOT / "docs").glob("*.md"))]
# every Markdown file a reader reaches from the README
LINKED = [*GUIDE, ROOT / "CONTRIBUTING.md", ROOT / "benchmarks" / "RESULTS.md"]
BLOCKS = [
    (path, code)
    for path in GUIDE
    for code in re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
]


@pytest.mark.parametrize(
    "path, code",
    BLOCKS,
    ids=[f"{path.relative_to(ROOT)}:block{i}" for i, (path, _) in enumerate(BLOCKS)],
)
@pytest.mark.slow
def test_guide_python_block_runs(
    path: pathlib.Path, code: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run where a reader would, in a folder of their own: what a block saves (health.png, a
    # model's file) lands there, never in the clone
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(path), "exec"), {"__name__": "readme"})


def test_from_a_clone_the_readme_gives_two_make_commands_that_exist() -> None:
    clone = README.read_text().split("From a clone", 1)[1]
    block = clone.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split()[:2] for line in block.splitlines()]
    assert commands == [["make", "demo"], ["make", "test"]]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_the_guides_text_view_is_what_render_text_prints() -> None:
    from tests.support.lecture import GOLDEN_L

    assert any(f"```text\n{GOLDEN_L}```" in p.read_text() for p in GUIDE)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: pathlib.Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)  # not in code
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def relative_links(path: pathlib.Path) -> list[str]:
    """The targets of the file's Markdown links and images that are not web addresses."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)  # nor in code spans
    targets = re.findall(r"\]\(([^()\s]+)\)", text)
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken_links(path: pathlib.Path) -> list[str]:
    broken = []
    for target in relative_links(path):
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(
                f"{target}: no heading #{anchor} in {os.path.relpath(where, path.parent)}"
            )
    return broken


@pytest.mark.parametrize("path", LINKED, ids=[str(p.relative_to(ROOT)) for p in LINKED])
def test_every_relative_link_resolves(path: pathlib.Path) -> None:
    assert not broken_links(path)


def test_a_broken_link_or_heading_is_caught(tmp_path: pathlib.Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# What it is: `a` and b\n\n## Its parts\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[a](docs/a.md) [its parts](docs/a.md#its-parts) [top](docs/a.md#what-it-is-a-and-b)\n"
        "[web](https://example.org/x) `[code](nowhere.md)`\n"
    )
    assert broken_links(page) == []
    page.write_text("[gone](docs/b.md) [no heading](docs/a.md#its-part) [self](#nothing)\n")
    assert broken_links(page) == [
        "docs/b.md: no such file",
        "docs/a.md#its-part: no heading #its-part in docs/a.md",
        "#nothing: no heading #nothing in README.md",
    ]
