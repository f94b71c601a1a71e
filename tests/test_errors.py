"""Bad input gets a specific exception whose message names the operation and the value."""

from __future__ import annotations

import ast
import pathlib

import pytest

from micrograd import MLP, Layer, Neuron, Value, grad


@pytest.mark.parametrize(
    "bad, words",
    [("2.0", "str '2.0'"), (None, "NoneType None"), (True, "bool True"), ([1.0], "list [1.0]")],
)
def test_value_rejects_non_numbers(bad, words) -> None:
    with pytest.raises(TypeError, match="real number") as err:
        Value(bad)
    assert words in str(err.value)


def test_value_of_a_value_says_so() -> None:
    with pytest.raises(TypeError, match="got a Value"):
        Value(Value(1.0))


@pytest.mark.parametrize(
    "expr",
    [
        lambda v: v + "a",
        lambda v: "a" + v,
        lambda v: v * None,
        lambda v: None * v,
        lambda v: v - [1],
        lambda v: [1] - v,
        lambda v: v / "2",
        lambda v: "2" / v,
        lambda v: v ** "2",
        lambda v: "2" ** v,
        lambda v: v + True,
    ],
)
def test_ops_reject_non_numbers_on_either_side(expr) -> None:
    with pytest.raises(TypeError, match="unsupported operand|real number"):
        expr(Value(1.5))


def test_type_error_names_the_op_and_value() -> None:
    with pytest.raises(TypeError) as err:
        Value(1.5) * "x"
    assert "*" in str(err.value) and "'x'" in str(err.value)


@pytest.mark.parametrize("x", [0.0, -1.0, -1e-300])
def test_log_of_non_positive(x) -> None:
    with pytest.raises(ValueError, match=rf"log.*log\({x!r}\)"):
        Value(x).log()


def test_negative_base_with_non_integer_exponent() -> None:
    with pytest.raises(ValueError, match=r"pow: -2.0 \*\* 0.5"):
        Value(-2.0) ** 0.5
    with pytest.raises(ValueError, match="negative base"):
        Value(-2.0) ** Value(1.5)
    assert (Value(-2.0) ** 3).data == -8.0  # an integer exponent is fine


@pytest.mark.parametrize(
    "expr",
    [
        lambda: Value(1.0) / 0,
        lambda: Value(1.0) / Value(0.0),
        lambda: 1 / Value(0.0),
        lambda: Value(0.0) ** -1,
        lambda: Value(0.0) ** Value(-2.0),
    ],
)
def test_division_by_zero(expr) -> None:
    with pytest.raises(ZeroDivisionError, match="division by zero|zero to a negative power"):
        expr()


def test_overflow_is_an_error_not_a_silent_inf() -> None:
    with pytest.raises(OverflowError, match=r"exp\(1000.0\)"):
        Value(1000.0).exp()
    with pytest.raises(OverflowError, match="pow"):
        Value(1e200) ** 2


def test_nn_errors() -> None:
    with pytest.raises(ValueError, match="expects 2 inputs, got 3"):
        Neuron(2)([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="nin=0"):
        Neuron(0)
    with pytest.raises(ValueError, match="nout=0"):
        Layer(2, 0)
    with pytest.raises(ValueError, match="at least one layer"):
        MLP(2, [])
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        MLP(2, [3, 1], activation="swish")


def test_grad_errors() -> None:
    with pytest.raises(TypeError, match="output must be a Value"):
        grad(1.0, [Value(1.0)])
    with pytest.raises(TypeError, match="inputs must be Values"):
        grad(Value(1.0), [1.0])
    with pytest.raises(ValueError, match="dot: w has 2 entries but x has 1"):
        Value.dot([Value(1.0), Value(2.0)], [1.0])


@pytest.mark.slow
def test_no_assert_statements_for_user_errors_in_the_package() -> None:
    package = pathlib.Path(__file__).resolve().parents[1] / "micrograd"
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        asserts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
        assert not asserts, f"{path.name} uses assert at lines {asserts}"


def test_layer_sizes_are_whole_numbers() -> None:
    import numpy as np

    assert len(MLP(2, np.array([4, 1])).parameters()) == 17  # numpy integers are fine
    with pytest.raises(TypeError, match="whole number of neurons, got nout=2.5"):
        Layer(2, 2.5)
    with pytest.raises(TypeError, match="whole number of inputs, got nin='3'"):
        Neuron("3")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Value(10**400), "Value: got a 401-digit int (about 1e400), too large for a float"),
        (lambda: Value(-(10**5000)), "Value: got a 5001-digit int (about -1e5000)"),
        (lambda: Value(1.0) + 10**400, "the operand of +: got a 401-digit int"),
        (lambda: 10**400 * Value(1.0), "got a 401-digit int"),
        (lambda: Value(2.0) ** 10**400, "the exponent of **: got a 401-digit int"),
    ],
)
def test_numbers_too_large_for_a_float_say_what_was_given(make, words) -> None:
    with pytest.raises(OverflowError) as err:
        make()
    assert words in str(err.value) and "float64" in str(err.value)


def test_the_class_of_too_large_numbers_elsewhere() -> None:
    from micrograd import data, losses

    with pytest.raises(OverflowError, match="mse: a target is too large for a float"):
        losses.mse([1.0], [10**400])
    with pytest.raises(OverflowError, match="401-digit int"):
        losses.hinge([10**400], [1])
    with pytest.raises(ValueError, match="moons: noise is too large for a float"):
        data.moons(noise=10**400)
    with pytest.raises(ValueError, match="noise must be a finite number"):
        data.circles(noise=float("inf"))
