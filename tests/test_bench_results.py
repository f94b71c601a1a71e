"""benchmarks/RESULTS.md is written by the benchmarks, each script its own section between two
markers (benchmarks/results.py): a run replaces its section and keeps the rest of the file, a
failed run writes nothing, and every script that records a section has one in the file."""

from __future__ import annotations

import ast
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import results  # noqa: E402  (benchmarks/results.py, as the scripts import it)

FILE = """# Benchmark results

## One

<!-- bench_one -->
old figures of one
<!-- /bench_one -->

Notes on one, kept by hand.

## Two

<!-- bench_two -->
old figures of two
<!-- /bench_two -->
"""


def test_a_section_is_replaced_and_the_rest_kept() -> None:
    new = results.replace_section(FILE, "bench_one", "new figures\nof one")
    assert new == FILE.replace("old figures of one", "new figures\nof one")
    assert results.replace_section(new, "bench_one", "old figures of one") == FILE


def test_a_section_the_file_lacks_is_added_at_its_end() -> None:
    new = results.replace_section(FILE, "bench_three", "three's figures")
    assert new == FILE + "\n<!-- bench_three -->\nthree's figures\n<!-- /bench_three -->\n"


@pytest.mark.parametrize(
    "broken",
    [
        FILE.replace("<!-- /bench_one -->\n", ""),  # its end lost
        FILE + "\n<!-- bench_one -->\n",  # twice begun
        FILE.replace("<!-- bench_one -->", "@")
        .replace("<!-- /bench_one -->", "<!-- bench_one -->")
        .replace("@", "<!-- /bench_one -->"),  # end before begin
    ],
)
def test_a_broken_section_is_an_error_naming_it(broken: str) -> None:
    with pytest.raises(ValueError, match="section 'bench_one' needs one <!-- bench_one -->"):
        results.replace_section(broken, "bench_one", "x")


def test_a_run_writes_what_it_printed_under_its_command_date_load_and_python(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "RESULTS.md"
    path.write_text(FILE)
    monkeypatch.setattr(sys, "argv", [str(BENCH / "bench_two.py"), "--steps", "5"])
    monkeypatch.delenv("MICROGRAD_BENCH_NO_WRITE", raising=False)

    def main() -> int:
        print("| row | 1.5 ms |")
        return 0

    assert results.recorded("bench_two", main, path) == 0
    assert capsys.readouterr().out == "| row | 1.5 ms |\n"  # printed as before
    text = path.read_text()
    assert text.startswith(FILE.split("<!-- bench_two -->")[0])  # the rest kept
    section = text.split("<!-- bench_two -->\n", 1)[1].split("\n<!-- /bench_two -->", 1)[0]
    head, body = section.split("\n\n", 1)
    assert re.fullmatch(
        r"Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC with `python benchmarks/bench_two\.py --steps 5`; "
        r"Python 3\.\d+\.\d+\S*, \d+ cores, load average at start .+\.",
        head,
    ), head
    assert body == "```text\n| row | 1.5 ms |\n```"
    assert not list(tmp_path.glob(".micrograd-*"))  # written atomically: no temporary left


def test_a_failed_or_smoke_run_writes_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "RESULTS.md"
    path.write_text(FILE)
    monkeypatch.setattr(sys, "argv", [str(BENCH / "bench_one.py")])
    assert results.recorded("bench_one", lambda: print("half") or 1, path) == 1
    monkeypatch.setenv("MICROGRAD_BENCH_NO_WRITE", "1")
    assert results.recorded("bench_one", lambda: print("smoke") or 0, path) == 0
    assert path.read_text() == FILE


def recorded_sections() -> dict[str, str]:
    """Each benchmark script that records a section: its file, by the section's name (read from
    its `recorded("name", main)` call)."""
    found = {}
    for path in sorted(BENCH.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "recorded":
                # a name, or `"a_gpt" if "--gpt" in sys.argv else "a"` (chained: any depth)
                todo = [node.args[0]]
                while todo:
                    each = todo.pop()
                    if isinstance(each, ast.IfExp):
                        todo += [each.body, each.orelse]
                    else:
                        found[each.value] = path.name
    return found


def test_every_benchmark_has_its_section_in_results_and_make_bench_runs_it() -> None:
    sections = recorded_sections()
    assert sections.keys() >= {"bench_engine", "bench_grade", "bench_course", "bench_site"}
    text = (BENCH / "RESULTS.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    bench = re.search(r"^BENCH \?=(.*?)\n(?!\t)", makefile, flags=re.M | re.S).group(1)
    for name in [*sections, "run"]:
        begin, end = results.markers(name)
        assert text.count(begin) == text.count(end) == 1, name
        assert text.index(begin) < text.index(end), name
        assert name in bench.split(), f"make bench does not run {name}"
    # run.py writes its table as section `run`, through the same module
    tree = ast.parse((BENCH / "run.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert any(getattr(n.func, "id", None) == "write_section" for n in calls)


def test_bench_course_counts_a_first_visit_as_a_static_host_sends_it(tmp_path) -> None:
    """Text gzipped (level 6), a file compressed already (the kernel's saved start, a wheel)
    as it is: the bytes over the wire beside the bytes on disk."""
    import gzip

    import bench_course

    text = tmp_path / "app.js"
    text.write_text("const a = 1;\n" * 1000)
    packed = tmp_path / "kernel-memory.gz"
    packed.write_bytes(gzip.compress(b"x" * 5000))
    disk, wire, largest = bench_course.over_the_wire([text, packed])
    assert disk == 13_000 + packed.stat().st_size
    assert wire == len(gzip.compress(text.read_bytes(), 6)) + packed.stat().st_size
    assert sorted(largest, reverse=True) == largest and len(largest) == 2
