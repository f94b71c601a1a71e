"""The Train view's Health panel: makemore part 3's statistics of the run, read live, and in words.

    tap = HealthTap()                       # one per MLP run (train_mlp.MLPKind.health)
    tap.rebuilt(model, step_fn)             # a new network (each rebuild)
    mon = tap.begin()                       # before a step: a health.Monitor, or None (not due)
    ...  with recording(mon): step; mon.read_grads(); opt.step()
    tap.end(mon)                            # after the optimiser's step
    tap.frame()                             # the frame's "health" (None while the panel is shut)

The statistics are `micrograd.train.health`'s (`Monitor`) and the sentences
`micrograd.train.diagnose`'s: nothing here computes either, it only chooses which steps are read
and packs the numbers for the page (static/train/train-health.js draws them).

A step that is read costs more than one that is not, whatever the engine: the eager engine keeps
every layer's outputs and computes the statistics in Python; the numpy jit traces its program
once more to keep them, and computes them with numpy over its arrays (about one more step's time);
the JavaScript steps (the site) compute them in JavaScript (jit/health.js) and hand them back
(`Monitor.given_stats`). So the tap reads steps only while the panel is open: each of a run's
first `EVERY_STEP` steps (diagnose's window: each preset's diagnosis shows from its first
steps), then at most once a frame period (`period`: the view's frame rate), and never more often
than keeps the reads within `BUDGET` of the time (a read that took 10 ms waits 500 ms for the
next): training keeps its speed (benchmarks/bench_playground.py --health and
benchmarks/bench_site.py --health compare the panel open and shut).

`PRESETS` are the networks broken on purpose (`train.health_presets.BROKEN`): the moons demo
(`DEMO`, in the view's settings) with one thing changed; `preset(name, fixed)` gives the view's
settings and the init to apply to the network as built (`health_presets.apply_init`).

The GPT view's panel is the same tap on a GPT run (train_gpt.GPTKind.health: `Monitor` reads
each block's ReLU layer and every matrix), with `GPT_PRESETS` (`health_presets.BROKEN_GPT`:
those that apply to microgpt, `gpt_preset`) and the same drawing (static/train/train-health.js).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from ...train.diagnose import THRESHOLDS, diagnose
from ...train.health import Monitor, StepHealth
from ...train.health_presets import BROKEN, BROKEN_GPT, Broken
from .train_settings import Settings

EVERY_STEP = THRESHOLDS["window"]  # a run's first steps are read each: diagnose's whole window
BUDGET = 0.02  # past them, reading takes at most this share of the time
LINE_POINTS = 200  # update:data points kept per matrix (the oldest half thinned when full)

# The presets the Train view offers (the four), in its menu's order.
PRESETS = ("saturated_tanh", "dead_relus", "lr_too_high", "no_zero_grad")

# The presets the GPT view offers (those that apply to microgpt: health_presets.BROKEN_GPT).
GPT_PRESETS = ("dead_relus", "lr_too_high")

# The moons demo (`micrograd demo`, health_presets' base) in the Train view's settings.
DEMO = {
    "dataset": "moons",
    "points": 100,
    "noise": 0.1,
    "hidden": [16, 16],
    "activation": "relu",
    "loss": "hinge",
    "optimizer": "sgd",
    "lr": 1.0,
    "momentum": 0.0,
    "l2": 1e-4,
    "l1": 0.0,
    "batch": 0,
    "seed": 1337,
    "zero_grad": True,
    "test": 0.0,
    "added": [],
}
_INIT_KEYS = ("init_scale", "bias", "kaiming")


def preset(name: object, fixed: bool = False) -> tuple[Settings, dict[str, Any]]:
    """The Train view's settings and the init changes (`apply_init`'s arguments) of preset
    `name`, broken, or with its fix applied (`fixed`)."""
    if name not in PRESETS:
        raise ValueError(
            f"health preset: unknown preset {str(name)[:40]!r}; one of {', '.join(PRESETS)}"
        )
    p = BROKEN[str(name)]
    kw = {**p.change, **(p.fix if fixed else {})}
    init = {k: kw.pop(k) for k in _INIT_KEYS if k in kw}
    if init.get("kaiming"):  # Kaiming's init in place of the scaled one (health_presets.run_broken)
        init["init_scale"] = 1.0
    return Settings.from_dict({**DEMO, **kw}), init


def gpt_preset(name: object, settings: Any, fixed: bool = False) -> tuple[Any, dict[str, Any]]:
    """The GPT run's settings (microgpt's defaults on the run's words, `settings.docs`) and the
    init change (`health_presets.apply_gpt_init`'s arguments) of GPT preset `name`, broken, or
    with its fix applied (`fixed`)."""
    if name not in GPT_PRESETS:
        raise ValueError(
            f"health preset: unknown GPT preset {str(name)[:40]!r}; one of {', '.join(GPT_PRESETS)}"
        )
    p = BROKEN_GPT[str(name)]
    kw = {**p.change, **(p.fix if fixed else {})}
    init = {"negative_relu_inputs": kw.pop("negative_relu_inputs", False)}
    return type(settings)(docs=settings.docs, **kw), init


def presets_menu(gpt: bool = False) -> list[dict[str, str]]:
    """The presets as the page's menu shows them (the GPT view's, with `gpt`)."""
    table, names = (BROKEN_GPT, GPT_PRESETS) if gpt else (BROKEN, PRESETS)
    return [{"name": k, "title": table[k].title, "cause": table[k].cause} for k in names]


@contextlib.contextmanager
def recording(monitor: Monitor | None) -> Iterator[None]:
    """`monitor.recording()`, or nothing (no monitor: this step is not read)."""
    if monitor is None:
        yield
    else:
        with monitor.recording():
            yield


class HealthTap:
    """Which steps of a run are read (see the module docstring), and what was read."""

    def __init__(self, period: float = 0.05, presets: dict[str, Broken] = BROKEN) -> None:
        self.presets = presets  # the table the presets come from (their fixes, in words)
        self.open = False  # the page shows the panel
        self.period = period  # seconds between reads once past EVERY_STEP (the frame period)
        self.model: Any = None
        self.step_fn: Any = None
        self.preset: str | None = None  # the preset the run is ("Fix it" applies its fix)
        self.fixed = False
        self.penalties: Callable[[], tuple[float, float]] = lambda: (0.0, 0.0)
        self._reset()

    def _reset(self) -> None:
        self.steps = 0  # steps taken since the network was built
        self.history: deque[StepHealth] = deque(maxlen=THRESHOLDS["window"])
        self.lines: list[tuple[int, list[float | None]]] = []  # (step, update:data per matrix)
        self._monitor: Monitor | None = None
        self._attached = False
        self.restart_clock()
        self._reading = False  # begin() gave a monitor: end() reads the update
        self._reads = 0  # steps read since the network was built
        self._frame: tuple[tuple, dict[str, Any]] | None = None  # (its key, `frame()`'s last)

    def restart_clock(self) -> None:
        """Forget when the last step was read and what it cost: the next step is read."""
        self._last = -math.inf  # when the last step was read (time.monotonic)
        self._wait = 0.0  # seconds the next read waits, by the last one's cost (BUDGET)

    def rebuilt(
        self,
        model: Any,
        step_fn: Any,
        penalties: Callable[[], tuple[float, float]] = lambda: (0.0, 0.0),
    ) -> None:
        """A new network (or a new step of it): the health read so far is the old one's.
        `penalties()`: the step's L2 and L1 alphas as they are now (Monitor's alpha, l1)."""
        self.model, self.step_fn = model, step_fn
        self.penalties = penalties
        self._reset()

    def show(self, open_: bool) -> None:
        self.open = open_

    def begin(self) -> Monitor | None:
        """Before a step: the monitor to read it with, or None when it is not read."""
        now = time.monotonic()
        due = self.steps < EVERY_STEP or now - self._last >= max(self.period, self._wait)
        if not self.open or not due or self.model is None:
            return None
        if self._monitor is None:
            self._monitor = Monitor(self.model)
        mon = self._monitor
        mon.alpha, mon.l1 = self.penalties()  # (live: the learner may change them)
        if not self._attached and getattr(self.step_fn, "traced", False):
            # a jit step keeps the layers' outputs only in a program traced with them: trace
            # it again, inside this step's recording
            mon.attach(self.step_fn)
            self.step_fn.loss_fn.forget()
            self._attached = True
        self._last, self._reading = now, True
        return mon

    def skipped(self, n: int) -> None:
        """`n` steps taken and not read (an engine that takes many in one call)."""
        self.steps += n

    def end(self, monitor: Monitor | None) -> None:
        """After the optimiser's step: the update, and the step's health kept."""
        k = self.steps
        self.steps += 1
        if monitor is None or not self._reading:
            return
        self._reading = False
        h = monitor.read_update(k)
        self._wait = (time.monotonic() - self._last) / BUDGET  # (its step included)
        self.history.append(h)
        self._reads += 1
        self.lines.append((k, [_round(w.update_data) for w in h.weights]))
        if len(self.lines) > LINE_POINTS:  # thin the older half: the whole run stays in view
            half = len(self.lines) // 2
            self.lines = self.lines[:half:2] + self.lines[half:]

    def frame(self) -> dict[str, Any] | None:
        """The frame's ``health`` (None while the panel is shut): each layer's activation
        histogram and saturated or dead share, the update:data lines of each matrix, and the
        diagnoses of the last steps read (`train.diagnose`)."""
        if not self.open:
            return None
        # the same until a step is read or the preset changes: made once, sent by every frame
        key = (self._reads, self.preset, self.fixed)
        if self._frame is not None and self._frame[0] == key:
            return self._frame[1]
        out = self._make_frame()
        self._frame = (key, out)
        return out

    def _make_frame(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "preset": self.preset,
            "fixed": self.fixed,
            "fix": _fix_text(self.presets[self.preset].fix) if self.preset else None,
            "guide": -3.0,  # makemore's guide (drawn as a guide: our nets differ)
            "limit": THRESHOLDS["update_data"],  # the line diagnose reads
            "step": None,
            "layers": [],
            "weights": [],
            "lines": [[k, v] for k, v in self.lines],
            "diagnoses": [],
        }
        if not self.history:
            return out
        last = self.history[-1]
        out["step"] = last.step + 1  # as the page counts steps
        out["weights"] = [w.name for w in last.weights]
        for lay in last.layers:
            hist = lay.act_hist
            out["layers"].append(
                {
                    "name": lay.name,
                    "activation": lay.activation,
                    "recorded": lay.recorded,
                    "mean": _finite(lay.act_mean),
                    "std": _finite(lay.act_std),
                    "lo": _finite(hist.edges[0]) if hist else None,
                    "hi": _finite(hist.edges[-1]) if hist else None,
                    "counts": hist.counts if hist else [],
                    "saturated": lay.saturated,
                    "dead": lay.dead,
                }
            )
        out["diagnoses"] = [
            {"cause": d.cause, "where": d.where, "message": d.message}
            for d in diagnose(list(self.history))
        ]
        return out


def _finite(x: float) -> float | None:
    return float(f"{x:.6g}") if math.isfinite(x) else None  # JSON has no NaN or inf


def _round(x: float) -> float | None:
    return round(x, 3) if math.isfinite(x) else None  # a line's point: 3 decimals of log10


def _fix_text(fix: dict[str, Any]) -> str:
    """What "Fix it" does, in words."""
    parts = []
    if fix.get("kaiming"):
        parts.append("Kaiming's init (gain / √fan_in)")
    if "bias" in fix:
        parts.append(f"biases start at {fix['bias']:g}")
    if "lr" in fix:
        parts.append(f"learning rate {fix['lr']:g}")
    if fix.get("zero_grad"):
        parts.append("zero_grad() before backward()")
    if fix.get("negative_relu_inputs") is False:
        parts.append("microgpt's init again: every matrix from N(0, 0.08), both signs")
    return ", ".join(parts)


def health_action(trainer: Any, body: dict[str, Any]) -> None:
    """The Train view's ``health`` action: ``{"open": bool}`` shows or hides the panel (frames
    carry the health only while it is open); ``{"preset": name}`` starts preset `name` of
    `PRESETS` from step 0; ``{"fix": true}`` starts the current preset again with its fix
    applied. ValueError names what is wrong."""
    unknown = sorted(set(body) - {"open", "preset", "fix"})
    if unknown:
        raise ValueError(f"health takes open, preset, fix; not {str(unknown[0])[:40]!r}")
    kind = trainer.kind  # the Train view's MLPKind or the GPT view's GPTKind
    tap: HealthTap = kind.health
    if "open" in body:
        if not isinstance(body["open"], bool):
            raise ValueError(f"health: open must be true or false, got {str(body['open'])[:40]!r}")
        tap.show(body["open"])
    fix = body.get("fix", False)
    if not isinstance(fix, bool):
        raise ValueError(f"health: fix must be true or false, got {str(fix)[:40]!r}")
    if "preset" in body or fix:
        name = body.get("preset", tap.preset)
        if name is None:
            raise ValueError("health: no preset to fix: choose a broken preset first")
        if kind.name == "gpt":
            settings, init = gpt_preset(name, kind.settings, fixed=fix)
        else:
            settings, init = preset(name, fixed=fix)
        with trainer.lock:
            kind.init = init
            tap.preset, tap.fixed = str(name), fix
            trainer.configure(settings)
            trainer.reset()  # from step 0, even when only live settings changed (the rate)
    elif kind.name == "mlp":
        trainer.view()  # a paused run's frame, with or without the health, at once
    elif not trainer.playing:  # (the GPT's: a playing run's next frame has it)
        with trainer.lock:
            trainer.publish()
