"""`micrograd graph` as a user runs it (a subprocess: exit status, stdout, stderr, files), and the
expression language behind it (`parse_program`), whose gradients are checked against PyTorch."""

from __future__ import annotations

import math
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from micrograd.engine import Value
from micrograd.expr import ARITY, FUNCTIONS, LANGUAGE, ProgramError, parse_program
from tests.support.lecture import GOLDEN_L
from tests.support.optable import BY_NAME

REPO = pathlib.Path(__file__).resolve().parents[1]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")

LECTURE_L = "a = 2.0; b = -3.0; c = 10.0; e = a*b; d = e + c; f = -2.0; L = d*f"
NEURON = (
    "x1 = 2.0; x2 = 0.0; w1 = -3.0; w2 = 1.0; b = 6.8813735870195432\n"
    "n = x1*w1 + x2*w2 + b\n"
    "o = tanh(n)"
)


def run(
    *args: str, cwd: pathlib.Path | None = None, path: str | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "micrograd", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )


def assert_refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit status 2, one line on stderr (no traceback) that contains `words`, nothing on stdout."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


# ------------------------------------------------------------------------------------ the command


def test_text_view_is_the_default() -> None:
    result = run("graph", LECTURE_L)
    assert result.returncode == 0, result.stderr
    assert result.stdout == GOLDEN_L
    assert result.stderr == ""


def test_program_from_stdin_with_newlines() -> None:
    result = run("graph", "-", stdin=LECTURE_L.replace("; ", "\n"))
    assert result.returncode == 0 and result.stdout == GOLDEN_L


def test_help_documents_the_language_and_outputs() -> None:
    result = run("graph", "--help")
    assert result.returncode == 0
    for word in ("EXPR", "--text", "-o FILE", ".svg", ".png", ".dot", "--max-nodes", "tanh"):
        assert word in result.stdout
    top = run("--help")
    assert top.returncode == 0 and "graph" in top.stdout


