"""micrograd.viz: trace, draw_dot (DOT source and rendered SVG) and the text view.

Exact values come from the lecture's examples (seeds 002/003): L = (a*b + c)*f and the tanh neuron.
"""

from __future__ import annotations

import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from micrograd.engine import Value
from micrograd.nn import MLP, Neuron
from micrograd.viz import DotNotFoundError, draw_dot, render_text, trace
from tests.support.lecture import GOLDEN_L, build_L

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")
SVG = "{http://www.w3.org/2000/svg}"


def lecture_L() -> tuple[Value, dict[str, Value]]:
    nodes = build_L()
    nodes[-1].backward()
    return nodes[-1], dict(zip("abcdefL", nodes))


def lecture_neuron() -> Value:
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    o.backward()
    return o


def chain(length: int) -> Value:
    v = Value(1.0, label="x")
    for _ in range(length):
        v = v + 1.0
    return v


def svg_texts(svg: bytes) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text")]


# ------------------------------------------------------------------------------------------ trace


def test_trace_lists_nodes_breadth_first_and_edges_child_to_parent() -> None:
    L, v = lecture_L()
    nodes, edges = trace(L)
    assert [n.label for n in nodes] == ["L", "d", "f", "e", "c", "a", "b"]
    assert [(c.label, p.label) for c, p in edges] == [
        ("d", "L"),
        ("f", "L"),
        ("e", "d"),
        ("c", "d"),
        ("a", "e"),
        ("b", "e"),
    ]


def test_trace_keeps_a_repeated_operand_once_as_node_twice_as_edge() -> None:
    a = Value(3.0, label="a")
    y = a * a
    nodes, edges = trace(y)
    assert nodes == [y, a]
    assert edges == [(a, y), (a, y)]


