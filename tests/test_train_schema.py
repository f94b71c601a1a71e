"""The Train view's settings are declared once, in Python (`Settings`), and the page is told them
(`options()["settings"]`, on every transport): the page's URL and boxes round-trip through
`Settings.from_dict`, train.html has a control for each, and train-controls.js keeps no list of
setting names of its own (read from its syntax tree, by the espree ESLint parses with)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from micrograd.playground.training.train_settings import KINDS, Settings, schema
from micrograd.playground.views import Tab

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "micrograd" / "playground" / "static"


def page_text(kind: str, value: object) -> str:
    """A setting as the page writes it in its URL and boxes (train-controls.js's writeUrl)."""
    if kind == "list":
        return ",".join(str(v) for v in value)  # type: ignore[attr-defined]
    if kind == "flag":
        return "true" if value else "false"
    return str(value)


def test_the_schema_is_the_settings_dataclass():
    assert [f["name"] for f in schema()] == [f.name for f in dataclasses.fields(Settings)]
    assert {f["kind"] for f in schema()} <= set(KINDS)
    kinds = {f["name"]: f["kind"] for f in schema()}
    assert kinds["hidden"] == kinds["features"] == "list"
    assert kinds["zero_grad"] == "flag" and kinds["added"] == "points"
    assert kinds["lr"] == "number" and kinds["seed"] == "whole" and kinds["loss"] == "choice"


@pytest.mark.parametrize(
    "settings",
    [
        Settings(),
        Settings(
            dataset="circles",
            points=60,
            noise=0.25,
            hidden=(4, 3, 2),
            activation="relu",
            loss="mse",
            optimizer="adam",
            lr=0.5,
            momentum=0.5,
            l2=0.001,
            l1=0.002,
            batch=16,
            seed=7,
            zero_grad=False,
            data_seed=99,
            features=("x1", "x2sq", "sinx1"),
            test=0.2,
        ),
    ],
)
def test_the_pages_text_of_every_setting_reads_back_the_same(settings: Settings):
    d = settings.to_dict()
    text = {
        f["name"]: page_text(f["kind"], d[f["name"]]) for f in schema() if f["kind"] != "points"
    }
    assert Settings.from_dict(text) == settings


def test_every_transport_is_sent_the_schema():
    # the server, the widget's kernel and the site's worker all answer through a Tab's views
    for jit in (False, True):
        options = Tab(jit=jit).call("train", "options", {})
        assert json.loads(json.dumps(options["settings"])) == schema()


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(v for k, v in attrs if k == "id" and v)


def test_train_html_has_a_control_for_every_setting_with_a_box():
    parser = _Ids()
    parser.feed((STATIC / "train.html").read_text(encoding="utf-8"))
    boxed = {f["name"] for f in schema() if f["kind"] != "points"}
    assert boxed - parser.ids == set()


# Every array literal of a JavaScript file whose elements are all strings, by espree.
_ARRAYS = """
const espree = require(process.argv[1]);
const src = require("fs").readFileSync(0, "utf8");
const ast = espree.parse(src, { ecmaVersion: "latest", sourceType: "module" });
const found = [];
(function walk(node) {
  if (!node || typeof node.type !== "string") return;
  if (node.type === "ArrayExpression" && node.elements.length &&
      node.elements.every((e) => e && e.type === "Literal" && typeof e.value === "string")) {
    found.push(node.elements.map((e) => e.value));
  }
  for (const key of Object.keys(node)) {
    const v = node[key];
    if (Array.isArray(v)) v.forEach(walk); else if (v && typeof v.type === "string") walk(v);
  }
})(ast);
process.stdout.write(JSON.stringify(found));
"""


def string_arrays(path: Path) -> list[list[str]]:
    node = shutil.which("node") or shutil.which("nodejs")
    espree = ROOT / "node_modules" / "espree"
    if node is None or not espree.exists():
        pytest.skip("needs Node.js and espree (node_modules: make test installs them)")
    done = subprocess.run(
        [node, "-e", _ARRAYS, str(espree)],
        input=path.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_reader_finds_a_list_of_settings(tmp_path: Path):
    # the old page's copy, as it was written: the reader must see such a list
    old = 'const FIELDS = ["dataset", "points", "noise"];\nconst LISTS = ["hidden", "features"];\n'
    probe = tmp_path / "probe.js"
    probe.write_text(old, encoding="utf-8")
    assert string_arrays(probe) == [["dataset", "points", "noise"], ["hidden", "features"]]


def test_no_javascript_module_keeps_its_own_list_of_settings():
    names = {f["name"] for f in schema()}
    for path in sorted(STATIC.rglob("*.js")):
        copies = [a for a in string_arrays(path) if len(set(a) & names) >= 2]
        assert copies == [], f"{path.name} lists settings of its own: {copies}"
