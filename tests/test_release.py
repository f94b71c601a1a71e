"""What a release is made of, checked where it is written: the license and the credits, the
repository's one address (pyproject.toml's [project.urls]) and everything that repeats it, the
changelog's version, and the workflows that build, check, deploy and publish it.

The slow half (a wheel built, checked and installed in a fresh virtual environment; the README's
quickstart run as written) is tests/test_release_install.py."""

from __future__ import annotations

import pathlib
import re

import pytest

import micrograd

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
README = (ROOT / "README.md").read_text()


def repository() -> str:
    """'owner/name' of [project.urls] Repository, the one place the address is written."""
    url = PROJECT["urls"]["Repository"]
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    assert m, f"[project.urls] Repository is not a GitHub repository's address: {url!r}"
    return m.group(1)


def setup_cell_repo() -> str:
    """The REPO the notebooks' setup cell installs from (notebooks/setup_cell.py, its one source,
    wherever in it the assignment sits)."""
    text = (ROOT / "notebooks" / "setup_cell.py").read_text()
    found = re.findall(r"""^\s*REPO\s*=\s*(['"])([^'"]*)\1""", text, flags=re.M)
    assert len(found) == 1, f"notebooks/setup_cell.py should assign REPO once: {found}"
    return found[0][1]


def test_the_setup_cell_installs_from_the_repository_pyproject_names() -> None:
    assert setup_cell_repo() == repository()


def test_every_colab_link_in_the_readme_opens_a_notebook_of_the_repository() -> None:
    links = re.findall(r"https://colab\.research\.google\.com/github/([^)\s]+)", README)
    assert len(links) == 6, links  # one per notebook
    for link in links:
        m = re.fullmatch(r"([\w.-]+/[\w.-]+)/blob/main/(notebooks/[\w.-]+\.ipynb)", link)
        assert m, link
        assert m.group(1) == repository(), link
        assert (ROOT / m.group(2)).is_file(), link


def test_every_address_of_the_project_in_the_readme_is_the_one_in_pyproject() -> None:
    owner, name = repository().split("/")
    said = re.findall(r"github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?=[/\s\"')`#]|$)", README)
    ours = [r for r in said if not r.startswith("karpathy/")]
    assert ours and set(ours) == {repository()}, ours
    # the site GitHub Pages serves: at the README's top, and the project's Homepage
    pages = f"https://{owner}.github.io/{name}/"
    assert PROJECT["urls"]["Homepage"] == pages
    assert pages in README.split("\n## ")[0], "the README's top should link the deployed site"
    assert (
        PROJECT["urls"]["Changelog"] == f"https://github.com/{repository()}/blob/main/CHANGELOG.md"
    )


def test_license_and_notice_are_the_projects_license_files() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE", "NOTICE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    notice = (ROOT / "NOTICE").read_text()
    # what the project follows or ships from others, each with its license
    for credit in ("https://github.com/karpathy/micrograd", "https://github.com/karpathy/makemore"):
        (block,) = [b for b in notice.split("\n\n") if credit in b]
        assert "MIT License" in block and "Copyright (c)" in block, block
    assert "names.txt" in notice and "Permission is hereby granted" in notice


def test_the_changelog_starts_at_the_version_the_package_says() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## (\d+\.\d+\.\d+)\b", text, flags=re.M)
    assert versions and versions[0] == micrograd.__version__, versions
    assert PROJECT["dynamic"] == ["version"]  # pyproject reads micrograd.__version__
