"""Check a learner's own micrograd: what is wrong with *your* Value class, op by op, and why.

    from micrograd import check
    report = check(Value)              # your Value class, the lecture's duck type
    report.ok, report.problems         # True/False; one line per problem
    print(report)                      # or leave it last in a notebook cell
    check(NeuronClass=Neuron, LayerClass=Layer, MLPClass=MLP)   # your nn, against micrograd.nn

`check` builds small expressions with your class and with micrograd's `Value` and compares them:
forward values and gradients of each op at several points, the op's `_backward` on its own (with
an upstream gradient that is not 1), reused nodes (``a + a``, ``a * a``), graphs where the visiting
order matters, deep and heavily shared graphs, and calling ``backward()`` twice. A problem names
the op, the expression, what it expected and what it got, and the most likely cause. Ops your class
does not define yet are listed as "not implemented yet", not as failures.

Your code never hangs the caller: each check runs under a time limit (`time_limit` seconds), and
after three checks ran out of time the rest are not run, so `check` returns within a few time
limits whatever the class does. The checks run in a child process (`timeout.isolated`; in the
caller's process on Pyodide): a SystemExit, a loop the time limit cannot stop, a fork, a flood
of prints end up as a line of the report, never in the caller. The graphs the checker builds
are small and bounded (a few thousand nodes at most) and it reads at most 64 children of a
node; a crash inside your class is reported with its traceback's last line.

Inside: `table` (the ops and their classic mistakes), `ops`, `compose` and `graphs` (the checks of
a Value class), `nets` (of Neuron, Layer, MLP), `training` and `learners` (of a training step, on
the learner's own engine), `timeout` (the one run loop: time limits, crashes as one line, the
child process), `values` (the learner's numbers read and written), `report` (one line per
cause), `notebook` (the course notebooks' own checks of grads by hand, and how a failed check
shows there), `mistakes` (what a wrong grad suggests, shared with the explorer),
`language` (chapters 7 and 8's softmax, cross-entropy, RMSNorm and attention, judged by what
they compute), `not_learning` (chapter 9's saturation, update:data, diagnoses and Kaiming's init).
"""

from __future__ import annotations

import contextlib
import numbers
import random
from collections.abc import Callable
from typing import Any

from ..core.callable_module import make_callable
from .graphs import ValueChecker
from .nets import NNChecker
from .notebook import show_plainly
from .report import CheckReport
from .timeout import DEFAULT_TIME_LIMIT, MAX_TIMEOUTS, Printed, Runner, StopChecking, isolated
from .training import check_train_step

__all__ = ["CheckReport", "check"]


