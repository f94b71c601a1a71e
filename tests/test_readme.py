"""The README's Python examples run as written (they are a contract with the reader)."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
@pytest.mark.slow
def test_readme_python_block_runs(code: str) -> None:
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})


def test_readme_quickstart_is_two_make_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_readme_text_view_is_what_render_text_prints() -> None:
    from tests.support.lecture import GOLDEN_L

    assert f"```text\n{GOLDEN_L}```" in README.read_text()