@needs_dot
def test_svg_output_holds_labels_and_values(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "neuron.svg"
    result = run("graph", NEURON, "-o", str(out), "--text")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("o  | data 0.7071 | grad 1.0000 | prev { tanh [n] }")
    root = ET.parse(out).getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    # the lecture's numbers: o = tanh(n) = 0.7071, do/dn = 0.5, dx1 = -1.5, dw1 = 1, dw2 = 0
    for expected in ("o", "data 0.7071", "n", "data 0.8814", "grad 0.5000", "x1", "grad -1.5000"):
        assert expected in texts, expected
    assert texts.count("tanh") == 1 and texts.count("*") == 2 and texts.count("+") == 2


@needs_dot
def test_png_output(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "g.png"
    result = run("graph", LECTURE_L, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # with -o, the text view only on --text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dot_and_txt_outputs_need_no_graphviz_program(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    result = run("graph", LECTURE_L, "-o", str(tmp_path / "g.dot"), path=str(empty))
    assert result.returncode == 0, result.stderr
    source = (tmp_path / "g.dot").read_text()
    assert source.startswith("digraph {")
    assert '"{ a | data 2.0000 | grad 6.0000 }"' in source
    result = run("graph", LECTURE_L, "-o", str(tmp_path / "g.txt"), path=str(empty))
    assert result.returncode == 0 and (tmp_path / "g.txt").read_text() == GOLDEN_L


def test_a_dot_file_without_the_graphviz_package_is_one_line_naming_the_extra(
    tmp_path: pathlib.Path,
) -> None:
    out = tmp_path / "g.dot"
    hide = "import runpy, sys; sys.modules['graphviz'] = None; sys.argv[0] = 'micrograd'; "
    hide += "runpy.run_module('micrograd', run_name='__main__')"
    result = subprocess.run(
        [sys.executable, "-c", hide, "graph", LECTURE_L, "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert f"writing {str(out)!r}" in result.stderr
    assert 'pip install "micrograd-plus[viz]"' in result.stderr
    assert not out.exists()


def test_missing_dot_program_is_one_line_naming_the_package(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "g.svg"
    result = run("graph", LECTURE_L, "-o", str(out), path=str(tmp_path))
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert "apt install graphviz" in result.stderr and "brew install graphviz" in result.stderr
    assert not out.exists()


def test_unknown_extension_is_refused(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "g.jpgx"
    assert_refused(run("graph", LECTURE_L, "-o", str(out)), "g.jpgx", ".svg")
    assert not out.exists()


def test_unwritable_output_is_one_line(tmp_path: pathlib.Path) -> None:
    result = run("graph", LECTURE_L, "-o", str(tmp_path / "no" / "such" / "dir.dot"))
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert "cannot write" in result.stderr


@pytest.mark.parametrize(
    "program, words",
    [
        ("__import__('os')", ["__import__"]),
        ("x = __import__('os').system('touch pwned')", []),
        ("a = 1.0; x = a.b", ["attribute access", "a.b"]),
        ("open('x')", ["open()"]),
        ("x = open('x', 'w')", ["open()"]),
        ("[1][0]", ["indexing"]),
        ("lambda: 1", ["lambda"]),
        ("import os", ["import"]),
        ("from os import system", ["import"]),
        ("x = 'rm -rf'", ["string"]),
        ("x = y + 1", ["'y'", "before it is assigned"]),
        ("x = 2 // 3", ["//"]),
        ("x = (1).real", ["attribute access"]),
        ("x = tanh(1.0, 2.0)", ["one argument"]),
        ("tanh = 2.0", ["tanh"]),
        ("x = 1.0\ny = [x for x in 'ab']", ["line 2", "comprehension"]),
        ("x = 1 +", ["syntax error"]),
        ("", ["assigns nothing"]),
        ("x = 1.0; x", ["expected an assignment"]),
    ],
)
def test_unsafe_or_invalid_programs_are_refused(
    program: str, words: list[str], tmp_path: pathlib.Path
) -> None:
    assert_refused(run("graph", program, cwd=tmp_path), "line" if program else "", *words)
    assert list(tmp_path.iterdir()) == []  # nothing was opened, touched or written


@pytest.mark.parametrize(
    "program, words",
    [
        ("a = -1.0; b = log(a)", ["line 1", "log", "-1.0"]),
        ("a = 1.0\nb = a / 0", ["line 2", "division by zero"]),
        ("b = 1 / 0", ["division by zero"]),
        ("a = -8.0; b = a ** 0.5", ["pow", "-8.0"]),
        ("a = 1000.0; b = exp(a)", ["exp", "overflows"]),
        ("a = 10 ** 400", ["overflows"]),
        ("x = 1e308; y = x * 10", ["line 1", "multiplication: 1e+308 * 10.0 overflows"]),
        ("x = 1e-320; y = 1 / x", ["line 1", "division: 1.0 / 1e-320 overflows"]),
    ],
)
def test_engine_errors_are_one_line(program: str, words: list[str]) -> None:
    assert_refused(run("graph", program), *words)


def long_program(statements: int) -> str:
    # each `x + 1.0` adds two nodes: the sum and the constant 1
    lines = ["x0 = 0.0"] + [f"x{i + 1} = x{i} + 1.0" for i in range(statements)]
    return "\n".join(lines)


@pytest.mark.slow
def test_too_large_graph_is_refused_then_allowed_with_max_nodes(tmp_path: pathlib.Path) -> None:
    program = long_program(1200)  # 2,401 nodes
    out = tmp_path / "big.dot"
    assert_refused(run("graph", program, "-o", str(out)), "more than 2000 nodes", "--max-nodes")
    assert not out.exists()
    result = run("graph", program, "-o", str(out), "--max-nodes", "3000")
    assert result.returncode == 0, result.stderr
    assert out.read_text().count("shape=record") == 2401
    text = run("graph", program).stdout
    assert text.splitlines()[-1].startswith("… 2201 more nodes")  # 200 shown by default
    assert_refused(run("graph", program, "--max-nodes", "0"), "--max-nodes")


def test_bad_option_is_one_line() -> None:
    result = run("graph", LECTURE_L, "--rankdir", "sideways")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1


# -------------------------------------------------------------------------- the language itself


def test_names_become_labels_and_the_last_assignment_is_last() -> None:
    names = parse_program(LECTURE_L)
    assert list(names) == ["a", "b", "c", "e", "d", "f", "L"]
    assert all(v.label == k for k, v in names.items())
    assert names["L"].data == -8.0
    assert names["e"]._prev == (names["a"], names["b"])
    again = parse_program("a = 1.0; b = a; a = 2.0")
    assert list(again) == ["b", "a"] and again["b"].label == "a"  # b = a keeps a's label


def test_numbers_fold_and_constant_exponents_stay_numbers() -> None:
    names = parse_program("x = 3.0; y = x ** 2; z = x * -(2 * 3)")
    assert names["y"]._op == "**2"
    assert names["z"]._op == "*" and names["z"]._prev[1].data == -6.0
    assert parse_program("k = 2 ** 10")["k"].data == 1024.0


def test_a_500_term_sum_evaluates() -> None:
    program = "x = 0.5; y = " + " + ".join(["x"] * 500)
    y = parse_program(program)["y"]
    y.backward()
    assert y.data == 250.0 and parse_program(program)["x"].data == 0.5


def test_program_errors_are_value_errors_naming_the_line() -> None:
    with pytest.raises(ProgramError, match="line 3: .*attribute access"):
        parse_program("a = 1.0\nb = 2.0\nc = a.real")
    assert issubclass(ProgramError, ValueError)
    with pytest.raises(TypeError):
        parse_program(b"a = 1.0")  # type: ignore[arg-type]


def test_gradients_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    program = (
        "x = 0.7; y = -1.3; z = 2.5\n"
        "u = tanh(x*y) + exp(x/2) - log(x**2 + 1)\n"
        "v = relu(y + 2) * sigmoid(x - y) + z ** x - -y / z\n"
        "out = u * v + (1 - u) / (v + 3)"
    )
    names = parse_program(program)
    out = names["out"]
    out.backward()

    x, y, z = (torch.tensor(t, dtype=torch.float64, requires_grad=True) for t in (0.7, -1.3, 2.5))
    u = torch.tanh(x * y) + torch.exp(x / 2) - torch.log(x**2 + 1)
    v = torch.relu(y + 2) * torch.sigmoid(x - y) + z**x - -y / z
    t_out = u * v + (1 - u) / (v + 3)
    t_out.backward()

    assert math.isclose(out.data, t_out.item(), rel_tol=1e-12)
    for name, tensor in (("x", x), ("y", y), ("z", z)):
        assert math.isclose(names[name].grad, tensor.grad.item(), rel_tol=1e-12), name


def test_values_are_values() -> None:
    assert all(isinstance(v, Value) for v in parse_program("a = 1; b = tanh(2)").values())


def test_the_readme_graph_is_the_lecture_neuron() -> None:
    # docs/graph.svg is written by the command shown in the README; it must show the lecture's
    # numbers: o = tanh(n) = 0.7071, dx1 = -1.5, dw1 = 1.0, dx2 = 0.5, dw2 = 0.
    root = ET.parse(REPO / "docs" / "graph.svg").getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for expected in ("o", "data 0.7071", "grad -1.5000", "w1", "grad 1.0000", "tanh", "x1w1x2w2"):
        assert expected in texts, expected


def test_an_expression_too_deep_for_pythons_parser_is_one_line() -> None:
    program = "x = 0.5; y = " + " + ".join(["x"] * 5000)
    assert_refused(run("graph", "-", stdin=program), "nested too deeply", "split")


def test_version_and_overflowing_literal() -> None:
    import micrograd

    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"micrograd {micrograd.__version__}"
    r = run("graph", "x = 1e400")
    assert r.returncode == 2 and "too large for a float" in r.stderr


def test_text_view_tells_constants_from_intermediate_results() -> None:
    # The example: the constant 4 and the intermediate x*x (also 4) were both "data 4".
    result = run("graph", "x = 2; y = x*x*3 + 4")
    assert result.returncode == 0
    lines = [line for line in result.stdout.splitlines() if " | " in line]
    assert lines[0].startswith("y  | data 16.0000") and "prev { + [t1 c1] }" in lines[0]
    fours = [line for line in lines if "data 4.0000" in line]
    assert [line.split(" | ")[0] for line in fours] == ["c1", "t2"]
    assert "prev { * [x x] }" in fours[1]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_of_the_language_matches_pytorch(name: str) -> None:
    # FUNCTIONS comes from the engine's registry, each taking as many arguments as its op declares
    # (ARITY); the op table row of the same name is the truth (test_engine checks that every
    # function has one).
    torch = pytest.importorskip("torch")
    op, n = BY_NAME[name], ARITY[name]
    for start in (0.37, 0.89):
        # distinct points in the row's range: x1, x2, ... spread over it
        xs = [op.low + ((start + 0.29 * i) % 1.0) * (op.high - op.low) for i in range(n)]
        assigns = "; ".join(f"x{i} = {x!r}" for i, x in enumerate(xs))
        args = ", ".join(f"x{i} * 1.5" for i in range(n))
        names = parse_program(f"{assigns}; y = {name}({args})")
        names["y"].backward()
        ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
        ty = op.torch(*(t * 1.5 for t in ts))
        ty.backward()
        assert math.isclose(names["y"].data, ty.item(), rel_tol=1e-12), (name, xs)
        for i, t in enumerate(ts):
            assert math.isclose(names[f"x{i}"].grad, t.grad.item(), rel_tol=1e-12), (name, xs)
    assert name in LANGUAGE  # the help and error texts list it


def test_a_function_takes_as_many_arguments_as_its_op_declares() -> None:
    with pytest.raises(ProgramError, match=r"maximum\(\) takes exactly 2 arguments"):
        parse_program("x = 1.0; y = maximum(x)")
    with pytest.raises(ProgramError, match=r"tanh\(\) takes exactly one argument"):
        parse_program("x = 1.0; y = tanh(x, x)")
    names = parse_program("a = 2.0; b = 2.0; m = maximum(a, b)")  # a tie: half the slope each
    names["m"].backward()
    assert (names["a"].grad, names["b"].grad) == (0.5, 0.5)


def test_a_reassigned_name_labels_each_new_node_apart() -> None:
    from micrograd.expr import parse_program

    # with subscripts, never primes (x' reads as a derivative)
    names = parse_program("x = 2.0; x = x*3; x = x + 1; y = x*x")
    x3 = names["x"]
    assert (x3.label, x3.data) == ("x₃", 7.0)
    x2 = x3._prev[0]
    assert (x2.label, x2.data) == ("x₂", 6.0)
    assert (x2._prev[0].label, x2._prev[0].data) == ("x", 2.0)
    assert names["y"].label == "y"


@pytest.mark.parametrize(
    "program, refused",
    [
        ("x = 1.0\ny = " + "+".join(["x"] * 402), True),  # 401 operators: past the budget
        ("x = 1.0\ny = " + "+".join(["x"] * 401), False),  # 400: within it
        ("y = " + "(" * 101 + "1.0" + ")" * 101, True),  # 101 bracket levels, 4 each
        ("y = " + "(" * 100 + "1.0" + ")" * 100, False),
        ("y = " + "-" * 401 + "1.0", True),  # unary minus nests too
        # keywords nest as operators do (900 chained `not` crashed the site's Python)
        ("y = " + "not " * 401 + "1.0", True),
        ("y = " + "not " * 399 + "1.0", False),  # (refused after parsing: `not` is no op here)
        ("y = " + "lambda: " * 401 + "1.0", True),
        ("y = " + "1.0 if 1.0 else " * 201 + "1.0", True),
        ("y = " + "x and " * 401 + "x", True),
        # a call or subscript of a call or subscript: `a[0][0]...` (1,600 crashed the site)
        ("y = a" + "[0]" * 401, True),
        ("y = f" + "()" * 401, True),
        ("y = " + "tanh(" * 99 + "1.0" + ")" * 99, False),  # 99 nested calls: brackets
        # each level of indentation costs what a bracket does
        (
            "".join("    " * i + "if x:\n" for i in range(99))
            + "    " * 99
            + "y = "
            + "+".join(["x"] * 10),
            True,
        ),
        (
            "x = 1.0\n" + "".join(f"y{i} = " + "+".join(["x"] * 300) + "\n" for i in range(5)),
            False,
        ),  # the budget is per statement, not per program
        ("x = 1.0; y = " + "+".join(["x"] * 300) + "; z = " + "+".join(["x"] * 300), False),
    ],
)
def test_in_a_browser_a_statement_too_deep_for_its_stack_is_refused_first(
    monkeypatch: pytest.MonkeyPatch, program: str, refused: bool
) -> None:
    # On Pyodide, nesting.BUDGET is 400 (a deeper parse exhausts the browser's stack and kills
    # Python; tests/test_site_browser.py sends such programs to the real site).
    from micrograd import expr
    from micrograd.expr import nesting

    monkeypatch.setattr(nesting, "BUDGET", 400)
    if not refused:
        try:
            assert parse_program(program)
        except expr.ProgramError as exc:  # refused after parsing, as on CPython (`not`: no op)
            assert "nested too deeply" not in str(exc)
        return
    with pytest.raises(expr.ProgramError) as info:
        parse_program(program)
    line = program.count("\n") + 1
    assert str(info.value) == (
        f"line {line}: an expression is nested too deeply for Python in a browser (about 400 "
        f"terms in one chain, or 100 brackets); split it over several assignments"
    )


def test_line_breaks_inside_brackets_do_not_hide_a_chain() -> None:
    from micrograd.expr import nesting

    # two bracket levels (8) and the chained `[`s after the first: the 394th is past 400
    chained = "y = (a" + "[0]\n" * 401 + ")"
    assert (nesting.too_deep(chained, 400) or "").startswith("line 394: an expression is nested")
    assert nesting.too_deep("y = (a" + "[0]\n" * 300 + ")", 400) is None


def test_on_cpython_only_the_parser_limits_nesting() -> None:
    from micrograd.expr import nesting

    assert nesting.BUDGET is None  # (sys.platform is "emscripten" on Pyodide only)
    assert parse_program("x = 1.0\ny = " + "+".join(["x"] * 1000))["y"].data == 1000.0
