"""micrograd.check on a learner's code: the lecture's implementation passes, and each classic bug
(one line of it changed, see tests/support/learner.py) is diagnosed by name, with the numbers."""

from __future__ import annotations

import html
import math
import random
import re
import threading

import pytest

import micrograd
from micrograd import check
from micrograd.check import CheckReport
from micrograd.engine import Value as EngineValue
from tests.support import learner
from tests.support.learner import variant

ASSIGN_ADD = (
    "self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad",
    "self.grad = 1.0 * out.grad\n            other.grad = 1.0 * out.grad",
)
ASSIGN_MUL = (
    "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
    "self.grad = other.data * out.grad\n            other.grad = self.data * out.grad",
)
BUILD_TOPO = """            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)"""
BACKWARD_LOOP = """        build_topo(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()"""


def only(report: CheckReport) -> str:
    assert len(report.problems) == 1, str(report)
    return report.problems[0]


# ------------------------------------------------------------------------------ correct code


def test_the_lecture_implementation_passes() -> None:
    report = check(learner.Value)
    assert report.ok, str(report)
    assert report.problems == []
    passed = "\n".join(report.passed)
    for expr in (
        "a + b",
        "a * b",
        "a ** 2",
        "a / b",
        "2.0 - a",
        "a.tanh()",
        "a.exp()",
        "a.relu()",
        "b = a + a",
        "b = a * a",
        "L = (a*b + c) * f",
    ):
        assert expr in passed
    # The lecture's engine counts the intermediate x*x twice on a second backward(): 72, not 54.
    assert any("27 → 72" in n for n in report.notes)
    # Its recursive build_topo stops near Python's recursion limit: worth knowing, not wrong.
    assert any("recursion limit" in n for n in report.notes)
    # log and sigmoid are beyond the lecture: listed on one line, not failures.
    beyond = [m for m in report.missing if m.startswith("beyond the lecture")]
    assert len(beyond) == 1 and "not implemented yet: log, sigmoid" in beyond[0]


def test_the_engine_itself_passes_everything() -> None:
    report = check(EngineValue)
    assert report.ok and not report.missing, str(report)
    assert any("27 → 54" in p for p in report.passed)
    assert any("chain of 3,000 additions" in p for p in report.passed)


def test_micrograd_check_is_the_function() -> None:
    assert micrograd.check is check
    assert "check" in micrograd.__all__


def test_a_bare_value_lists_what_is_not_implemented_yet() -> None:
    class Value:  # notebook 01's first Value: + and * forward, no backward yet
        def __init__(self, data, _children=(), _op=""):
            self.data, self.grad, self._prev, self._op = data, 0.0, tuple(_children), _op

        def __add__(self, other):
            return Value(self.data + other.data, (self, other), "+")

        def __mul__(self, other):
            return Value(self.data * other.data, (self, other), "*")

    report = check(Value)
    assert report.ok, str(report)
    assert "+: a + b, value at 3 points" in report.passed
    missing = "\n".join(report.missing)
    assert "backward(): not implemented yet" in missing
    # The ops not written yet are one line, naming each method and what needs it.
    assert sum(m.startswith("not implemented yet: ") for m in report.missing) == 1
    assert "tanh (a.tanh())" in missing and "__rmul__ (3.0 * a)" in missing
    # The lecture's first __add__ reads other.data: numbers are "not yet", with the fix.
    assert (
        "a + 2.0, a * 3.0: not implemented yet — a plain number has no .data: wrap it first"
        in missing
    )


# ----------------------------------------------------------------------------- classic bugs


def test_assigning_instead_of_accumulating_in_add() -> None:
    report = check(variant(ASSIGN_ADD)["Value"])
    assert only(report) == (
        "+: for b = a + a with a = 3.0, a.grad is 1.0, expected 2.0 — does _backward assign (=) "
        "instead of accumulating (+=)?"
    )


def test_assigning_instead_of_accumulating_in_mul() -> None:
    # The issue's own example.
    report = check(variant(ASSIGN_MUL)["Value"])
    assert only(report) == (
        "*: for b = a * a with a = 3.0, a.grad is 3.0, expected 6.0 — does _backward assign (=) "
        "instead of accumulating (+=)?"
    )


def test_wrong_tanh_derivative_using_the_input() -> None:
    V = variant(("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - x**2) * out.grad"))
    problem = only(check(V["Value"]))
    # tanh(-1.5) = -0.9051482536; with out.grad = 2.5: (1 - t²)·2.5 = 0.4517665973,
    # the bug gives (1 - 2.25)·2.5 = -3.125.
    assert problem.startswith("tanh: for out = a.tanh() with a = -1.5 and out.grad = 2.5, ")
    assert "a.grad = -3.125, expected 0.4517665973" in problem
    assert "1 - x² uses the input; the derivative is 1 - t² with t = tanh(x)" in problem


