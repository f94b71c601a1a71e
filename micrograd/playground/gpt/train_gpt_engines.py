"""The engines a GPT run (`train_gpt.GPTKind`) trains with besides eager micrograd: numpy, JS.

    engine = gpt_engine(kind)            # kind.engine_name: "numpy" or "javascript" (else None)
    engine.train(seconds, playing)       # steps: [(loss, None), ...], as GPTKind.train's
    engine.sync()                        # the model's Values hold the engine's weights now

Both take microgpt's steps (`gpt.train`'s): the run's words in order, one a step, the loss,
backward, his Adam (`gpt.Adam`) with the rate decaying linearly to 0 over the run's `steps`;
their losses are eager's to rounding (a traced softmax is not shifted by its largest logit).

* `NumpyGPT`: the loss by `jit.gpt.JitGPT` (one trace per word length, numpy), backward and his
  Adam in Python, one step a call: the server and the notebook widget.
* `JavaScriptGPT`: the whole step in JavaScript (`jit.gpt.gpt_step_source`, gpt_step.js), run by
  `engines.javascript_host()` (the site's worker, or Node.js): the loss of each word length
  traced once (`jit.gpt.js_program`) when a word of that length comes up, many steps a call and
  no Python per step; the weights come back to the model's Values on `sync` (before a frame).
  A step the Health panel reads is its own step too, handing back health.py's statistics of it,
  computed there (jit/health.js) from its arrays: no second pass in Python.
"""

from __future__ import annotations

import base64
import struct
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

Results = list[tuple[float, None]]

ENGINE_NAMES = ("eager", "numpy", "javascript")


class GPTRun(Protocol):
    """What the engines read of their run (`train_gpt.GPTKind` answers it)."""

    settings: Any  # train_gpt.GPTSettings
    model: Any  # micrograd.gpt.GPT
    params: list
    adam: Any  # micrograd.gpt.Adam: its `t` is the steps taken
    docs: list[str]  # the words in the run's order
    tokenizer: Any


def check_engine(name: object) -> str:
    """`name` itself if a GPT run can train with it, else a one-line ValueError naming it."""
    if name not in ENGINE_NAMES:
        raise ValueError(
            f"GPTKind: unknown engine {name!r}; the engines are eager, numpy, javascript"
        )
    return name  # type: ignore[return-value]


def gpt_engine(run: GPTRun, name: str) -> NumpyGPT | JavaScriptGPT | None:
    """The engine `name` for this run as just built (None: eager, the kind's own step)."""
    if check_engine(name) == "numpy":
        return NumpyGPT(run)
    if name == "javascript":
        return JavaScriptGPT(run)
    return None


def lengths_met(run: GPTRun) -> list[int]:
    """The numbers of tokens the run's words are read as (each once), in the order its steps
    meet them (a word is its tokens, each read whole: GPTSettings refuses a word the block does
    not hold, `gpt_frames.check_fits`)."""
    return list(dict.fromkeys(len(w) + 2 for w in run.docs))


