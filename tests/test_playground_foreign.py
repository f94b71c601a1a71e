"""The explorer on a learner's own Value class (`explore(L)` on their engine): every Backward step
runs *their* `_backward`, and a node whose local derivative is not its op's slope (by central
differences) is marked, with the numbers. Judged by what the code computes: the learners' engines of
tests/support/corpus.py (a dataclass, a float subclass, grads kept in a dict, a `_prev` set, stored
local derivatives, their own - and /...) are never marked where they are right; each engine with a
wrong rule is marked at that rule's node."""

from __future__ import annotations

import math
import sys
import types
from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.playground import Tab
from micrograd.playground.errors import ViewError
from micrograd.playground.explore.foreign import ForeignExplorer, LearnerStepper
from tests.support.corpus import CASES, LECTURE_VALUE, edit

# Graphs every engine of the lecture can build, one op each (and one with an input used twice):
# name -> (code building `out` from the learner's Value class V, the op whose node is checked)
GRAPHS = {
    "mul": ("a = L(2.0, 'a'); b = L(-3.0, 'b'); out = a*b", "*"),
    "add": ("a = L(2.0, 'a'); b = L(-3.0, 'b'); out = a + b", "+"),
    "add reused": ("a = L(3.0, 'a'); out = a + a", "+"),
    "mul reused": ("a = L(3.0, 'a'); out = a*a", "*"),
    "tanh": ("a = L(0.8813735870195432, 'a'); out = a.tanh()", "tanh"),
    "pow": ("a = L(1.5, 'a'); out = a**3", "**3"),
    "exp": ("a = L(0.5, 'a'); out = a.exp()", "exp"),
    "relu+": ("a = L(2.0, 'a'); out = a.relu()", None),
    "relu-": ("a = L(-3.0, 'a'); out = a.relu()", None),
    "neuron": (
        "x1 = L(2.0, 'x1'); x2 = L(0.0, 'x2'); w1 = L(-3.0, 'w1'); w2 = L(1.0, 'w2'); "
        "b = L(6.8813735870195432, 'b'); out = (x1*w1 + x2*w2 + b).tanh()",
        None,
    ),
}


# The corpus's engines with a wrong local rule, and the graph whose op node must be marked.
RULE_BUGS = {
    "+ assigns": "add reused",
    "* assigns": "mul reused",
    "tanh uses the input": "tanh",
    "tanh without the chain rule": "tanh",
    "tanh forgets the square": "tanh",
    "pow exponent": "pow",
    "pow factor": "pow",
    "exp uses x": "exp",
    "relu slope is the output": "relu+",
    "relu slope 1 everywhere": "relu-",
    "* its own input": "mul",
    "tanh assigns": "tanh",
    "relu assigns": "relu+",
    "exp assigns": "exp",
}


def learner(source: str) -> dict[str, Any]:
    """The learner's code run in a namespace of its own, as a notebook's (a module dataclasses
    can find)."""
    module = types.ModuleType(f"learner_for_explore_{abs(hash(source))}")
    sys.modules[module.__name__] = module
    exec(compile(source, "<learner>", "exec"), module.__dict__)
    return module.__dict__


def build(ns: dict[str, Any], graph: str) -> tuple[Any, list[Any]] | None:
    """The graph on the learner's class: its output and its leaves in the order made (labelled
    where the class takes a label); None if the engine has no such op."""
    V, leaves = ns["Value"], []

    def leaf(x: float, name: str) -> Any:
        try:
            v = V(x, label=name)
        except TypeError:  # an engine without labels
            v = V(x)
        leaves.append(v)
        return v

    scope = {"L": leaf}
    try:
        exec(GRAPHS[graph][0], scope)
    except (AttributeError, TypeError):
        return None  # an op this engine does not have
    return scope["out"], leaves


def marked(ex: ForeignExplorer) -> list[str]:
    return [n.get("caption") or n["name"] for n in ex.drawing["nodes"] if "problem" in n]


def micrograd_grads(graph: str) -> list[float]:
    """The same graph on micrograd's engine, backward(): each leaf's grad, in the order made."""
    leaves: list[Value] = []
    scope = {"L": lambda x, name: leaves.append(Value(x, label=name)) or leaves[-1]}
    exec(GRAPHS[graph][0], scope)
    scope["out"].backward()
    return [v.grad for v in leaves]