def test_tanh_forgetting_the_chain_rule() -> None:
    V = variant(("self.grad += (1 - t**2) * out.grad", "self.grad += 1 - t**2"))
    problem = only(check(V["Value"]))
    assert "a.grad = 0.1807066389, expected 0.4517665973" in problem
    assert "without × out.grad: multiply by out.grad (the chain rule)" in problem


def test_a_problems_evidence_is_one_attribute_away() -> None:
    # One line per problem; behind it, every point it was tried at, with the grads there (each
    # checked here by hand: tanh's true slope is (1 - t²)·2.5, the bug gives 1 - t²).
    V = variant(("self.grad += (1 - t**2) * out.grad", "self.grad += 1 - t**2"))
    report = check(V["Value"])
    detail = report.detail(0)
    assert detail == report.detail(report.problems[0]) and "\n" not in report.problems[0]
    lines = detail.splitlines()
    assert len(lines) >= 3, detail  # the row's point and the others tried
    for line in lines:  # each point's numbers, worked out here with math.tanh
        a = float(line.split("a = ")[1].split(",")[0])  # as printed: 10 significant digits
        got, want = (
            float(x) for x in re.fullmatch(r".*a\.grad (\S+) \(expected (\S+)\)", line).groups()
        )
        t = math.tanh(a)
        assert got == pytest.approx(1 - t * t, rel=1e-8), line  # the bug: no × out.grad
        assert want == pytest.approx(2.5 * (1 - t * t), rel=1e-8), line
    assert lines[0].startswith("a = -1.5, out.grad = 2.5: ")
    page = report._repr_html_()
    assert "<details><summary>✗ " in page and html.escape(lines[0]) in page
    assert check(learner.Value).details == {}  # nothing wrong, nothing to show


def test_wrong_pow_derivative() -> None:
    V = variant(("other * (self.data ** (other - 1))", "other * (self.data ** other)"))
    report = check(V["Value"])
    assert not report.ok
    # 2·(-1.5)²·2.5 = 11.25 instead of 2·(-1.5)·2.5 = -7.5; one problem for the op, not four.
    assert report.problems[0] == (
        "**: for out = a ** 2 with a = -1.5 and out.grad = 2.5, out._backward() gives a.grad = "
        "11.25, expected -7.5 — the exponent drops by one: p * a.data**(p - 1)"
    )
    assert sum(p.startswith("**:") for p in report.problems) == 1
    # Division is built from ** -1: its gradients are wrong too, and the report says why.
    assert "ops built from the ones above are wrong too: a / b" in report.problems[1]


def test_pow_forgetting_the_factor_p() -> None:
    V = variant(("other * (self.data ** (other - 1))", "(self.data ** (other - 1))"))
    assert "forgot the factor p: p * a.data**(p - 1)" in check(V["Value"]).problems[0]


def test_backward_not_reversed() -> None:
    V = variant(("for node in reversed(topo):", "for node in topo:"))
    assert only(check(V["Value"])) == (
        "backward(): for L = (a*b + c) * f with a = 2.0, b = -3.0, c = 10.0, f = -2.0, a.grad is "
        "0.0, expected 6.0 — the output's gradient never reached it: backward() calls the "
        "nodes' _backward children first: walk reversed(topo), the output first"
    )


def test_build_topo_appending_a_node_before_its_children() -> None:
    # Not "reversed(topo)": the order backward() calls the nodes in says which it is.
    preorder = BUILD_TOPO.replace(
        "                for child in v._prev:\n                    build_topo(child)\n"
        "                topo.append(v)",
        "                topo.append(v)\n                for child in v._prev:\n"
        "                    build_topo(child)",
    )
    problem = only(check(variant((BUILD_TOPO, preorder))["Value"]))
    assert "the topological order puts a node before its children (c before b" in problem
    assert "reversed(topo), the output first?" not in problem


def test_backward_without_topological_order() -> None:
    # Breadth-first from the output, each node once: in b = a*2; c = b*3; out = b + c, b's
    # _backward runs before c has passed b its share, so a.grad is 2, not 2 + 6 = 8.
    bfs = """        order, seen, queue = [], set(), [self]
        while queue:
            v = queue.pop(0)
            if v not in seen:
                seen.add(v)
                order.append(v)
                queue.extend(v._prev)
        self.grad = 1.0
        for node in order:
            node._backward()"""
    V = variant(
        ("self._prev = set(_children)", "self._prev = tuple(_children)"), (BACKWARD_LOOP, bfs)
    )
    assert only(check(V["Value"])) == (
        "backward(): for b = a*2; c = b*3; out = b + c with a = 1.5, a.grad is 2.0, expected 8.0 "
        "— grads depend on the order nodes were visited — is the graph walked in topological "
        "order (a node's _backward only after every node that uses it)?"
    )