class NumpyGPT:
    """microgpt's step with the loss on jit's numpy target (see the module docstring): the
    trace's gradient read off its node (no graph to backward() through) and his Adam over
    arrays, each element his arithmetic (so his numbers, to the bit, from the same grads)."""

    def __init__(self, run: GPTRun) -> None:
        import numpy as np

        from ...jit.gpt import JitGPT

        self.np, self.run = np, run
        self.jit = JitGPT(run.model, relus=True)  # (the Health panel reads its ReLUs: `read`)
        self.lengths: set[int] = set()  # traced by `prepare` (a step traces its own)
        self.index = {id(p): i for i, p in enumerate(run.params)}
        self.places: dict[int, Any] = {}  # tokens a word is read as -> its captured's indices
        self.P = np.array([p.data for p in run.params])
        self.m, self.v = np.zeros_like(self.P), np.zeros_like(self.P)

    def train(
        self, seconds: float, playing: Callable[[], bool], one: bool = False, monitor: Any = None
    ) -> Results:
        """One step (the pacer's loop asks again while there is time): none once the `steps`
        are taken. (`one`: one step, as always here.) `monitor`: a train.health.Monitor of the
        model that reads this step from the engine's arrays (its ReLUs' outputs kept by the
        program, the grads, the weights before and after): no second pass."""
        np, run = self.np, self.run
        adam = run.adam
        t = adam.t
        if t >= run.settings.steps:
            return []
        tokens = run.tokenizer.encode(run.docs[t % len(run.docs)])
        n = len(tokens)  # (at most block_size + 1: GPTSettings' check_fits)
        node = self.jit.jitted(self.jit.batch([tokens]))  # op 'jit': the captured as children
        places = self.places.get(n)
        if places is None:
            places = self.places[n] = np.array([self.index[id(v)] for v in node._prev])
        grad = np.zeros_like(self.P)
        grad[places] = node._local
        if monitor is not None:  # (the data before the step, its grads; after it: self.P)
            monitor.given(self.jit.relu_outputs(), run.params, self.P, grad, lambda: self.P)
            monitor.read_grads()
        # gpt.Adam.step, over arrays
        b1, b2 = adam.betas
        lr = adam.lr * (1 - t / adam.steps)
        adam.t = t = t + 1
        self.m = b1 * self.m + (1 - b1) * grad
        self.v = b2 * self.v + (1 - b2) * grad**2
        m_hat = self.m / (1 - b1**t)
        v_hat = self.v / (1 - b2**t)
        self.P -= lr * m_hat / (v_hat**0.5 + adam.eps)
        for p, x in zip(run.params, self.P.tolist()):
            p.data = x  # (the next trace reads them)
        return [(node.data, None)]

    def prepare(self, seconds: float) -> bool:
        """Trace the lengths the run meets next, in that order, for about `seconds` (one at
        least, if one is missing): True when every length of its words is traced."""
        return _prepare(self, seconds, self._trace)

    def _trace(self, n: int) -> None:
        self.jit.losses([[self.run.tokenizer.bos] * n])  # (its tokens: any, the trace is data)
        self.lengths.add(n)

    def sync(self) -> None:
        """(The weights are the model's own Values already.)"""

    def weights_finite(self) -> bool:
        return bool(self.np.isfinite(self.P).all())


# A model shape's programs, by (shape, tokens a word is read as): (source, captured indices).
# Reset and New weights keep the shape, so their runs trace nothing again.
_PROGRAMS: OrderedDict[tuple, tuple[str, list[int]]] = OrderedDict()
_KEEP_PROGRAMS = 64
# A host's compiled step for a run, and the lengths loaded into it: (host, run) -> (shape,
# call, lengths). A rebuild of the same shape keeps its compiled programs.
_STEPS: OrderedDict[tuple[int, int], tuple[tuple, Callable[..., Any], set[int]]] = OrderedDict()
_KEEP_STEPS = 4


