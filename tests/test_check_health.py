"""check.not_learning (chapter 9): right answers pass, each slip is named by its cause, the
diagnoses' verdicts quote micrograd's own measurements, the learner's random stream is kept."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from micrograd.check import not_learning as H
from micrograd.check.notebook import CheckFailed
from micrograd.engine import Value


def saturation(outs):
    flat = [v.data for row in outs for v in row]
    return sum(abs(t) > 0.97 for t in flat) / len(flat)


def update_data(before, after):
    return math.log10(
        statistics.pstdev([a - b for a, b in zip(after, before)]) / statistics.pstdev(before)
    )


def kaiming_std(fan_in, activation):
    return {"tanh": 5 / 3, "relu": math.sqrt(2), "linear": 1.0}[activation] / math.sqrt(fan_in)


def test_right_answers_pass(capsys: pytest.CaptureFixture) -> None:
    H.check_saturation(saturation, Value)
    H.check_update_data(update_data)
    H.check_kaiming(kaiming_std)
    H.check_diagnosis({k: n.cause for k, n in H.NETS.items()})
    out = capsys.readouterr().out
    assert out.count("✓") == 4


def test_the_formulas_are_numpys() -> None:
    for rows in H.SATURATION_POINTS:
        assert H.saturation_f(rows) == (np.abs(np.array(rows)) > 0.97).mean()
    for before, after in H.UPDATE_POINTS:
        b, a = np.array(before), np.array(after)
        assert H.update_data_f(before, after) == pytest.approx(
            np.log10((a - b).std() / b.std()), rel=1e-12
        )


@pytest.mark.parametrize(
    "wrong, said",
    [
        (lambda o: sum(v.data > 0.97 for r in o for v in r) / sum(map(len, o)), "use abs(t)"),
        (lambda o: sum(abs(v.data) >= 0.97 for r in o for v in r) / sum(map(len, o)), "strictly"),
        (lambda o: sum(abs(v.data) > 0.97 for r in o for v in r), "not their share"),
        (lambda o: 100 * saturation(o), "returns a percentage"),
        (lambda o: sum(abs(v.data) > 0.97 for r in o for v in r) / len(o), "samples (rows) only"),
        (
            lambda o: (
                sum(any(abs(r[j].data) > 0.97 for r in o) for j in range(len(o[0]))) / len(o[0])
            ),
            "saturated for some sample",
        ),
        (lambda o: sum(abs(v.data) > 0.99 for r in o for v in r) / sum(map(len, o)), "0.97"),
        (lambda o: 0.5, "the share of all the outputs"),
        (lambda o: "many", "returned 'many'; expected a number"),
        (lambda o: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_each_saturation_slip_is_named(wrong, said) -> None:
    with pytest.raises(CheckFailed, match=None) as e:
        H.check_saturation(wrong, Value)
    assert said in str(e.value) and "\n" not in str(e.value)


def _std(xs):
    return statistics.pstdev(xs)


@pytest.mark.parametrize(
    "wrong, said",
    [
        (lambda b, a: math.log10(_std([x - y for x, y in zip(a, b)]) / _std(a)), "after the step"),
        (lambda b, a: _std([x - y for x, y in zip(a, b)]) / _std(b), "its log10"),
        (lambda b, a: math.log(_std([x - y for x, y in zip(a, b)]) / _std(b)), "natural log"),
        (lambda b, a: math.log10(_std(b) / _std([x - y for x, y in zip(a, b)])), "other way"),
        (lambda b, a: math.log10(abs(_std(a) - _std(b)) / _std(b)), "value by value"),
        (lambda b, a: -3.0, "log10(std(after - before) / std(before))"),
    ],
)
def test_each_update_data_slip_is_named(wrong, said) -> None:
    with pytest.raises(CheckFailed) as e:
        H.check_update_data(wrong)
    assert said in str(e.value)


def test_ddof_one_is_as_right_as_ddof_zero() -> None:
    # the ratio of two stds of as many numbers: the n - 1 cancels
    H.check_update_data(
        lambda b, a: math.log10(
            statistics.stdev([x - y for x, y in zip(a, b)]) / statistics.stdev(b)
        )
    )


@pytest.mark.parametrize(
    "wrong, said",
    [
        (lambda n, a: kaiming_std(n, a) * math.sqrt(n) / n, "not by its square root"),
        (lambda n, a: 1 / math.sqrt(n), "leaves out the gain"),
        (lambda n, a: (5 / 3) / math.sqrt(n), "uses tanh's gain 5/3 for relu: relu's is √2"),
        (lambda n, a: kaiming_std(n, a) * n, "multiplies by √fan_in"),
    ],
)
def test_each_kaiming_slip_is_named(wrong, said) -> None:
    with pytest.raises(CheckFailed) as e:
        H.check_kaiming(wrong)
    assert said in str(e.value)


def test_a_wrong_diagnosis_is_answered_with_micrograds_numbers() -> None:
    right = {k: n.cause for k, n in H.NETS.items()}
    with pytest.raises(CheckFailed) as e:
        H.check_diagnosis({**right, "C": "learning rate too high"})
    said = str(e.value)
    assert said.startswith("net C is not 'learning rate too high': the loss before any update")
    loss0 = H.measure("C").loss[0]
    assert loss0 > 100 and f"loss {loss0:.4f} at step 1" in said
    with pytest.raises(CheckFailed, match="net A is not 'dead relus': its layers are tanh"):
        H.check_diagnosis({**right, "A": "dead relus"})
    with pytest.raises(CheckFailed, match="its layers are ReLU: no tanh to saturate"):
        H.check_diagnosis({**right, "B": "saturated tanh"})
    with pytest.raises(CheckFailed, match="'broken' is none of the causes"):
        H.check_diagnosis({**right, "B": "broken"})
    with pytest.raises(CheckFailed, match="a dict with the keys"):
        H.check_diagnosis(["saturated tanh"])


def test_the_nets_are_what_micrograds_health_says_they_are() -> None:
    from micrograd.train.diagnose import diagnose

    found = {}
    for name in H.NETS:
        hs = H.measure(name).health
        found[name] = {d.cause for k in range(len(hs)) for d in diagnose(hs[: k + 1])}
        fixed = H.measure(name, H.kaiming_f).health
        assert not any(diagnose(fixed[: k + 1]) for k in range(len(fixed))), name
    assert "saturated" in found["A"] and found["B"] == {"dead"} and "init" in found["C"]


def test_checking_leaves_the_learners_random_stream_alone() -> None:
    random.seed(123)
    state = random.getstate()
    with pytest.raises(CheckFailed):
        H.check_diagnosis({k: "healthy" for k in H.NETS})
    assert random.getstate() == state


def test_check_fixed_names_what_is_still_wrong() -> None:
    good = {"loss": 0.5, "saturation": [0.1, None], "dead": [None, None], "update_data": [-1.0]}
    first = {**good, "loss": 0.9}
    H.check_fixed({k: [first, good] for k in H.NETS})
    hot = {**good, "saturation": [0.8, None]}
    with pytest.raises(CheckFailed, match="net A is still saturated: 80%"):
        H.check_fixed({"A": [first, hot], "B": [first, good], "C": [first, good]})
    flat = {**good, "loss": 0.9}
    with pytest.raises(CheckFailed, match="net B: its loss went from 0.9000 to 0.9000"):
        H.check_fixed({"A": [first, good], "B": [first, flat], "C": [first, good]})