def test_build_topo_without_visited_set_is_stopped_not_hung() -> None:
    no_visited = """            for child in v._prev:
                build_topo(child)
            topo.append(v)"""
    report = check(variant((BUILD_TOPO, no_visited))["Value"], time_limit=0.5)
    problem = only(report)
    assert problem.startswith(
        "backward(): for y = y*0.25 + y*0.75, 200 times from x = 1.5 "
        "(2^200 paths to x, 803 nodes), backward() did not finish within "
        "0.5 s (stopped)"
    )
    assert "does it visit each node once (a visited set)?" in problem


def test_missing_reflected_op() -> None:
    V = variant(
        ("    def __rmul__(self, other):  # other * self\n        return self * other\n", "")
    )
    report = check(V["Value"])
    assert (
        "*: 3.0 * a not implemented yet — define __rmul__ (Python calls a.__rmul__(3.0) when "
        "the number is on the left)"
    ) in report.missing
    # 2.0 / a is other * self**-1 in the lecture: the crash names the method it needs.
    assert only(report) == (
        "/: for out = 2.0 / a with a = 0.5, it crashed: TypeError: unsupported operand type(s) "
        "for *: 'float' and 'Value' (in __rtruediv__: return other * self**-1) — a number on "
        "the left of * needs __rmul__"
    )


def test_reflected_op_the_wrong_way_round() -> None:
    V = variant(("return other + (-self)", "return self - other"))
    assert only(check(V["Value"])) == (
        "-: for out = 2.0 - a with a = -1.5, out.data is -3.5, expected 3.5 — Python calls "
        "a.__rsub__(2.0) for 2.0 - a: it must compute 2.0 - a, not the other way round"
    )


def test_a_hanging_backward_is_stopped_once() -> None:
    V = variant(("        build_topo(self)\n", "        while True: pass\n"))
    report = check(V["Value"], time_limit=0.3)
    assert only(report) == (
        "backward(): for out = a + b, backward() did not finish within 0.3 s (stopped) — does "
        "its loop end? (no more gradients are checked)"
    )


@pytest.mark.slow
def test_time_limit_without_signals_in_another_thread() -> None:
    # Off the main thread there is no SIGALRM: a trace function stops the learner's code instead.
    V = variant((BACKWARD_LOOP, "        while True:\n            x = 1"))["Value"]
    box: list[CheckReport] = []
    # The default limit: traced line by line, the other checks are slower, and on a loaded
    # machine a short limit would stop them too.
    worker = threading.Thread(target=lambda: box.append(check(V)))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert "did not finish within 2 s (stopped)" in only(box[0])


def test_a_crash_is_reported_with_the_tracebacks_last_line() -> None:
    V = variant(
        (
            '        out = Value(math.exp(x), (self,), "exp")',
            "        out = Value(math.exp(x), (self,), \"exp\", labl='e')",
        )
    )
    problem = only(check(V["Value"]))
    assert problem.startswith("exp: for out = a.exp() with a = -1.5, it crashed: TypeError: ")
    assert "unexpected keyword argument 'labl'" in problem
    assert "(in exp: out = Value(math.exp(x), (self,), \"exp\", labl='e'))" in problem


def test_a_class_that_cannot_even_be_built() -> None:
    class Broken:
        def __init__(self, data):
            raise RuntimeError("not today")

    assert only(check(Broken)).startswith("Value(2.0) crashed: RuntimeError: not today")


# ---------------------------------------------------------------------------------------- nn


def test_the_lecture_nn_passes_and_is_named() -> None:
    report = check(NeuronClass=learner.Neuron, LayerClass=learner.Layer, MLPClass=learner.MLP)
    assert report.ok, str(report)
    text = "\n".join(report.passed)
    assert "Neuron(3): 4 parameters; output tanh(w·x + b)" in text
    assert "MLP(3, [4, 4, 1]): 41 parameters" in text and "tanh throughout" in text
    # The lecture zeroes grads in its loop; a zero_grad method is optional, never listed.
    assert not any("zero_grad" in m for m in report.missing)


def test_karpathys_own_nn_passes() -> None:
    report = check(NeuronClass=micrograd.Neuron, LayerClass=micrograd.Layer, MLPClass=micrograd.MLP)
    assert report.ok and not report.missing, str(report)
    assert any("ReLU hidden, linear output" in p for p in report.passed)