class JavaScriptGPT:
    """microgpt's whole step in JavaScript (see the module docstring)."""

    def __init__(self, run: GPTRun, host: Any = None) -> None:
        from ...jit.gpt import gpt_step_source
        from ...train.health import Monitor
        from ..training.engines import javascript_host

        self.run = run
        self.host = host or javascript_host()
        model, s = run.model, run.settings
        self.shape = tuple(sorted(model.config().items()))
        key = (id(self.host), id(run))
        kept = _STEPS.pop(key, None)
        if kept is None or kept[0] != self.shape:
            kept = (self.shape, self.host.compile(gpt_step_source()), set())
        _STEPS[key] = kept
        while len(_STEPS) > _KEEP_STEPS:
            _STEPS.popitem(last=False)
        _, self.call, self.lengths = kept
        tokens: list[int] = []
        offsets = [0]
        for word in run.docs:
            tokens.extend(run.tokenizer.encode(word))
            offsets.append(len(tokens))
        adam = run.adam
        self.call(
            "set",
            {
                "params": [p.data for p in run.params],
                "tokens": tokens,
                "offsets": offsets,
                "vocab": model.vocab_size,
                "cut": model.block_size + 1,
                "steps": s.steps,
                "lr": adam.lr,
                "betas": list(adam.betas),
                "eps": adam.eps,
                "health": Monitor(model).layout(run.params),  # (what a step read hands back)
            },
        )
        self.t = 0  # the steps the engine has taken
        self.rate = 100.0  # steps a second, measured: how many to ask for
        self.stale = False  # the model's Values are behind the engine's weights
        self.finite = True

    def load(self, n: int) -> None:
        """The program of words read as `n` tokens, traced (once per shape) and compiled there."""
        from ...jit.gpt import js_program

        key = (self.shape, n)
        got = _PROGRAMS.get(key)
        if got is None:
            got = _PROGRAMS[key] = js_program(self.run.model, n)
            while len(_PROGRAMS) > _KEEP_PROGRAMS:
                _PROGRAMS.popitem(last=False)
        source, captured = got
        self.call("program", {"n": n, "source": source, "captured": captured})
        self.lengths.add(n)

    def prepare(self, seconds: float) -> bool:
        """Trace and compile the lengths the run meets next, in that order, and then the
        longest (`sample` reads it), for about `seconds` (one at least, if one is missing): a
        page calls it while the run waits (before Play, between frames), so that Play steps at
        once. True when every length is there."""
        return _prepare(self, seconds, self.load, [self.run.model.block_size + 1])

    def sample(self, temperature: float, table: list[list[float]]) -> list[list[int]]:
        """A word's tokens for each row of `table`, drawn in JavaScript from the engine's
        weights as `gpt_frames.sample_words` draws them (the logits its programs keep: a
        forward pass a letter, no backward, no graph), to rounding: the same words."""
        got = self.call("sample", {"temperature": temperature, "uniforms": table})
        if got["need"] is not None:
            self.load(got["need"])
            got = self.call("sample", {"temperature": temperature, "uniforms": table})
        return got["words"]

    def train(
        self, seconds: float, playing: Callable[[], bool], one: bool = False, monitor: Any = None
    ) -> Results:
        """Steps for about `seconds` (at least one; exactly one with `one`), in as few calls as
        the lengths allow: a word whose length has no program yet stops a call, and it is
        traced before the next; none once the `steps` are taken. `monitor`: a
        train.health.Monitor of the model that reads the next step (one step), from the
        statistics the step hands back (health.js, over its own arrays: its ReLUs' outputs kept
        by the program, the grads, the weights before and after): no second pass."""
        if monitor is not None:
            return self._read(monitor)
        left = self.run.settings.steps - self.t
        if left <= 0:
            return []
        want = 1 if one else max(1, min(left, 100_000, int(self.rate * seconds * 1.5) + 1))
        out: Results = []
        start = time.monotonic()
        stepping = 0.0  # the seconds of the calls that step (not the traces between them)
        while True:
            began = time.monotonic()
            left_s = max(0.0, seconds - (began - start))
            got = self.call("train", {"steps": want - len(out), "seconds": left_s})
            stepping += time.monotonic() - began
            out.extend((float(x), None) for x in got["losses"])
            self.t, self.finite, self.stale = got["t"], got["finite"], True
            need = got["need"]
            if need is None or len(out) >= want or not self.finite:
                break
            if out and (time.monotonic() - start >= seconds or not playing()):
                break  # (the next call traces it)
            self.load(need)
        if out and stepping > 0.002 and not one:
            self.rate = 0.5 * self.rate + 0.5 * len(out) / stepping
        return out

    def _read(self, monitor: Any) -> Results:
        got = self.call("read")
        if got["need"] is not None:  # (the word's length has no program yet)
            self.load(got["need"])
            got = self.call("read")
        self.t, self.finite, self.stale = got["t"], got["finite"], True
        if not got["losses"]:  # (the run's steps are taken)
            return []
        monitor.given_stats(got["health"])
        monitor.read_grads()
        return [(float(got["losses"][0]), None)]

    def weights_finite(self) -> bool:
        return self.finite  # (the engine's answer: no need to read the weights back)

    def sync(self) -> None:
        """The engine's weights into the model's Values, and its step count into the run's Adam
        (`adam.t`: the frame's step and rate read it). Grads stay 0, as after his Adam's step."""
        if not self.stale:
            return
        state = self.call("state")
        raw = base64.b64decode(state["params"])
        for p, x in zip(self.run.params, struct.unpack(f"<{len(raw) // 8}d", raw)):
            p.data = x
        self.run.adam.t = state["t"]
        self.stale = False


def _prepare(
    engine: NumpyGPT | JavaScriptGPT,
    seconds: float,
    trace: Callable[[int], None],
    then: list[int] = [],  # noqa: B006 (read, never changed)
) -> bool:
    start, traced = time.monotonic(), False
    for n in dict.fromkeys([*lengths_met(engine.run), *then]):
        if n in engine.lengths:
            continue
        if traced and time.monotonic() - start >= seconds:
            return False
        trace(n)
        traced = True
    return True