def test_trace_refuses_over_max_nodes_and_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="more than 10 nodes"):
        trace(chain(50), max_nodes=10)
    with pytest.raises(TypeError, match="trace: root must be a Value"):
        trace(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_nodes"):
        trace(Value(1.0), max_nodes=0)


@pytest.mark.slow
def test_trace_is_iterative_on_a_deep_graph() -> None:
    nodes, edges = trace(chain(100_000))
    assert len(nodes) == 200_001  # each `+ 1.0` adds the sum and a constant leaf
    assert len(edges) == 200_000


# ------------------------------------------------------------------------------------ draw_dot


def test_draw_dot_returns_a_digraph_with_lecture_records() -> None:
    graphviz = pytest.importorskip("graphviz")
    L, _ = lecture_L()
    dot = draw_dot(L)
    assert isinstance(dot, graphviz.Digraph)
    assert dot.format == "svg"
    src = dot.source
    assert "rankdir=LR" in src
    for record in (
        "{ L | data -8.0000 | grad 1.0000 }",
        "{ d | data 4.0000 | grad -2.0000 }",
        "{ f | data -2.0000 | grad 4.0000 }",
        "{ e | data -6.0000 | grad -2.0000 }",
        "{ c | data 10.0000 | grad -2.0000 }",
        "{ a | data 2.0000 | grad 6.0000 }",
        "{ b | data -3.0000 | grad -4.0000 }",
    ):
        assert f'label="{record}" shape=record' in src
    # three op nodes, each between its operands and its result
    assert src.count("shape=ellipse") == 3
    assert "v0op -> v0" in src and "v1 -> v0op" in src and "v2 -> v0op" in src
    assert "rankdir=TB" in draw_dot(L, rankdir="TB").source


def test_draw_dot_is_deterministic_and_does_not_use_object_ids() -> None:
    pytest.importorskip("graphviz")
    first, _ = lecture_L()
    second, _ = lecture_L()
    assert draw_dot(first).source == draw_dot(second).source
    assert str(id(first)) not in draw_dot(first).source


def test_draw_dot_shows_a_fused_neuron_as_one_op_node() -> None:
    pytest.importorskip("graphviz")
    neuron = Neuron(3, activation="tanh", fused=True)
    out = neuron([1.0, 2.0, 3.0])
    src = draw_dot(out).source
    assert src.count('label="w·x+b"') == 1
    assert src.count("shape=ellipse") == 2  # w·x+b and tanh
    assert src.count("-> v1op") == 7  # 3 weights, 3 inputs and the bias feed the one dot node


def test_draw_dot_escapes_record_syntax_in_labels() -> None:
    pytest.importorskip("graphviz")
    v = Value(1.0, label="{a|b}<c>")
    assert "\\{a\\|b\\}\\<c\\>" in draw_dot(v).source


@needs_dot
def test_rendered_svg_holds_labels_and_values() -> None:
    o = lecture_neuron()
    texts = svg_texts(draw_dot(o).pipe("svg"))
    for expected in (
        "o",
        "data 0.7071",
        "grad 1.0000",
        "n",
        "data 0.8814",
        "grad 0.5000",
        "x1",
        "grad -1.5000",
        "w1",
        "x2",
        "w2",
        "grad 0.0000",
        "tanh",
        "*",
        "+",
    ):
        assert expected in texts, expected
    root = ET.fromstring(draw_dot(o).pipe("svg"))
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    assert len(groups) == 10 + 5  # ten Values, five ops


@needs_dot
def test_draw_dot_renders_an_mlp() -> None:
    net = MLP(3, [4, 4, 1])
    out = net([1.0, -2.0, 0.5])
    out.backward()
    texts = svg_texts(draw_dot(out).pipe("svg"))
    assert texts.count("w·x+b") == 9 and texts.count("ReLU") == 8


@pytest.mark.slow
def test_draw_dot_refuses_a_large_graph_and_says_how_to_raise_the_limit() -> None:
    pytest.importorskip("graphviz")
    big = chain(100_000)  # 200,001 nodes: refused after counting 2,001 of them
    with pytest.raises(ValueError, match=r"more than 2000 nodes.*max_nodes="):
        draw_dot(big)
    with pytest.raises(ValueError, match="more than 100 nodes"):
        draw_dot(chain(100), max_nodes=100)
    assert draw_dot(chain(100), max_nodes=201).source.count("shape=record") == 201


def test_draw_dot_checks_its_arguments() -> None:
    pytest.importorskip("graphviz")
    with pytest.raises(TypeError, match="draw_dot: root must be a Value"):
        draw_dot([Value(1.0)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rankdir"):
        draw_dot(Value(1.0), rankdir="sideways")
    with pytest.raises(ValueError, match="max_nodes"):
        draw_dot(Value(1.0), max_nodes=-5)


def test_missing_dot_program_names_the_os_package(monkeypatch, tmp_path) -> None:
    pytest.importorskip("graphviz")
    L, _ = lecture_L()
    dot = draw_dot(L)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no `dot` anywhere
    for render in (lambda: dot.pipe(), lambda: dot.render(tmp_path / "g"), dot._repr_mimebundle_):
        with pytest.raises(DotNotFoundError) as info:
            render()
        message = str(info.value)
        assert "apt install graphviz" in message and "brew install graphviz" in message
        assert isinstance(info.value, RuntimeError)
    assert "{ L | data -8.0000 | grad 1.0000 }" in dot.source  # the DOT text needs no program


def test_without_dot_the_builtin_layout_draws_an_svg_jupyter_shows(monkeypatch, capsys) -> None:
    # No `dot` program: the same records and ops, laid out by the playground's layered layout,
    # as an SVG (Jupyter shows _repr_svg_ inline), and one line, once, on getting Graphviz's.
    import xml.etree.ElementTree as ET

    from micrograd import viz

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(viz, "_SAID", [])
    L, _ = lecture_L()
    picture = draw_dot(L)
    draw_dot(L)
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "apt install graphviz" in said[0] and "built-in layout" in said[0]
    svg = picture._repr_svg_()
    root = ET.fromstring(svg)  # well-formed
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for field in ("L", "data -8.0000", "grad 1.0000", "a", "data 2.0000", "grad 6.0000", "*", "+"):
        assert field in texts, field
    assert len(list(root.iter("{http://www.w3.org/2000/svg}rect"))) == 7  # a, b, c, d, e, f, L
    assert len(list(root.iter("{http://www.w3.org/2000/svg}ellipse"))) == 3  # *, +, *
    assert len(list(root.iter("{http://www.w3.org/2000/svg}path"))) == 1 + 9  # arrow + edges
    if picture.source is not None:  # the DOT text, with the graphviz Python package
        assert "{ L | data -8.0000 | grad 1.0000 }" in picture.source
    with pytest.raises(DotNotFoundError, match="apt install graphviz"):
        picture.pipe(format="png")  # other formats need Graphviz


def test_without_the_graphviz_package_the_builtin_layout_draws_too(monkeypatch, capsys) -> None:
    from micrograd import viz

    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    monkeypatch.setattr(viz, "_SAID", [])
    picture = draw_dot(Value(1.0, label="x"))
    assert "data 1.0000" in picture.svg  # its own layout
    assert 'pip install "micrograd-plus[viz]"' in capsys.readouterr().err
    # Graphviz's DOT text cannot be had without the package: one line naming the extra, not None
    with pytest.raises(ImportError) as raised:
        picture.source[:40]  # noqa: B018  (the README's example)
    message = str(raised.value)
    assert 'pip install "micrograd-plus[viz]"' in message and "\n" not in message
    assert "data 1.0000" in render_text(Value(1.0))  # the text view needs nothing


# ---------------------------------------------------------------------------------- text view


def test_text_view_of_the_lecture_example_is_exact() -> None:
    L, _ = lecture_L()
    assert render_text(L) == GOLDEN_L


def test_text_view_names_unlabelled_nodes_distinctly() -> None:
    # The Go article's double(x) loss (ypred - y)**2 at w = 1.68: its loss 0.4096 at step 1.
    # By hand: w*x = 3.36, + y*-1 = -0.64, squared 0.4096; d/d(sum) = 2 * -0.64 = -1.28, so
    # dw = -1.28 * x = -2.56, dx = -1.28 * w = -2.1504, dy = -1.28 * -1 = 1.28, d(-1) = -5.12.
    # Unlabelled leaves are c1, c2, ...; intermediate results t1, t2, ..., in walk order.
    w, x, y = Value(1.68), Value(2.0), Value(4.0)
    loss = (w * x + y * -1.0) ** 2
    loss.backward()
    RULE = "-" * 53  # as wide as the widest line
    assert render_text(loss).splitlines() == [
        "t1 | data 0.4096 | grad 1.0000 | prev { **2 [t2] }",
        RULE,
        "t2 | data -0.6400 | grad -1.2800 | prev { + [t3 t4] }",
        RULE,
        "t3 | data 3.3600 | grad -1.2800 | prev { * [c1 c2] }",
        "t4 | data -4.0000 | grad -1.2800 | prev { * [c3 c4] }",
        RULE,
        "c1 | data 1.6800 | grad -2.5600",
        "c2 | data 2.0000 | grad -2.1504",
        "c3 | data 4.0000 | grad 1.2800",
        "c4 | data -1.0000 | grad -5.1200",
        RULE,
    ]


def test_made_up_names_are_stable_and_skip_the_users_labels() -> None:
    def build() -> Value:
        x = Value(2.0, label="x")
        t1 = x * x
        t1.label = "t1"  # a user's label that a made-up name must not repeat
        return (t1 * 3 + 4) * x

    texts = [render_text(build()) for _ in range(2)]
    assert texts[0] == texts[1]
    names = [line.split(" | ")[0].strip() for line in texts[0].splitlines() if " | " in line]
    assert len(names) == len(set(names)) == 7
    assert names.count("t1") == 1 and "t2" in names and "c1" in names
    assert {n[0] for n in names if n not in ("x", "t1")} == {"t", "c"}


def test_draw_dot_names_unlabelled_nodes_as_the_text_view_does() -> None:
    x = Value(2.0, label="x")
    y = x * x * 3 + 4
    y.backward()
    source = draw_dot(y).source
    for name in ("t1", "t2", "t3", "c1", "c2"):
        assert f"{{ {name} | data" in source
    assert source.count("fontcolor=gray30") == 5  # made-up names are grey; x is the user's


def test_text_view_truncates_with_a_count_of_what_is_left() -> None:
    text = render_text(chain(50), max_nodes=10)
    lines = text.splitlines()
    assert lines[-1].startswith("… 91 more nodes")
    assert sum(" | data " in line for line in lines) == 10
    assert "… 0 more" not in render_text(chain(3))


@pytest.mark.slow
def test_text_view_of_a_deep_graph_is_iterative() -> None:
    text = render_text(chain(200_000))  # 400,001 nodes, 200 shown
    assert text.splitlines()[-1].startswith("… 399801 more nodes")


def test_text_view_lists_many_operands_briefly() -> None:
    out = Value.dot([Value(1.0) for _ in range(10)], [Value(2.0) for _ in range(10)], 0.5)
    first = render_text(out, max_nodes=1).splitlines()[0]
    operands = "c1 c2 c3 c4 c5 c6 c7 c8 … 13 more"
    assert first == f"t1 | data 20.5000 | grad 0.0000 | prev {{ dot [{operands}] }}"


def test_text_view_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="render_text: root must be a Value"):
        render_text("L")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_nodes"):
        render_text(Value(1.0), max_nodes=0)


def test_a_small_number_that_is_not_zero_never_reads_as_zero() -> None:
    from micrograd.engine import Value
    from micrograd.viz import render_text

    x = Value(1e20, label="x")
    y = x * 1e-30
    y.label = "y"
    z = y * 0.0
    z.label = "z"
    z.backward()
    rows = {line.split("|")[0].strip(): line for line in render_text(z).splitlines() if "|" in line}
    assert "data 1.0000e-10" in rows["y"] and "data 0.0000" in rows["z"]
    assert "grad 0.0000" in rows["x"]  # a true zero stays 0.0000
    assert "grad 1.0000e-10" in rows["c1"]


def test_in_a_browser_the_builtin_layout_is_said_nothing_of_and_fits(monkeypatch, capsys) -> None:
    # The course in the browser (Pyodide: sys.platform emscripten) has no programs: the built-in
    # layout is its normal path, so no Graphviz advice; the picture zooms to fit its output, to
    # half size at most, then scrolls inside its own box.
    import xml.etree.ElementTree as ET

    from micrograd import viz

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(viz, "_SAID", [])
    monkeypatch.setattr(sys, "platform", "emscripten")
    L, _ = lecture_L()
    picture = draw_dot(L)
    assert capsys.readouterr().err == ""
    box = ET.fromstring(picture._repr_html_())
    assert "overflow-x:auto" in box.get("style")
    (svg,) = list(box)
    width = float(svg.get("width"))
    assert svg.get("style") == f"max-width:100%;min-width:{width / 2:.0f}px;height:auto"
    assert svg.get("viewBox").split()[2] == f"{width:.1f}"  # scaled, not cropped