def test_check_leaves_the_random_state_alone() -> None:
    random.seed(7)
    expected = [random.random() for _ in range(3)]
    random.seed(7)
    check(learner.Value, MLPClass=learner.MLP)
    assert [random.random() for _ in range(3)] == expected


def test_parameters_in_the_wrong_order() -> None:
    ns = variant(("        return self.w + [self.b]", "        return [self.b] + self.w"))
    report = check(NeuronClass=ns["Neuron"])
    problem = only(report)
    assert problem.startswith("Neuron(3)([2.0, 3.0, -1.0]) gives [")
    assert "micrograd.nn with the same parameters() (in order: each neuron's w, then its b)" in (
        problem
    )


def test_a_neuron_without_its_bias() -> None:
    ns = variant(("        return self.w + [self.b]", "        return self.w"))
    assert only(check(NeuronClass=ns["Neuron"])) == (
        "Neuron(3).parameters() has 3 entries, expected 4 (3 weights and a bias)"
    )


def test_an_mlp_that_forgets_a_layer_in_parameters() -> None:
    ns = variant(
        (
            "        return [p for layer in self.layers for p in layer.parameters()]",
            "        return [p for layer in self.layers[1:] for p in layer.parameters()]",
        )
    )
    assert only(check(MLPClass=ns["MLP"])) == (
        "MLP(3, [4, 4, 1]).parameters() has 25 entries, expected 41 (3·4+4 + 4·4+4 + 4+1)"
    )


def test_a_zero_grad_that_does_not_zero() -> None:
    class Neuron(learner.Neuron):
        def zero_grad(self):
            for p in self.w:
                p.grad = 0.0  # forgets the bias

    problem = only(check(NeuronClass=Neuron))
    assert problem.startswith("Neuron(3).zero_grad() left parameter 3 with grad ")
    assert problem.endswith("it should set every parameter's grad to 0")


# ------------------------------------------------------------------------------ the report


def test_report_text_and_html() -> None:
    report = check(variant(ASSIGN_MUL)["Value"])
    text = str(report)
    assert text.splitlines()[0].startswith("check(Value): not yet (1 problem, ")
    assert "  ✗ *: for b = a * a" in text
    html = report._repr_html_()
    assert "✗ *: for b = a * a with a = 3.0" in html
    assert "(=) instead of accumulating (+=)?" in html
    assert "<details>" in html and repr(report) == text


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="pass your Value class"):
        check()
    with pytest.raises(TypeError, match="ValueClass must be a class, got Value"):
        check(EngineValue(2.0))
    with pytest.raises(ValueError, match="time_limit must be a number of seconds"):
        check(EngineValue, time_limit=0)


def test_a_bare_except_does_not_disarm_the_time_limit() -> None:
    # The alarm fires again until the check gives up: a learner's `except:` that swallows it
    # once does not leave the rest of their code running forever.
    swallow = """        try:
            while True:
                pass
        except:  # noqa: E722
            pass
        while True:
            pass"""
    report = check(variant((BACKWARD_LOOP, swallow))["Value"], time_limit=0.2)
    assert "did not finish within 0.2 s (stopped)" in only(report)


def test_every_registered_op_is_checked() -> None:
    # The engine's op table is the truth: each one-input op it registers has a row, spelled out
    # in ROWS or made from the registry.
    from micrograd.check.table import ROWS, registry_rows
    from micrograd.engine import OPS

    checked = {n for row in ROWS + registry_rows() for n in row.needs}
    registered = {info.method.__name__ for info in OPS.values() if info.arity in (1, 2)}
    assert registered <= checked | {"__pow__"} and "__pow__" in checked


def test_rows_made_from_the_registry_check_like_the_spelled_out_ones() -> None:
    from micrograd.check.table import registry_rows

    rows = {row.expr: row for row in registry_rows(covered=set())}
    assert {"a.exp()", "a.tanh()", "a.relu()", "a.log()", "a.sigmoid()"} <= set(rows)
    assert all(x > 0 for (x,) in rows["a.log()"].points)  # only where log is defined
    assert rows["a.tanh()"].rule == "micrograd's rule: d/da = 1 - out²"
    # Run on the lecture's Value with a wrong tanh, they find the bug the same way.
    V = variant(("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - x**2) * out.grad"))
    from micrograd.check.graphs import ValueChecker
    from micrograd.check.timeout import Runner

    report = CheckReport("check(Value)")
    checker = ValueChecker(V["Value"], Runner(2.0), report)
    assert checker.basics()
    checker.row(rows["a.tanh()"])
    assert only(report).startswith(
        "tanh: for out = a.tanh() with a = -1.5 and out.grad = 2.5, "
        "out._backward() gives a.grad = -3.125, expected 0.4517665973"
    )