def check(
    ValueClass: type | None = None,
    *,
    NeuronClass: type | None = None,
    LayerClass: type | None = None,
    MLPClass: type | None = None,
    train_step: Callable[..., Any] | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    asked: str | None = None,
) -> CheckReport:
    """Check your own Value class (and/or Neuron, Layer, MLP classes) against micrograd's.

    `ValueClass` is the lecture's duck type: ``ValueClass(2.0)`` has `data`, `grad`, `_prev`,
    `_op`, and (once you get there) `_backward` and `backward()`, plus whichever of ``+ - * / **``,
    `exp`, `tanh`, `relu`, `log`, `sigmoid` it defines. The nn classes are called as in the
    lecture: ``NeuronClass(3)``, ``LayerClass(3, 2)``, ``MLPClass(3, [4, 4, 1])``, each with
    `parameters()` (each neuron's weights, then its bias) and, if you wrote it, `zero_grad()`.

    `train_step` is your training step, ``train_step(model, xs, ys, lr)``: one lecture-style step
    (forward, loss, zero the grads, backward, ``p.data += -lr * p.grad``) returning the loss. It
    runs several times on your own engine: `MLPClass` (or the `MLP` your step's module defines),
    else the lecture's MLP built from `ValueClass` (or the Value class your step names), else
    micrograd's; each classic mistake (wrong sign, grads zeroed at the wrong time or only once,
    lr ignored, a loss carried over, another network updated, inputs moved) is named.

    `asked` is what a notebook has asked for so far, space-separated: ops (``"+ * tanh"``) or
    methods, ``backward``, ``numbers`` (``a + 2.0``). What the class lacks beyond it is one line
    of the report, "for later notebooks", not a list of things not implemented yet.

    Returns a `CheckReport`; nothing is raised for a problem in your code. `time_limit` bounds
    each check in seconds. The random module's state is restored afterwards, so a seeded notebook
    gives the same numbers whether or not it calls `check`.
    """
    given = {
        "ValueClass": ValueClass,
        "NeuronClass": NeuronClass,
        "LayerClass": LayerClass,
        "MLPClass": MLPClass,
    }
    for name, cls in given.items():
        if cls is not None and not isinstance(cls, type):
            raise TypeError(f"check: {name} must be a class, got {type(cls).__name__} {cls!r}")
    if all(cls is None for cls in given.values()) and train_step is None:
        raise TypeError(
            "check: pass your Value class, or NeuronClass=, LayerClass=, MLPClass=, train_step="
        )
    if train_step is not None and not callable(train_step):
        raise TypeError(f"check: train_step must be a function, got {type(train_step).__name__}")
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, numbers.Real)
        or not (0 < time_limit <= 600)
    ):
        raise ValueError(
            f"check: time_limit must be a number of seconds in (0, 600], got {time_limit!r}"
        )

    args = [
        f"{k}={c.__name__}" if k != "ValueClass" else c.__name__
        for k, c in given.items()
        if c is not None
    ]
    if train_step is not None:
        args.append(f"train_step={getattr(train_step, '__name__', 'fn')}")
    show_plainly()  # the cell's `assert report.ok` shows as the report's line, not a traceback
    if asked is not None and not isinstance(asked, str):
        raise TypeError(f"check: asked must be a string like '+ * tanh', got {asked!r}")
    report = CheckReport(
        f"check({', '.join(args)})", asked=None if asked is None else asked.split()
    )
    limit = float(time_limit)

    def work(beat: Callable[[bool], None] | None) -> None:
        printed = Printed()  # a debug print in the learner's ops runs thousands of times here
        state = random.getstate()
        try:
            with contextlib.redirect_stdout(printed):  # type: ignore[type-var]
                _run_checks(given, train_step, Runner(limit, beat), report)
        finally:
            random.setstate(state)
        lines, first = printed.finish()
        if lines:
            report.notes.append(
                f"your code printed {lines:,} line{'s' * (lines != 1)} while being checked "
                f"(not shown here; the first: {first[:80]!r})"
            )

    # In a child process (where there are processes): nothing the learner's code raises, loops
    # on or forks reaches this one; it is ended if it stops answering (timeout.isolated).
    report, stopped = isolated(work, report, limit)
    if stopped:
        report.add(stopped)
    return report


def _run_checks(
    given: dict[str, type | None],
    train_step: Callable[..., Any] | None,
    run: Runner,
    report: CheckReport,
) -> None:
    try:
        if given["ValueClass"] is not None:
            ValueChecker(given["ValueClass"], run, report).all()
        nn = NNChecker(run, report)
        if given["NeuronClass"] is not None:
            nn.neuron(given["NeuronClass"])
        if given["LayerClass"] is not None:
            nn.layer(given["LayerClass"])
        if given["MLPClass"] is not None:
            nn.mlp(given["MLPClass"])
        if train_step is not None:
            check_train_step(train_step, run, report, given["ValueClass"], given["MLPClass"])
    except StopChecking:
        report.add(
            f"stopped: {MAX_TIMEOUTS} checks ran out of time, so the rest were not run — "
            f"fix what never finishes (above), then check again"
        )


show_plainly()  # under IPython: a failed check is its diagnosis, not a traceback (notebook.py)
make_callable(__name__, "check")  # micrograd.check is this module, callable
