"""`GPTKind`: a Train run's model kind for microgpt's GPT (micrograd/gpt.py) on a list of words.

    tr = Trainer(GPTSettings(docs=("emma", "olivia", "ava")), kind=GPTKind)
    tr.step(20)                         # microgpt's steps: one word each, backward(), his Adam
    tr.frame()["samples"]               # 20 words drawn from the model at `temperature`
    tr.kind.word = "ava"                # the word whose attention each frame carries

The same run, pacer and frames as the Train view's MLP (trainer.py): only the model differs.
Each step is `gpt.train`'s: the words shuffled after the seed, as `gpt.prepare` does, one word
a step in that order, his Adam with the learning rate decaying linearly to 0 over `steps`; the
run's losses are `microgpt(docs, steps, seed)`'s. When the `steps` are taken the run stops
playing (the rate has reached 0). The global `random` is left as it was: the seed's stream is
drawn under a lock and put back.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ... import io
from ...gpt import GPT, Adam, Tokenizer
from ...train.health_presets import BROKEN_GPT, apply_gpt_init
from ..training.train_health import EVERY_STEP, HealthTap, recording
from .gpt_frames import (
    RunningMean,
    attention,
    check_fits,
    default_word,
    embedding_2d,
    sample_words,
    uniforms,
)
from .train_gpt_engines import JavaScriptGPT, check_engine, gpt_engine

_RANDOM_LOCK = threading.Lock()  # microgpt draws from the global `random`: one build at a time

# A few of makemore's names (names.txt is not shipped): enough to watch the loss fall.
WORDS = ("emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn")
SAMPLES = 20  # words drawn each frame
PICTURES_EVERY = 5  # while playing: the pictures take at most 1/5 of the time (`frame`)
PICTURES_APART = 0.125  # seconds, at least (by halves: new samples at most 4 times a second)
PARTS = ("words", "embedding")  # the pictures' halves (`pictures`)
MAX_STEPS = 100_000


@dataclass(frozen=True)
class GPTSettings:
    """Everything that defines a GPT run. Same settings, same run."""

    docs: tuple[str, ...] = WORDS  # the words it learns, one a step
    n_layer: int = 1
    n_embd: int = 16
    n_head: int = 4
    block_size: int = 16
    lr: float = 0.01  # Adam's first rate, decaying linearly to 0 at `steps`
    steps: int = 1000
    temperature: float = 0.5  # the samples' softmax(logits / temperature)
    seed: int = 42  # the words' shuffle and the initial weights, as microgpt's seed

    def __post_init__(self) -> None:
        Tokenizer(self.docs)  # a word list it cannot read: its error, naming what is wrong
        if isinstance(self.block_size, bool) or not (
            isinstance(self.block_size, int) and self.block_size >= 1
        ):
            raise ValueError(f"GPTSettings: block_size must be >= 1, got {self.block_size!r}")
        check_fits(self.docs, self.block_size, "GPTSettings: docs", "block_size")  # never cut
        if not 1 <= self.steps <= MAX_STEPS:
            raise ValueError(f"GPTSettings: steps must be 1 to {MAX_STEPS}, got {self.steps!r}")
        if not (math.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"GPTSettings: temperature must be > 0, got {self.temperature!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"GPTSettings: lr must be > 0, got {self.lr!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["docs"] = list(self.docs)
        return d


class GPTKind:
    """microgpt's GPT on a list of words (see the module docstring). `engine_name`: "eager"
    (one graph a step, here), "numpy" or "javascript" (train_gpt_engines.py: the same steps on
    jit, the latter many a call in JavaScript; `sync()` brings its weights to the model)."""

    name = "gpt"
    LIVE = frozenset({"temperature"})  # the samples' temperature applies to the running model
    LABELS = {
        "docs": "Words",
        "n_layer": "Layers",
        "n_embd": "Embedding size",
        "n_head": "Heads",
        "block_size": "Block size",
        "lr": "Learning rate",
        "steps": "Steps",
        "temperature": "Temperature",
        "seed": "Seed",
    }

    def __init__(self, settings: GPTSettings, engine_name: str = "eager") -> None:
        self.engine_name = check_engine(engine_name)
        self.config_id = 0
        self.word = ""  # the word whose attention a frame carries (rebuild picks one)
        # A transport with one thread (the site's worker) sets `later`: a paused frame (Pause,
        # Step) goes at once without the pictures, `owed`, and `publish_owed` sends them next.
        self.later = False
        self.owed = False
        # the Health panel's reads (train_health.py) and a Health preset's init (apply_gpt_init)
        self.health = HealthTap(presets=BROKEN_GPT)
        self.init: dict = {}
        self.rebuild(settings)

    def rebuild(self, settings: GPTSettings) -> None:
        self.settings = s = settings
        docs = list(s.docs)
        with _RANDOM_LOCK:
            state = random.getstate()
            random.seed(s.seed)  # as gpt.prepare: the shuffle, then the weights, in his order
            try:
                random.shuffle(docs)
                self.tokenizer = Tokenizer(docs)
                self.model = GPT(
                    self.tokenizer.vocab_size, s.n_layer, s.n_embd, s.n_head, s.block_size
                )
                apply_gpt_init(self.model, **self.init)
            finally:
                random.setstate(state)
        self.docs = docs
        self.known = frozenset(docs)  # a sample among them is not new
        self.params = self.model.parameters()
        self.adam = Adam(self.params, s.steps, lr=s.lr)
        self.running = RunningMean()
        self.pictures_at, self.pictures_cost = -math.inf, 0.0  # when drawn, in how long
        self.turn = 0  # pictures drawn while playing: which half comes next (PARTS)
        fits = len(self.word) < s.block_size and set(self.word) <= set(self.tokenizer.chars)
        if not self.word or not fits:
            self.word = default_word(self.tokenizer, s.docs)  # (a word it can read is kept)
        self.engine = gpt_engine(self, self.engine_name)  # None: eager, `train` below
        self.health.rebuilt(self.model, None)
        self.config_id += 1

    def live(self, settings: GPTSettings) -> None:
        self.settings = settings

    def train(self, seconds: float, playing: Callable[[], bool]) -> list[tuple[float, None]]:
        """One step (`gpt.train`'s): the next word's loss, backward(), Adam; none once the
        `steps` are taken (the rate is 0). Another engine: its steps, as many as fit. A step
        the Health panel reads (`health.begin()`) is read as train_health.py says: one a call
        in a run's first steps, then the first of the slice's steps."""
        # (the steps taken: the JavaScript engine's own count, its Adam's `t` comes on `sync`)
        taken = self.engine.t if isinstance(self.engine, JavaScriptGPT) else self.adam.t
        mon = self.health.begin() if taken < self.settings.steps else None
        if mon is not None:
            start = time.monotonic()
            steps = self._read_step(mon)
            seconds -= time.monotonic() - start
            if self.engine is not None and self.health.steps >= EVERY_STEP and playing():
                more = self.engine.train(seconds, playing) if seconds > 0 else []
                self.health.skipped(len(more))
                steps += more
        elif self.engine is not None:
            steps = self.engine.train(seconds, playing)
            self.health.skipped(len(steps))
        else:
            steps = self._eager_step()
            self.health.skipped(len(steps))
        for loss, _ in steps:
            self.running.add(loss)
        return steps

    def _eager_step(self, mon: Any = None) -> list[tuple[float, None]]:
        t = self.adam.t
        if t >= self.settings.steps:
            return []
        word = self.docs[t % len(self.docs)]  # (each read whole: GPTSettings' check_fits)
        loss = self.model.loss(self.tokenizer.encode(word))
        loss.backward()
        if mon is not None:
            mon.read_grads()  # (before his Adam's step: it zeroes the grads)
        self.adam.step()  # (and zero_grad)
        return [(loss.data, None)]

    def _read_step(self, mon: Any) -> list[tuple[float, None]]:
        """One step the Health panel reads (`mon`: a health.Monitor of the model). Eager: the
        step itself, recorded. numpy and JavaScript: the engine's step itself, read from its
        arrays (its program keeps the ReLUs' outputs; the JavaScript step computes the
        statistics there, health.js, and hands them back)."""
        if self.engine is None:
            with recording(mon):
                steps = self._eager_step(mon)
        else:
            steps = self.engine.train(0.0, lambda: False, one=True, monitor=mon)
        if steps:  # (none: the run's steps were all taken, nothing was read)
            self.health.end(mon)
        return steps

    def weights_finite(self) -> bool:
        if self.engine is not None:
            return self.engine.weights_finite()
        return math.isfinite(sum(p.data for p in self.params))

    def prepare(self, seconds: float) -> bool:
        """Trace the engine's programs of the word lengths to come, for about `seconds` (while
        the run waits: Play then steps at once); True when all are ready (eager: always)."""
        return self.engine is None or self.engine.prepare(seconds)

    def sync(self) -> None:
        """The model's Values and `adam.t` as the engine has them (before reading either)."""
        if self.engine is not None:
            self.engine.sync()

    def frame_seconds(self, fps: float) -> float:
        self.health.period = 1.0 / fps  # health: read at most as often as frames go
        return 1.0 / fps  # a frame is cheap: its pictures come only now and then (`frame`)

    def meta(self) -> dict[str, Any]:
        return {
            "kind": self.name,
            "config_id": self.config_id,
            "settings": self.settings.to_dict(),
            "vocab": self.tokenizer.decode(range(self.tokenizer.bos)),
            "params": len(self.params),
            "words": len(self.docs),
        }

    def frame(self, playing: bool) -> dict[str, Any]:
        """The running mean of the loss and its curve; and, when paused or when their time has
        come, the pictures (`pictures`). A frame without them keeps the page's last ones."""
        cheap = {
            "mean": self.running.mean,
            "means": self.running.series(),
            "health": self.health.frame(),  # (None while the Health panel is shut)
        }
        # 20 words sampled are a forward pass a letter (eagerly a quarter of a second in CPython;
        # the JavaScript engine's own step draws them in milliseconds): while playing, the
        # pictures take at most 1 part in PICTURES_EVERY of the time, so the steps and the loss
        # go on at the frame rate.
        wait = max(PICTURES_EVERY * self.pictures_cost, PICTURES_APART)
        if playing and time.monotonic() - self.pictures_at < wait:
            return cheap
        if not playing and self.later:
            self.owed = True
            return cheap
        start = time.monotonic()
        self.sync()
        if not self.weights_finite():  # diverged: nothing to sample (the run says why)
            return cheap
        # playing, the pictures come in two halves by turns (a turn is what Pause may wait for)
        part = PARTS[self.turn % 2] if playing else None
        self.turn += playing
        pictures = self.pictures(part)
        self.pictures_at = time.monotonic()
        self.pictures_cost = self.pictures_at - start
        return {**cheap, **pictures, "self_paced": self.pictures_cost}  # (train_publish.py)

    def publish_owed(self, publish: Callable[[], None]) -> bool:
        """The pictures a paused frame left out (`later`), in a frame of their own (`publish`:
        the run's, under its lock): True if there were any."""
        if not self.owed:
            return False
        self.owed, self.later = False, False
        try:
            publish()
        finally:
            self.later = True
        return True

    def pictures(self, part: str | None = None) -> dict[str, Any]:
        """The samples (`new`: each one not among the words it learns), the rate and the
        attention on `word` (part "words"); the characters' embeddings in 2D (part
        "embedding"); both when `part` is None."""
        if part == "embedding":
            return {"embedding": embedding_2d(self.model, self.tokenizer)}
        s, tok = self.settings, self.tokenizer
        table = uniforms(self.adam.t, SAMPLES, s.block_size)  # the same step: the same samples
        sampler = getattr(self.engine, "sample", None)  # (one that runs the model, in its step)
        if sampler is not None:
            drawn = sampler(s.temperature, table)
        else:
            drawn = sample_words(self.model, tok, s.temperature, table)
        words = [tok.decode(w) for w in drawn]
        return {
            "pictures_step": self.adam.t,  # the step they show (a frame without them: earlier)
            "samples": words,
            "new": [w not in self.known for w in words],
            "lr": self.adam.lr * (1 - self.adam.t / self.settings.steps),
            "attention": attention(self.model, self.tokenizer, self.word),
            **({} if part else {"embedding": embedding_2d(self.model, self.tokenizer)}),
        }

    def model_json(self) -> str:
        self.sync()
        return io.dumps(self.model, "the model")
