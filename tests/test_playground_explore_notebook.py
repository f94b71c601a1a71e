"""The explorer on a graph the notebook keeps using (`explore(L)`): a ``L.backward()`` run in a
cell, or another view of the same graph, leaves grads behind, and a leaf may be set in a cell
(``a.data = 3.0``). The explorer's Backward pass still gives what one ``backward()`` from zero
grads gives, and its Forward pass computes every node's data from the leaves as they are now.
Truth: the lecture's numbers, and the same graph built afresh and backpropagated by the engine
(micrograd's own Value, and the learner's class of tests/support/corpus.py)."""

from __future__ import annotations

from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.playground.views import Tab
from tests.support.corpus import LECTURE_VALUE
from tests.test_playground_foreign import learner


def lecture_L(V: Any, a: float = 2.0) -> tuple[Any, dict[str, Any]]:
    """The lecture's L = (a*b + c)*f, on the Value class V; its output and nodes by name."""
    n = {
        "a": V(a, label="a"),
        "b": V(-3.0, label="b"),
        "c": V(10.0, label="c"),
        "f": V(-2.0, label="f"),
    }
    n["e"] = n["a"] * n["b"]
    n["e"].label = "e"
    n["d"] = n["e"] + n["c"]
    n["d"].label = "d"
    n["L"] = n["d"] * n["f"]
    n["L"].label = "L"
    return n["L"], n


def fresh(V: Any, a: float) -> dict[str, tuple[float, float]]:
    """(data, grad) of every named node: the graph built anew at `a`, one backward()."""
    L, n = lecture_L(V, a)
    L.backward()
    return {k: (v.data, v.grad) for k, v in n.items()}


def shown(state: dict[str, Any], tab_nodes: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """(data, grad) of every named node, as the explorer sends them to the page."""
    values = state["values"]
    return {name: (values[i]["data"], values[i]["grad"]) for name, i in tab_nodes.items()}


def named_ids(state: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["id"] for n in state["drawing"]["nodes"] if n.get("name")}


CLASSES = {"micrograd": lambda: Value, "the lecture's": lambda: learner(LECTURE_VALUE)["Value"]}


@pytest.mark.parametrize("kind", CLASSES)
def test_a_backward_in_the_notebook_before_the_pass_is_not_added_onto(kind: str) -> None:
    V = CLASSES[kind]()
    L, n = lecture_L(V)
    tab = Tab()
    ids = named_ids(tab.explorer.show(L))
    L.backward()  # a cell run after explore(L): every grad is now set
    assert n["a"].grad == 6.0
    state = tab.call("explorer", "backward", {})
    assert shown(state, ids) == fresh(V, 2.0)
    assert [n[k].grad for k in "abcf"] == [6.0, -4.0, -2.0, 4.0]  # the lecture's, not doubled
    # two views of one graph: the second's pass starts from zero too
    other = Tab()
    other.explorer.show(L)
    assert shown(other.call("explorer", "backward", {}), ids) == fresh(V, 2.0)


@pytest.mark.parametrize("kind", CLASSES)
def test_the_forward_pass_computes_from_the_leaves_as_they_are_now(kind: str) -> None:
    V = CLASSES[kind]()
    L, n = lecture_L(V)
    tab = Tab()
    ids = named_ids(tab.explorer.show(L))
    n["a"].data = 3.0  # set in a cell
    tab.call("explorer", "reset", {})
    state = tab.call("explorer", "forward", {})
    if kind == "micrograd":  # the engine's ops, run again: L = (3·-3 + 10)·-2 = -2
        assert {k: d for k, (d, _) in shown(state, ids).items()} == {
            k: d for k, (d, _) in fresh(V, 3.0).items()
        }
        assert state["values"][ids["L"]]["data"] == -2.0 and L.data == -2.0
        assert (
            state["note"] == "Forward pass done: 3 node(s) have new data, from the leaves "
            "as they are now."
        )
        state = tab.call("explorer", "backward", {})
        assert shown(state, ids) == fresh(V, 3.0)
    else:  # the learner's ops are their code, run when they built it: read as they are now
        assert state["values"][ids["a"]]["data"] == 3.0
        assert state["values"][ids["L"]]["data"] == -8.0 == L.data
        assert (
            state["note"] == "Forward pass: 1 node(s) hold new data since explore(), read "
            "from your Values as they are now."
        )
