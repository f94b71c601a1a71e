"""A data set is declared once (`micrograd.data.DATASETS`) and everything that offers data sets
reads it: the Train view's settings, its points and its options (the page's Dataset menu),
`micrograd demo`; a new data set is one entry, seen everywhere."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from micrograd import data
from micrograd.commands import demo as demo_command
from micrograd.data import DATASETS, TARGET_RANGE
from micrograd.playground.training.train_data import make_data
from micrograd.playground.training.train_settings import Settings
from micrograd.playground.views import Tab
from micrograd.train import demo

ROOT = pathlib.Path(__file__).resolve().parents[1]
STATIC = ROOT / "micrograd" / "playground" / "static"


def test_the_train_views_options_are_the_declarations() -> None:
    options = Tab(jit=False).call("train", "options", {})
    offered = [d for d in DATASETS.values() if d.train_view]
    rows = [[d.name, d.title, d.classes, d.dims, d.size is None] for d in offered]
    assert options["datasets"] == rows
    assert options["fits"] == {d.name: d.losses for d in offered}
    assert {"moons", "spiral3", "lecture", "plane"} <= {d.name for d in offered}
    for d in offered:  # what the view can show: points of the plane (or 3-D), up to 3 colours
        assert d.dims in (2, 3) and d.classes in (0, 2, 3) and d.losses, d.name


def test_the_demo_offers_the_sets_declared_with_a_recipe() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    demo_command.add_demo_command(parser.add_subparsers())
    declared = [k for k, d in DATASETS.items() if d.demo is not None]
    assert list(demo.DATASETS) == declared == ["moons", "circles", "xor", "spiral", "digits"]
    assert parser.parse_args(["demo", "spiral"]).dataset == "spiral"
    with pytest.raises(SystemExit):
        parser.parse_args(["demo", "gauss"])  # a Train view set without a demo recipe
    assert demo.config_for("spiral").n_samples == DATASETS["spiral"].demo["n_samples"]


def test_the_page_names_no_data_set() -> None:
    # The page learns the data sets (and which are fixed or 3-D) from the view's options: no
    # script of the page spells a data set's name.
    names = "|".join(map(re.escape, DATASETS))
    for path in STATIC.rglob("*.js"):
        found = re.findall(rf"""["'`]({names})["'`]""", path.read_text())
        assert not found, (path.name, found)


@pytest.mark.parametrize("name", [k for k, d in DATASETS.items() if d.train_view])
def test_each_train_view_set_is_its_generators_points(name: str) -> None:
    d = DATASETS[name]
    s = Settings.from_dict(
        {"dataset": name, "loss": d.losses[0], "points": 30, "noise": 0.2, "data_seed": 7}
    )
    X, labels = make_data(s)
    Xd, yd = d.make(30, 0.2, seed=7) if d.size is None else d.make()
    assert d.size in (None, len(Xd))
    assert X == Xd and all(len(x) == d.dims for x in X)
    if d.classes == 0:  # real-valued targets, as the generator gives them, within the range
        assert labels == yd and all(-TARGET_RANGE <= t <= TARGET_RANGE for t in labels)
    elif d.classes == 2:  # karpathy's -1/+1 from the generator; the view's class 1 is +1
        assert set(yd) <= {-1, 1} and labels == [int(y > 0) for y in yd]
    else:
        assert labels == yd and set(labels) == set(range(d.classes))


@pytest.mark.parametrize("name", [k for k, d in DATASETS.items() if d.size is not None])
def test_a_fixed_set_declares_its_size_and_what_it_imports(name: str) -> None:
    d = DATASETS[name]
    for module in d.imports:
        pytest.importorskip(module)
    X, y = d.load(n_samples=5, noise=0.5, seed=3)  # a fixed set ignores them
    assert len(X) == len(y) == d.size and all(len(x) == d.dims for x in X)
    assert set(y) == set(range(d.classes)) if d.classes > 2 else set(y) <= {-1, 1}


def test_the_declared_losses_fit_the_targets() -> None:
    moons = DATASETS["moons"].losses
    assert moons[0] == "hinge" and "cross_entropy" not in moons
    assert DATASETS["spiral3"].losses == DATASETS["digits"].losses == ["cross_entropy"]
    assert DATASETS["bumps"].losses == ["mse"]
    with pytest.raises(ValueError, match="Spiral, 3 classes has 3"):
        Settings.from_dict({"dataset": "spiral3", "loss": "hinge"})


def test_the_new_generators_check_their_arguments() -> None:
    for make in (data.spiral3, data.gauss, data.plane, data.bumps):
        with pytest.raises(ValueError, match="n_samples must be a positive int, got 0"):
            make(0)
        with pytest.raises(ValueError, match="noise must be a finite number >= 0"):
            make(10, -1.0)


def recipe() -> tuple[str, str]:
    """CONTRIBUTING.md's new data set, as written there: its generator and its one entry."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Add a data set") :]
    block = section[section.index("```python\n") + 10 : section.index("```\n", 10)]
    generator = block[: block.index("DATASETS")].strip() + "\n\n\n"
    (entry,) = [line + "\n" for line in block.splitlines() if line.strip().startswith("DataSet(")]
    return generator, entry


PROBE = """
import json
from micrograd import data
from micrograd.playground.views import Tab
tab = Tab(jit=False)
options = tab.call("train", "options", {})
meta = tab.call("train", "config", {"dataset": "wave", "points": 40, "data_seed": 5})["meta"]
X, y = data.wave(40, seed=5)
print(json.dumps({"menu": [d for d in options["datasets"] if d[0] == "wave"],
                  "fits": options["fits"].get("wave"),
                  "points": meta["points"] == [[*x, int(c > 0)] for x, c in zip(X, y)]}))
"""


@pytest.mark.slow
def test_a_new_data_set_is_one_entry_seen_by_the_train_view_and_the_demo(
    tmp_path: pathlib.Path,
) -> None:
    shutil.copytree(
        ROOT / "micrograd", tmp_path / "micrograd", ignore=shutil.ignore_patterns("__pycache__")
    )
    source = tmp_path / "micrograd" / "data.py"
    text = source.read_text()
    table = "DATASETS: dict[str, DataSet] = {\n    d.name: d\n    for d in (\n"
    assert text.count(table) == 1
    head, tail = text.split(table)
    generator, entry = recipe()
    source.write_text(head + generator + table + entry + tail)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )

    probe = run("-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    assert seen["menu"] == [["wave", "A sine wave", 2, 2, True]]
    assert seen["fits"] == DATASETS["moons"].losses  # two classes: the losses of one score
    assert seen["points"]  # the view's points are the generator's

    assert "wave" in run("-m", "micrograd", "demo", "--help").stdout
    trained = run(
        "-m", "micrograd", "demo", "wave", "--steps", "3", "--no-progress", "--out", "out"
    )
    assert trained.returncode == 0, trained.stderr
    # the entry's recipe: hidden layers of 8, the rest karpathy's
    assert trained.stdout.startswith("wave: 100 training samples; MLP 2-8-8-1")
    assert (tmp_path / "out" / "decision_boundary.png").exists()
