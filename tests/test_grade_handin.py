"""Work handed in as an archive (the browser course's "Download my work": LEARNER.zip): `micrograd
grade` takes it in a class folder as that learner's, unpacked into CLASS_DIR/.handed-in/, and
refuses, in one line and a row of its own, an archive that would write outside its folder or
is too large (counted as it is read: a zip bomb's headers lie), the rest of the class graded."""

from __future__ import annotations

import csv
import pathlib
import stat
import zipfile

import pytest

from micrograd.commands.cli import main
from micrograd.commands.grade import submissions
from micrograd.grading import grade, handin


def _zip(path: pathlib.Path, members: dict[str, bytes], links: tuple[str, ...] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name in links:  # a symbolic link, as zip -y stores one: its target is the data
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, "/etc/passwd")


def _files(root: pathlib.Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


@pytest.mark.parametrize(
    ("members", "links", "outside", "said"),
    [
        ({"../../evil.py": b"x"}, (), True, "'../../evil.py' would land outside its folder"),
        ({"ada/../../evil.py": b"x"}, (), True, "would land outside its folder"),
        ({"/tmp/evil.py": b"x"}, (), True, "'/tmp/evil.py' would land outside its folder"),
        ({"ada\\..\\..\\evil.py": b"x"}, (), True, "would land outside its folder"),
        ({"C:/evil.py": b"x"}, (), True, "would land outside its folder"),
        ({"ada/01.ipynb": NB}, ("ada/my_value.py",), True, "'ada/my_value.py' is a link"),
        (  # 60 MB of zeros, about 60 kB packed: refused as it is read
            {"ada/01.ipynb": NB, "ada/big.bin": bytes(60 * 2**20)},
            (),
            False,
            "'ada/big.bin' is larger than 20 MB",
        ),
        (
            {f"ada/{i}.txt": bytes(15 * 2**20) for i in range(4)},
            (),
            False,
            "its files come to more than 50 MB",
        ),
        ({f"ada/{i}.txt": b"x" for i in range(201)}, (), False, "201 files, more than the 200"),
    ],
    ids=[
        "dotdot",
        "nested-dotdot",
        "absolute",
        "backslash",
        "drive",
        "link",
        "bomb",
        "total",
        "many",
    ],
)
def test_a_hostile_archive_is_refused_and_writes_nothing(
    tmp_path: pathlib.Path,
    members: dict[str, bytes],
    links: tuple[str, ...],
    outside: bool,
    said: str,
) -> None:
    klass = tmp_path / "class"
    archive = klass / "ada.zip"
    _zip(archive, members, links)
    before = _files(tmp_path)
    with pytest.raises(handin.Refused) as caught:
        handin.unpack(archive, klass / handin.UNPACKED)
    assert str(caught.value).startswith(f"{archive}: ") and said in str(caught.value)
    assert "\n" not in str(caught.value) and caught.value.outside is outside
    assert _files(tmp_path) - before <= {f"class/{handin.UNPACKED}"}  # nothing else, anywhere
    if (klass / handin.UNPACKED).exists():  # and no half-unpacked folder left in it
        assert not list((klass / handin.UNPACKED).iterdir())


def test_what_is_not_a_zip_is_refused(tmp_path: pathlib.Path) -> None:
    (tmp_path / "ada.zip").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(handin.Refused, match=r"ada\.zip: not a zip archive"):
        handin.unpack(tmp_path / "ada.zip", tmp_path / handin.UNPACKED)


def test_an_archive_is_its_learner_and_a_new_one_replaces_the_old(tmp_path: pathlib.Path) -> None:
    """The browser's archive (every file in LEARNER/) and a plain one (files at the top) are
    each their learner's, beside a learner's folder; a hostile one is a row, not a stop."""
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "01.ipynb").write_bytes(NB)
    _zip(
        tmp_path / "Bob-Li.zip",
        {
            "Bob-Li/01_derivatives_and_value.ipynb": NB,
            "Bob-Li/my_value.py": b"# bob's",
            "Bob-Li/.ipynb_checkpoints/01-checkpoint.ipynb": NB,
            "__MACOSX/Bob-Li/._01.ipynb": b"",
        },
    )
    _zip(tmp_path / "cy.zip", {"02_backpropagation.ipynb": NB})
    _zip(tmp_path / "eve.zip", {"01.ipynb": NB, "../../../home/evil.py": b"x"})
    refused: list[grade.Row] = []
    got = [
        (pathlib.Path(p).relative_to(tmp_path).as_posix(), who, pathlib.Path(f).name, own)
        for p, who, f, own in submissions([str(tmp_path)], refused)
    ]
    assert got == [
        ("ada/01.ipynb", "ada", "ada", True),
        (".handed-in/Bob-Li/01_derivatives_and_value.ipynb", "Bob-Li", "Bob-Li", True),
        (".handed-in/cy/02_backpropagation.ipynb", "cy", "cy", True),
    ]
    unpacked = tmp_path / handin.UNPACKED
    assert _files(unpacked / "Bob-Li") == {"01_derivatives_and_value.ipynb", "my_value.py"}
    mine = unpacked / "Bob-Li" / "01_derivatives_and_value.ipynb"
    assert grade.inputs(mine, own_folder=True) == {"my_value.py": b"# bob's"}  # his, as run
    (row,) = refused
    assert (row.submission, row.learner, row.result) == (str(tmp_path / "eve.zip"), "eve", "error")
    assert "'../../../home/evil.py' would land outside its folder" in row.detail
    assert row.flag.startswith("tried to reach outside its folder: ")
    assert not (unpacked / "eve").exists() and not (tmp_path.parent / "home").exists()
    # handed in again, changed: the new archive's files alone
    _zip(tmp_path / "Bob-Li.zip", {"Bob-Li/01_derivatives_and_value.ipynb": NB + b" "})
    submissions([str(tmp_path)], [])
    assert _files(unpacked / "Bob-Li") == {"01_derivatives_and_value.ipynb"}
    assert (unpacked / "Bob-Li" / "01_derivatives_and_value.ipynb").read_bytes() == NB + b" "
    assert sorted(p.name for p in unpacked.iterdir()) == ["Bob-Li", "cy"]  # no leftovers
    # a folder and an archive of one name: which is the learner's work is not guessed
    _zip(tmp_path / "ada.zip", {"01.ipynb": NB})
    refused = []
    submissions([str(tmp_path)], refused)
    assert [r.learner for r in refused] == ["ada", "eve"]
    assert "a folder ada is beside it" in refused[0].detail


def test_grade_reports_each_archive_and_each_refusal(tmp_path, monkeypatch, capsys) -> None:
    def fake(
        path, timeout, shared=(), label=None, *, learner="", sandbox=True, slot=0, own_folder=False
    ):
        return [grade.Row(str(path), "01", "slope", "passed", "", learner)]

    monkeypatch.setattr(grade, "grade", fake)
    _zip(tmp_path / "class" / "ada.zip", {"ada/01.ipynb": NB})
    _zip(tmp_path / "class" / "eve.zip", {"/etc/cron.d/evil": b"x"})
    out = tmp_path / "grades.csv"
    assert main(["grade", str(tmp_path / "class"), "--no-sandbox", "--csv", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    refusal = [line for line in err if "refused" in line]
    assert refusal == [
        f"micrograd grade: refused {tmp_path / 'class' / 'eve.zip'}: member '/etc/cron.d/evil' "
        "would land outside its folder"
    ]
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["learner"], r["result"]) for r in rows] == [("ada", "passed"), ("eve", "error")]
    assert rows[0]["submission"] == str(tmp_path / "class" / handin.UNPACKED / "ada" / "01.ipynb")