def test_backward_that_never_seeds_the_output_gradient() -> None:
    V = variant(
        (
            "        self.grad = 1.0\n        for node in reversed(topo):",
            "        for node in reversed(topo):",
        )
    )
    assert only(check(V["Value"])) == (
        "+: for out = a + b with a = 2.0, b = -3.0, after out.backward() a.grad is 0.0, expected "
        "1.0 — out._backward() alone is right, so look at backward(): does it set self.grad = "
        "1.0 first, then call every node's _backward, output first? (no more gradients are "
        "checked)"
    )


def test_an_op_that_returns_a_plain_number() -> None:
    V = variant(
        (
            '        out = Value(self.data * other.data, (self, other), "*")\n',
            "        return self.data * other.data\n",
        )
    )
    report = check(V["Value"])
    assert report.problems[0] == (
        "*: for out = a * b with a = 2.0, b = -3.0, it returned -6.0 (float), not a Value with "
        "data and _prev: each op returns a new Value(...)"
    )
    # -a is a * -1 in the lecture: a consequence, on one line with the others.
    assert report.problems[1].startswith(
        "ops built from the ones above are wrong too: -a (returned a float); 2.0 - a (returned a "
        "float); a / b (returned a float)"
    )
    assert len(report.problems) == 2


@pytest.mark.slow
def test_the_time_limit_leaves_signals_and_timers_as_it_found_them() -> None:
    import signal

    if not hasattr(signal, "setitimer"):
        pytest.skip("no interval timers on this platform")
    before = signal.getsignal(signal.SIGALRM)
    # compared with what was found, not with none: the runner may keep a timer of its own
    # (pytest-timeout's signal method, a notebook extension)
    found = signal.getitimer(signal.ITIMER_REAL)
    check(learner.Value)
    assert signal.getsignal(signal.SIGALRM) is before
    left = signal.getitimer(signal.ITIMER_REAL)
    assert (left[0] > 0, left[1]) == (found[0] > 0, found[1]), (found, left)
    # Someone else's timer keeps running untouched: the checker falls back to its trace
    # function instead. (One of ours unless the runner's is already there.)
    ours = found[0] == 0
    if ours:
        signal.setitimer(signal.ITIMER_REAL, 100.0)
    theirs = signal.getitimer(signal.ITIMER_REAL)[0]
    try:
        V = variant(("        build_topo(self)\n", "        while True:\n            x = 1\n"))
        # The default limit: traced line by line, the other checks are slower, and on a loaded
        # machine a short limit would stop them too.
        assert "did not finish within 2 s" in only(check(V["Value"]))
        assert theirs - 10.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= theirs
    finally:
        if ours:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _in_thread(fn):
    box = []
    t = threading.Thread(target=lambda: box.append(fn()))
    t.start()
    t.join(30)
    return box[0]


@pytest.mark.parametrize("where", ["main thread (its timer)", "other thread (its trace)"])
def test_the_time_limit_counts_the_time_the_code_computes_not_the_machines(where) -> None:
    """A loaded machine gives the learner's code less of each second: a limit on the clock stopped
    correct engines there (seen: the 3,000-addition chain at load 8). Time spent not computing
    stands for it here: a 0.6 s wait within a limit of 0.5 s is not stopped, while code that
    computes past the limit is, and code that only waits is stopped after WAITING_FACTOR limits."""
    import time

    from micrograd.check.timeout import WAITING_FACTOR, Failed, run

    call = (lambda f: f()) if where.startswith("main") else _in_thread

    def waits() -> str:
        time.sleep(0.3)
        time.sleep(0.3)  # a new line for the trace function to look at the time
        return "done"

    def computes() -> None:
        while True:
            x = 1  # noqa: F841

    def only_waits() -> None:
        while True:
            time.sleep(0.05)

    assert call(lambda: run(0.5, waits)) == "done"
    stopped = call(lambda: run(0.2, computes))
    assert isinstance(stopped, Failed) and stopped.text == "did not finish within 0.2 s (stopped)"
    start = time.monotonic()
    stopped = call(lambda: run(0.1, only_waits))
    assert isinstance(stopped, Failed) and stopped.timeout
    assert time.monotonic() - start >= 0.1 * WAITING_FACTOR


def test_ops_that_hang_stop_the_check_after_a_few_time_limits() -> None:
    # Four ops that never return would each wait out the limit; after three, nothing more runs.
    class Hangs(learner.Value):
        def __pow__(self, other):
            while True:
                pass

        def exp(self):
            while True:
                pass

        def tanh(self):
            while True:
                pass

        def relu(self):
            while True:
                pass

    report = check(Hangs, time_limit=0.2)
    text = "\n".join(report.problems)
    assert report.problems[0] == (
        "**: for out = a ** 2 with a = -1.5, it crashed: did not finish within 0.2 s (stopped)"
    )
    assert text.count("did not finish within 0.2 s") == 3
    assert report.problems[-1] == (
        "stopped: 3 checks ran out of time, so the rest were not run — fix what never finishes "
        "(above), then check again"
    )


