"""The build's additions to pyproject.toml:

- the optional compiled core of the engine (micrograd/core/cvalue.c). `optional=True`: where it
  cannot build (no C compiler), the install goes on and the engine is the pure-Python one
  (micrograd/core/compiled.py chooses at import);
- the long description PyPI shows: README.md with its relative links and images made absolute
  (PyPI's page has no repository to resolve them in), from the one address of the repository,
  pyproject.toml's [project.urls] Repository.
"""

import os
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent


def repository(pyproject: str) -> str:
    """[project.urls] Repository, https://github.com/OWNER/REPO (by hand: 3.10 has no tomllib)."""
    m = re.search(r'^Repository = "(https://github\.com/[\w.-]+/[\w.-]+)"\s*$', pyproject, re.M)
    if m is None:
        raise SystemExit("setup.py: pyproject.toml's [project.urls] has no GitHub Repository")
    return m.group(1)


def absolute_links(markdown: str, repo: str, branch: str = "main") -> str:
    """`markdown` with every relative link target absolute: images ``![..](path)`` from
    raw.githubusercontent.com, links ``[..](path)`` to the file's page on GitHub (``#anchor``
    alone stays: it is on the page). Code blocks and code spans are left as written."""
    owner_name = repo.removeprefix("https://github.com/")
    raw = f"https://raw.githubusercontent.com/{owner_name}/{branch}/"
    page = f"{repo}/blob/{branch}/"

    def fix(m: re.Match) -> str:
        if m.group("code"):  # a code span, left as written
            return m.group(0)
        bang, text, target = m.group("bang"), m.group("text"), m.group("target")
        if re.match(r"[a-z][a-z0-9+.-]*:|#|/", target):  # a web address, an anchor, a site path
            return m.group(0)
        return f"{bang}[{text}]({(raw if bang else page) + target})"

    # left to right, a link (code spans allowed in its text) or a code span, whichever starts first
    token = re.compile(
        r"(?P<bang>!?)\[(?P<text>(?:`[^`\n]*`|[^\]`])*)\]\((?P<target>[^()\s]+)\)"
        r"|(?P<code>`[^`\n]*`)"
    )
    pieces = re.split(r"(^```.*?^```)", markdown, flags=re.M | re.S)  # odd pieces: fenced code
    return "".join(p if i % 2 else token.sub(fix, p) for i, p in enumerate(pieces))


if __name__ == "__main__":
    from setuptools import Extension, setup

    # no fused multiply-add: the compiled core gives the pure engine's bits (tests/test_compiled.py)
    flags = [] if sys.platform == "win32" else ["-ffp-contract=off"]
    core = Extension(
        "micrograd.core.cvalue",
        ["micrograd/core/cvalue.c"],
        optional=True,
        extra_compile_args=flags,
    )
    # MICROGRAD_PURE_PYTHON=1 at build time: no compiled core, a wheel for every platform
    # (py3-none-any: `make dist-pure`'s; the sdist still carries cvalue.c)
    pure = os.environ.get("MICROGRAD_PURE_PYTHON") == "1"
    readme = absolute_links(
        (HERE / "README.md").read_text(encoding="utf-8"),
        repository((HERE / "pyproject.toml").read_text(encoding="utf-8")),
    )
    setup(
        ext_modules=[] if pure else [core],
        long_description=readme,
        long_description_content_type="text/markdown",
    )
