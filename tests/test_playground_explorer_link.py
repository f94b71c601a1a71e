"""The explorer's link, in a real browser (Playwright on Debian's Chromium): the page's address
carries its program in the fragment (#program=..., as TensorFlow Playground keeps its state),
typed or chosen, and opening that address in another tab builds the same graph. (The static
site's the same: tests/test_site_browser.py.)"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

import pytest

from micrograd.expr import parse_program
from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.viz import trace
from tests.conftest import watch_errors

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# typed, not an example: a marker, a function, a power, a second line and characters a URL
# must escape (spaces, '*', ':', '+', '#', newlines)
IN_LINK = "new URLSearchParams(location.hash.slice(1)).get('program')"  # the page's link's program
TYPED = "u = 1.5; v: data = -2.0  # a comment\nw = u*v + tanh(u)\nL = w**2 + 1.0"


def nodes(page: Any) -> list[tuple[str, float | None]]:
    """Every Value box on the page: its name and its exact data (None: not computed yet, before
    a forward pass), in id order."""
    got = page.eval_on_selector_all(
        "#graph-svg g.node.value",
        "els => els.map(g => [g.dataset.id, g.dataset.name, g.dataset.data])",
    )
    ordered = sorted(got, key=lambda n: int(n[0][1:]))
    return [(name, float(data) if data else None) for _, name, data in ordered]


def expected(program: str) -> list[tuple[str, float]]:
    """The graph CPython builds of `program`: its Values' names and data, in the page's order."""
    values = trace(next(reversed(parse_program(program).values())))[0]
    return [(v.label or "", v.data) for v in values]


def built(page: Any, program: str) -> None:
    page.wait_for_function(
        "(n) => document.querySelectorAll('#graph-svg g.node.value').length === n",
        arg=len(expected(program)),
    )


def linked(url: str) -> str | None:
    """The program a page's address carries."""
    fragment = urllib.parse.urlsplit(url).fragment
    return dict(urllib.parse.parse_qsl(fragment)).get("program")


def test_a_link_with_a_typed_program_reopens_it(browser: Any, playground: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(playground)
        page.wait_for_selector("body[data-ready='1']")
        page.get_by_label("Expression", exact=True).fill(TYPED)
        page.get_by_role("button", name="Build graph").click()
        built(page, TYPED)
        page.wait_for_function(f"(p) => {IN_LINK} === p", arg=TYPED)
        link = page.url
        assert linked(link) == TYPED, link
        # another tab (another session: a graph of its own) opened at the link: the same graph
        other = context.new_page()
        other_errors = watch_errors(other)
        other.goto(link)
        other.wait_for_selector("body[data-ready='1']")
        built(other, TYPED)
        assert other.get_by_label("Expression", exact=True).input_value() == TYPED
        assert nodes(other) == nodes(page)
        names = [n for n, _ in nodes(other)]
        want = expected(TYPED)  # CPython's graph: as many Values, the named ones by their names
        assert len(names) == len(want) and {n for n, _ in want if n} <= set(names)

        # a chosen example goes in the link too; a leaf set rewrites its number there
        example = EXAMPLES[1]
        page.get_by_label("Examples").select_option(label=example["title"])
        built(page, example["program"])
        page.wait_for_function(f"(p) => {IN_LINK} === p", arg=example["program"])
        page.get_by_role("button", name=re.compile(r"^Edit a:")).click()
        page.get_by_label("Value of a").fill("5.0")
        page.get_by_label("Value of a").press("Enter")
        edited = example["program"].replace("a = 2.0", "a = 5.0")
        assert edited != example["program"]
        page.wait_for_function(f"(p) => {IN_LINK} === p", arg=edited)

        # another link's fragment in the same tab (typed in the address bar): its graph
        other.evaluate(
            "(p) => { location.hash = new URLSearchParams({program: p}).toString(); }", edited
        )
        other.wait_for_function("(p) => document.getElementById('program').value === p", arg=edited)
        built(other, edited)
        assert dict(nodes(other))["a"] == 5.0
        assert not errors and not other_errors, errors + other_errors
    finally:
        context.close()