def test_nn_classes_that_hang_are_stopped_too() -> None:
    class Neuron(learner.Neuron):
        def __call__(self, x):
            while True:
                pass

    class Layer(learner.Layer):
        def __init__(self, nin, nout):
            self.neurons = [Neuron(nin) for _ in range(nout)]

    class MLP(learner.MLP):
        def __init__(self, nin, nouts):
            while True:
                pass

    report = check(NeuronClass=Neuron, LayerClass=Layer, MLPClass=MLP, time_limit=0.2)
    assert report.problems == [
        "Neuron(3)([2.0, 3.0, -1.0]) crashed: did not finish within 0.2 s (stopped)",
        "Layer(3, 2)([2.0, 3.0, -1.0]) crashed: did not finish within 0.2 s (stopped)",
        "MLP(3, [4, 4, 1]) crashed: did not finish within 0.2 s (stopped)",
    ]


def test_checks_an_earlier_problem_would_spoil_are_listed_as_skipped() -> None:
    # The correct class runs every graph check; with the = bug, each one it no longer runs is
    # named and counted, never silently dropped.
    good = check(learner.Value)
    bad = check(variant(ASSIGN_MUL)["Value"])
    assert good.skipped == [] and "skipped" not in good.summary()
    assert len(bad.skipped) == 5 and len(bad.passed) < len(good.passed)
    assert f"{len(bad.skipped)} skipped until the problems are fixed" in bad.summary()
    text = str(bad)
    for what in bad.skipped:
        assert f"skipped until the problems are fixed: {what}" in text
        assert html.escape(what) in bad._repr_html_()
    assert any("visiting order" in s for s in bad.skipped)
    assert any("twice" in s for s in bad.skipped)


# ------------------------------------------------------------- judged by behaviour, not shape


class OwnSubDiv(learner.Value):
    """A correct learner who writes - and / as ops of their own: one node each, with local
    derivatives 1, -1 and 1/b, -a/b² (micrograd builds them as a + (-b) and a * b**-1)."""

    def __sub__(self, other):
        other = other if isinstance(other, learner.Value) else OwnSubDiv(other)
        out = OwnSubDiv(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += 1.0 * out.grad
            other.grad += -1.0 * out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other):
        other = other if isinstance(other, learner.Value) else OwnSubDiv(other)
        out = OwnSubDiv(self.data / other.data, (self, other), "/")

        def _backward():
            self.grad += (1 / other.data) * out.grad
            other.grad += (-self.data / other.data**2) * out.grad

        out._backward = _backward
        return out


def test_own_sub_and_div_ops_are_correct_code() -> None:
    report = check(OwnSubDiv)
    assert report.ok and report.problems == [], str(report)
    passed = "\n".join(report.passed)
    assert "a - b" in passed and "a / b" in passed


@pytest.mark.parametrize(
    "op, right, wrong",
    [
        (
            "**",
            "self.grad += other * (self.data ** (other - 1)) * out.grad",
            "self.grad = other * (self.data ** (other - 1)) * out.grad",
        ),
        ("tanh", "self.grad += (1 - t**2) * out.grad", "self.grad = (1 - t**2) * out.grad"),
        ("exp", "self.grad += out.data * out.grad", "self.grad = out.data * out.grad"),
        ("relu", "self.grad += (out.data > 0) * out.grad", "self.grad = (out.data > 0) * out.grad"),
    ],
)
def test_assigning_instead_of_accumulating_in_a_one_input_op(
    op: str, right: str, wrong: str
) -> None:
    # `x**2 + x`: the op's = overwrites the share that + gave x. The op alone looks right.
    report = check(variant((right, wrong))["Value"])
    problem = only(report)
    assert problem.startswith(f"{op}: for b = ") and "+ a with a = " in problem, problem
    assert f"{op}'s _backward assigns (=) where it must accumulate (+=)" in problem


class Chatty(learner.Value):
    """A correct learner who left a debug print in __add__."""

    def __add__(self, other):
        print("adding", self, other)
        return super().__add__(other)


def test_a_learners_prints_are_captured_not_shown(capsys) -> None:
    report = check(Chatty)
    assert report.ok, str(report)
    assert capsys.readouterr().out == ""  # nothing flooded the notebook
    note = next(n for n in report.notes if n.startswith("your code printed"))
    assert "adding" in note and "\n" not in note