CORRECT = [c for c in CASES if c.kind == "value" and c.correct]


@pytest.mark.parametrize("case", CORRECT, ids=[c.name for c in CORRECT])
def test_a_correct_learner_engine_is_never_marked_and_its_steps_give_backwards_grads(case):
    ns = learner(case.source)
    built = 0
    for graph in GRAPHS:
        made = build(ns, graph)
        if made is None:
            continue
        out, leaves = made
        built += 1
        ex = ForeignExplorer(out, "layered")
        assert marked(ex) == [], (graph, ex.verdict)
        assert "every node's local derivative is what its op's slope is" in ex.verdict
        ex.backward()  # every step runs the learner's _backward
        shown = {id(ex.stepper.foreign[v]): v.grad for v in ex.nodes}  # what the explorer shows
        for leaf, want in zip(leaves, micrograd_grads(graph)):
            got = shown[id(leaf)]
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (graph, got, want)
    assert built >= 4, case.name


@pytest.mark.parametrize("bug", sorted(RULE_BUGS))
def test_a_wrong_rule_is_marked_at_its_node_with_the_numbers(bug):
    case = next(c for c in CASES if c.name == bug)
    ns = learner(case.source)
    graph = RULE_BUGS[bug]
    ex = ForeignExplorer(build(ns, graph)[0], "layered")
    op = {"relu+": "ReLU", "relu-": "ReLU"}.get(graph, GRAPHS[graph][1])
    found = marked(ex)
    assert found, (bug, ex.verdict)
    problem = next(n["problem"] for n in ex.drawing["nodes"] if "problem" in n)
    assert "should be" in problem and "central differences" in problem, problem
    assert "marked red" in ex.verdict
    if op is not None:
        assert all(op.lower() in f.lower() for f in found), (found, op)
    ex.backward()  # the step of that node says it again
    assert any(line.startswith("✗") for e in ex.log for line in e["lines"])


def test_the_lecture_graph_with_a_wrong_mul_is_marked_at_both_mul_nodes():
    source = edit(
        LECTURE_VALUE, ("other.grad += self.data * out.grad", "other.grad += other.data * out.grad")
    )
    V = learner(source)["Value"]
    a, b, c, f = V(2.0, label="a"), V(-3.0, label="b"), V(10.0, label="c"), V(-2.0, label="f")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    ex = ForeignExplorer(L, "layered")
    assert marked(ex) == ["*", "*"]
    problems = " ".join(n["problem"] for n in ex.drawing["nodes"] if "problem" in n)
    # said as the probe ran it (out.grad 3, the child's grad 10 before), with the likely cause
    assert (
        "with L.grad = 3 and f.grad already 10, your * rule left f.grad at 4.0000: it should "
        "be 22.0000"
    ) in problems  # 10 + (-2)·3 where 10 + d·3 = 10 + 4·3
    # the cause from the one list of mistakes Predict and the notebooks' checks use
    assert "∂(f·d)/∂f is d, the other factor, not f itself" in problems
    assert (
        "with e.grad = 3 and b.grad already 10, your * rule left b.grad at 1.0000: it should "
        "be 16.0000"
    ) in problems
    ex.backward()
    assert a.grad == ex.nodes[[ex.names[v] for v in ex.nodes].index("a")].grad  # their objects


def test_a_node_that_forgot_its_input_and_what_only_micrograds_values_allow():
    source = edit(
        LECTURE_VALUE,
        ('        out = Value(t, (self,), "tanh")', '        out = Value(t, _op="tanh")'),
    )
    V = learner(source)["Value"]
    out = (V(2.0, label="a") * V(1.0, label="b")).tanh()
    ex = ForeignExplorer(out, "layered")
    assert "has no children" in ex.verdict and "forgot" not in ex.verdict
    x = V(2.0, label="x")
    y = x * x
    y._prev = {x, V(1.0, _op="tanh")}  # a leaf that says an op made it
    ex = ForeignExplorer(y, "layered")
    assert any(
        "no children: the op forgot its input" in n.get("problem", "") for n in ex.drawing["nodes"]
    )
    # what only a graph of micrograd's own Values allows is not offered (no method of it
    # raises: the walkthrough has none), and the view says why, for each action of it
    assert not any(hasattr(ex, m) for m in ("set_leaf", "descend", "nudge_at", "leaf", "set_role"))
    tab = Tab()
    tab.explorer.show(y)
    for action, body in (
        ("set", {"node": "v1", "value": 1.0}),
        ("descend", {"lr": 0.01}),
        ("nudge", {"node": "v1"}),
        ("role", {"node": "v1", "role": "data"}),
    ):
        with pytest.raises(ViewError, match="your own Value class"):
            tab.call("explorer", action, body)


