"""The playground's pages as every transport sends them, from the files of static/:

    page_html("train")      the Train view's page (static/train.html) as the server and the site
                            send it: its module preloads written in from its imports
    markup("train")         its <main>, the view's markup, as the notebook widget shows it
    imports_of("widget.js") a module and every module of static/ it imports, each after those

A page's file says nothing of the modules it will load: the ones to fetch at once (rather than
one import after another) are read here from the modules' own `import` lines, page.js's and its
view's (static/<view>/<view>.js, which page.js imports), so they cannot drift from the code.
"""

from __future__ import annotations

import posixpath
import re
from importlib import resources

from ..views import PAGES

# A static module's imports of the other modules of static/ (beside it, in a page's folder, or
# up in static/ itself).
IMPORT = re.compile(r'^import\s*\{[^}]*\}\s*from\s*"(\.\.?/[\w./-]+)";[ \t]*\n', re.M)
_SCRIPT = '<script type="module" src="static/page.js"></script>'  # every page's one script


def static_bytes(name: str) -> bytes:
    """A file of static/, by its path there ("common.js", "train/train.css")."""
    return (
        (resources.files("micrograd.playground") / "static").joinpath(*name.split("/")).read_bytes()
    )


def static_text(name: str) -> str:
    return static_bytes(name).decode("utf-8")


def imports_of(entry: str) -> list[str]:
    """`entry` and every module of static/ it imports, however deep, each after those it imports."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name not in order:
            for dep in IMPORT.findall(static_text(name)):
                visit(posixpath.normpath(posixpath.join(posixpath.dirname(name), dep)))
            order.append(name)

    visit(entry)
    return order


def page_html(view: str) -> str:
    """The view's page: static/'s file with a ``<link rel="modulepreload">`` for each module
    page.js and the view's module import, before its script."""
    html = static_text(PAGES[view])
    modules = [m for m in imports_of("page.js") if m != "page.js"]
    modules += [m for m in imports_of(f"{view}/{view}.js") if m not in modules]
    links = "".join(f'<link rel="modulepreload" href="static/{m}">\n' for m in modules)
    if html.count(_SCRIPT) != 1:
        raise ValueError(f"static/{PAGES[view]} must load {_SCRIPT} once, its only script")
    return html.replace(_SCRIPT, links + _SCRIPT)


def markup(view: str) -> str:
    """The view's part of its page (its <main>): the same markup the page has."""
    html = static_text(PAGES[view])
    return html[html.index("<main") : html.index("</main>") + len("</main>")]