# ------------------------------------------------------------------------- the training step


def lecture_step(
    model, xs, ys, lr, *, sign=-1.0, zero="before", use_lr=True, mean=False, touch_inputs=False
):
    """The lecture's training step, with one knob per classic mistake."""
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
    if mean:
        loss = loss * (1 / len(ys))
    if zero == "before":
        for p in model.parameters():
            p.grad = 0.0
    loss.backward()
    if zero == "between":
        for p in model.parameters():
            p.grad = 0.0
    for p in model.parameters():
        p.data += sign * (lr if use_lr else 1.0) * p.grad
    if touch_inputs:
        for x in xs:
            for v in x:
                v.data += sign * lr * v.grad
    return loss


@pytest.mark.parametrize("mean", [False, True])  # any loss the learner picks is judged by its grad
def test_a_correct_training_step_passes(mean: bool) -> None:
    report = check(train_step=lambda m, xs, ys, lr: lecture_step(m, xs, ys, lr, mean=mean))
    assert report.ok, str(report)
    assert any(p.startswith("train_step: 4 steps on") for p in report.passed)


def test_zeroing_after_the_update_is_fine_too() -> None:
    def step(model, xs, ys, lr):
        loss = lecture_step(model, xs, ys, lr, zero="never")
        for p in model.parameters():  # zero_grad at the end of the step, for the next one
            p.grad = 0.0
        return loss

    assert check(train_step=step).ok


@pytest.mark.parametrize(
    "knobs, words",
    [
        ({"sign": 1.0}, "climbs the loss"),
        ({"zero": "between"}, "zeroed between backward() and the update"),
        ({"zero": "never"}, "never zeroed"),
        ({"use_lr": False}, "learning rate is ignored"),
        ({"touch_inputs": True}, "changed the inputs"),
    ],
)
def test_each_training_step_mistake_is_named(knobs: dict, words: str) -> None:
    report = check(train_step=lambda m, xs, ys, lr: lecture_step(m, xs, ys, lr, **knobs))
    assert words in only(report), str(report)


def test_a_training_step_that_returns_nothing_is_told_to_return_the_loss() -> None:
    def step(model, xs, ys, lr):
        lecture_step(model, xs, ys, lr)

    assert "return the loss" in only(check(train_step=step))


def test_a_cause_is_named_only_when_every_point_agrees() -> None:
    # relu's `out.data * out.grad` at a = 0.4 gives 0.4 × 2.5 = 1, which one point alone would
    # read as a missing × out.grad; the other points single out the real cause.
    V = variant(("self.grad += (out.data > 0) * out.grad", "self.grad += out.data * out.grad"))
    problem = only(check(V["Value"]))
    assert problem.startswith("relu: "), problem
    assert "not the output's value" in problem and "without × out.grad" not in problem
    # and a real missing × out.grad is still called so
    V = variant(("self.grad += (out.data > 0) * out.grad", "self.grad += (out.data > 0) * 1.0"))
    assert "without × out.grad" in only(check(V["Value"]))


def test_grads_that_start_as_none_are_one_line_not_twelve() -> None:
    V = variant(
        (
            "        self.grad = 0.0\n        self._backward",
            "        self.grad = None\n        self._backward",
        )
    )
    problem = only(check(V["Value"]))
    assert problem.startswith("Value(2.0).grad is None, expected 0.0: grads start at 0")


def test_a_visited_set_kept_on_the_class_is_named_not_called_a_reset() -> None:
    V = variant(
        (
            "        topo = []\n        visited = set()\n",
            "        topo = []\n        visited = Value._visited\n",
        ),
        ("class Value:\n", "class Value:\n    _visited = set()\n"),
    )
    report = check(V["Value"])
    assert "visited set or topo kept between calls" in only(report)
    assert not any("resets the grads" in n for n in report.notes)


# ---------------------------------------------------------------- network mistakes, by cause

NEURON_CALL = (
    "        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)\n        return act.tanh()"
)


def test_network_mistakes_are_named_in_words_a_learner_acts_on() -> None:
    import inspect

    src = inspect.getsource(learner)
    assert NEURON_CALL in src, "the lecture's Neuron.__call__ changed: update the snippets"
    cases = [
        (
            (
                "        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)\n"
                "        return act.tanh()",
                "        return sum(((wi * xi).tanh() for wi, xi in zip(self.w, x)), self.b)",
            ),
            "tanh applied to each product",
        ),
        (
            (
                "        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)",
                "        act = sum((wi * xi for wi, xi in zip(self.w, x)), Value(0.0))",
            ),
            "the bias never reaches the output",
        ),
    ]
    for edit, words in cases:
        V = variant(edit)
        problem = only(check(NeuronClass=V["Neuron"]))
        assert words in problem, problem