def test_explore_takes_a_learners_value_and_refuses_anything_else():
    V = learner(LECTURE_VALUE)["Value"]
    out = V(2.0, label="a") * V(3.0, label="b")
    state = Tab().explorer.show(out)
    assert "every node's local derivative" in state["verdict"]
    with pytest.raises(TypeError, match="expected a Value .* got str"):
        Tab().explorer.show("L")


@pytest.mark.parametrize("graph", ["lecture", "twice"])
def test_a_rule_that_assigns_is_named_as_eq_for_plus_eq(graph):
    # the example: `=` where the lecture has `+=`, said in the learner's own terms, in
    # the words of the one list of mistakes (check/mistakes.py)
    source = LECTURE_VALUE.replace(".grad +=", ".grad =")
    assert source != LECTURE_VALUE
    V = learner(source)["Value"]
    if graph == "lecture":
        a, b, c = V(2.0, label="a"), V(-3.0, label="b"), V(10.0, label="c")
        e = a * b
        e.label = "e"
        out = e + c
        out.label = "d"
        want = (
            "with d.grad = 3 and e.grad already 10, your + rule left e.grad at 3.0000: it "
            "should be 13.0000"
        )
        cause = "e already has grad 10.0000: this step adds onto it (+=), it does not replace it"
    else:
        a = V(3.0, label="a")
        out = a + a
        out.label = "b"
        want = (
            "with b.grad = 3 and a.grad already 10, your + rule left a.grad at 3.0000: it "
            "should be 16.0000"
        )
        cause = (
            "that is one use's share alone: a is used twice, and each use adds its share onto "
            "a.grad (+=), replacing nothing"
        )
    ex = ForeignExplorer(out, "layered")
    problems = " ".join(n["problem"] for n in ex.drawing["nodes"] if "problem" in n)
    assert want in problems and cause in problems, problems


def test_the_explorer_names_the_same_mistakes_as_predict(monkeypatch):
    # one list: a rule that leaves the child's grad as it was is said in Predict's words too
    source = edit(
        LECTURE_VALUE, ("other.grad += self.data * out.grad", "other.grad += 0.0 * out.grad")
    )
    V = learner(source)["Value"]
    out = V(2.0, label="a") * V(-3.0, label="b")
    out.label = "c"
    problems = " ".join(
        n["problem"] for n in ForeignExplorer(out, "layered").drawing["nodes"] if "problem" in n
    )
    assert "that is b.grad unchanged: this step adds ∂c/∂b × c.grad to it" in problems, problems


def test_a_backward_that_never_returns_is_stopped_and_named_in_one_line(monkeypatch):
    # the learner's _backward runs under the checker's time limit, and one that ran out of time
    # is not run again: each step and each check costs at most one limit, not one per call
    monkeypatch.setattr(LearnerStepper, "time_limit", 0.2)
    source = edit(
        LECTURE_VALUE,
        ("other.grad += self.data * out.grad", "CALLS.append(1)\n            while True: pass"),
    )
    namespace = learner(source)
    namespace["CALLS"] = []  # each run of the endless _backward, counted
    V = namespace["Value"]
    a, b = V(2.0, label="a"), V(-3.0, label="b")
    e = a * b
    e.label = "e"
    out = e + V(1.0, label="c")
    out.label = "d"
    ex = ForeignExplorer(out, "layered")
    problems = [n["problem"] for n in ex.drawing["nodes"] if "problem" in n]
    assert problems == ["e's *: its _backward() did not finish within 0.2 s (stopped)"]
    while ex.done_steps < ex.total_steps:
        ex.backward()
    said = [line for e in ex.log for line in e["lines"] if "did not finish" in line]
    assert said == ["e._backward() did not finish within 0.2 s (stopped)"], ex.log
    assert len(namespace["CALLS"]) == 1  # run once, then remembered as hung
    assert math.isclose(ex.nodes[[ex.names[v] for v in ex.nodes].index("c")].grad, 1.0)