def test_shared_neurons_and_reseeding_are_named() -> None:
    import random

    V = variant()
    Neuron = V["Neuron"]

    class SharedLayer:
        def __init__(self, nin, nout):
            self.neurons = [Neuron(nin)] * nout  # one neuron, listed nout times

        def __call__(self, x):
            return [n(x) for n in self.neurons]

        def parameters(self):
            return [p for n in self.neurons for p in n.parameters()]

    assert "[Neuron(nin)] * nout" in only(check(LayerClass=SharedLayer))

    class Reseeding(Neuron):
        def __init__(self, nin):
            random.seed(42)
            super().__init__(nin)

    assert "random.seed()" in only(check(NeuronClass=Reseeding))


class Unusual:
    """A correct engine written nothing like the lecture's: _prev a list, local derivatives
    stored on the node (no closures; _backward applies them), its own one-node - and /, an
    iterative topological sort, grad behind a property, no label, no __repr__."""

    def __init__(self, data, _children=(), _op="", _local=()):
        self.data = data
        self._grad = 0.0
        self._prev = list(_children)
        self._op = _op
        self._local = list(_local)

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    def _backward(self):
        for child, d in zip(self._prev, self._local):
            child.grad += d * self.grad

    @staticmethod
    def _wrap(x):
        return x if isinstance(x, Unusual) else Unusual(x)

    def __add__(self, other):
        other = self._wrap(other)
        return Unusual(self.data + other.data, (self, other), "+", (1.0, 1.0))

    def __mul__(self, other):
        other = self._wrap(other)
        return Unusual(self.data * other.data, (self, other), "*", (other.data, self.data))

    def __sub__(self, other):
        other = self._wrap(other)
        return Unusual(self.data - other.data, (self, other), "-", (1.0, -1.0))

    def __truediv__(self, other):
        other = self._wrap(other)
        a, b = self.data, other.data
        return Unusual(a / b, (self, other), "/", (1 / b, -a / b**2))

    def __pow__(self, p):
        return Unusual(self.data**p, (self,), f"**{p}", (p * self.data ** (p - 1),))

    def __neg__(self):
        return Unusual(-self.data, (self,), "neg", (-1.0,))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return self._wrap(other) - self

    def __rtruediv__(self, other):
        return self._wrap(other) / self

    def tanh(self):
        t = math.tanh(self.data)
        return Unusual(t, (self,), "tanh", (1 - t * t,))

    def exp(self):
        e = math.exp(self.data)
        return Unusual(e, (self,), "exp", (e,))

    def relu(self):
        return Unusual(max(0.0, self.data), (self,), "relu", (float(self.data > 0),))

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:  # iterative post-order
            v, done = stack.pop()
            if done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((c, False) for c in v._prev)
        for v in order:
            if v._prev:
                v.grad = 0.0
        self.grad = 1.0
        for v in reversed(order):
            v._backward()


def test_a_correct_engine_written_nothing_like_the_lectures_passes() -> None:
    report = check(Unusual)
    assert report.ok and report.problems == [], str(report)
    passed = "\n".join(report.passed)
    for expr in ("a - b", "a / b", "b = a.tanh() + a", "L = (a*b + c) * f"):
        assert expr in passed, expr


def test_identical_problems_are_one_line_with_where_else_or_a_count() -> None:
    report = CheckReport("check(Value)")
    report.add("tanh: forgets its child", same="forgets", where="a.tanh()")
    report.add("exp: forgets its child", same="forgets", where="a.exp()")
    report.add("backward() crashed: X")
    report.add("backward() crashed: X")
    assert report.problems == [
        "tanh: forgets its child (the same in a.exp())",
        "backward() crashed: X (the same 1 more time)",
    ]
    assert report.headline == (
        "tanh: forgets its child (the same in a.exp()) (and 1 more problem, listed above)"
    )
    assert CheckReport("x").headline == "no problems"


def test_ops_not_written_yet_mid_notebook_2_are_one_line() -> None:
    # Notebook 2's class once backward() is written: + * tanh, nothing else yet.
    from tests.test_notebooks import BACKWARD_OPS, FILLS

    namespace: dict = {"math": math}
    exec(BACKWARD_OPS + "\n" + FILLS["02_backpropagation"]["backward"], namespace)
    report = check(namespace["Value"])
    assert report.ok, str(report)
    lines = [m for m in report.missing if not m.startswith("beyond the lecture")]
    assert len(lines) == 2, lines  # numbers on one line, every op not written yet on another
    assert lines[1].startswith("not implemented yet: __radd__ (2.0 + a); __rmul__ (3.0 * a)")
