"""The GPT view of one tab (`GPTView`): microgpt's GPT learning live, on a Train run
(`Trainer` with `train_gpt.GPTKind`), JSON in and out like the other views (views.py).

    view = GPTView()
    view.config({"data": "own", "words": "emma\\nolivia\\nava", "n_embd": 8})
    view.control({"action": "step", "steps": 10})
    view.attention({"word": "ava"})       # the word whose attention each frame carries
    view.state({})["frame"]["samples"]    # 20 words the model made up

Its settings are declared once, here (`FIELDS`), and sent to the page (`options()["schema"]`):
the page builds its controls and its URL from them. The data are makemore's names
(`micrograd.data.names()`: downloaded once, or carried by the site; where they cannot be had,
refused in one line, and the page offers the built-in words), the built-in words, or words the
learner pastes, one a line
(`gpt_frames.word_list`: a word, a character or a length out of range refused in one line that
names it). A word longer than the Block size reads whole is refused as the command refuses it
(`gpt_frames.check_fits`: the word, the limit and the Block size that reads it), never cut.
The model's size is held within limits that keep a step live.

Actions: options, state, config {settings}, control {action, steps}, attention {word}, model,
frames, health {open, preset, fix} (the Health panel: train_health.health_action).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any

from ... import data
from ..errors import ViewError
from ..training.run_view import RunView
from ..training.train_health import health_action, presets_menu
from ..training.trainer import Trainer
from .gpt_frames import MAX_CHARS, MAX_WORDS, check_attention_word, check_fits, word_list
from .train_gpt import MAX_STEPS, WORDS, GPTKind, GPTSettings


@dataclass(frozen=True)
class Field:
    """One setting of the GPT view: its control's label, its kind ("int", "float", "choice",
    "text") and its range or choices."""

    label: str
    kind: str
    default: Any
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()


SOURCES = {"names": "makemore's names", "builtin": "built-in words", "own": "your own words"}
WHERE = {"names": "makemore's names", "builtin": "The built-in words", "own": "Your words"}
FIELDS: dict[str, Field] = {
    "data": Field("Words", "choice", "names", choices=tuple(SOURCES)),
    "words": Field("Your words", "text", ""),  # (the page keeps them in its URL's fragment)
    "n_embd": Field("Embedding size", "int", 16, 4, 32),
    "n_head": Field("Heads", "int", 4, 1, 4),
    "n_layer": Field("Layers", "int", 1, 1, 2),
    "block_size": Field("Block size", "int", 16, 4, 16),
    "lr": Field("Learning rate", "float", 0.01, 1e-5, 1.0),
    "temperature": Field("Temperature", "float", 0.5, 0.05, 2.0),
    "steps": Field("Steps", "int", 1000, 1, MAX_STEPS),
    "seed": Field("Seed", "int", 42, 0, 2**31 - 1),
}
READS = frozenset({"options", "state", "model", "frames"})


@functools.lru_cache(maxsize=1)
def read_names() -> tuple[str, ...]:
    """makemore's names, read once (a missing file raises, and is asked again next time)."""
    return tuple(data.names())


def names_or_why() -> tuple[list[str] | None, str]:
    """makemore's names, or None and the one line the page shows instead (`data.names_file`'s:
    where they were looked for, and how to give them)."""
    try:
        return list(read_names()), ""
    except OSError as e:
        return None, f"{e} (or choose the built-in words, or paste your own)"


def schema() -> list[dict[str, Any]]:
    """The settings as the page is told them, in order: name, label, kind, default, range."""
    return [
        {**asdict(f), "name": k, "choices": [[c, SOURCES[c]] for c in f.choices]}
        for k, f in FIELDS.items()
    ]


def _number(name: str, value: object) -> float | int:
    f = FIELDS[name]
    whole = f.kind == "int"
    ok = not isinstance(value, bool) and isinstance(value, int if whole else (int, float))
    if not ok or not (math.isfinite(value) and f.min <= value <= f.max):  # type: ignore[operator, arg-type]
        what = "a whole number" if whole else "a number"
        raise ViewError(
            f"{f.label} must be {what} from {f.min:g} to {f.max:g}, got {str(value)[:40]!r}"
        )
    return value  # type: ignore[return-value]


def settings_from(body: dict[str, Any]) -> tuple[GPTSettings, dict[str, Any]]:
    """The run's settings from the page's (keys left out: the defaults; the data, the names
    where this build has them, else the built-in words), and the page's settings as they are
    kept (its words as typed). ViewError (400) names the setting or word refused."""
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise ViewError(f"no GPT setting {unknown[0][:40]!r}; the settings are {', '.join(FIELDS)}")
    page = {k: body.get(k, f.default) for k, f in FIELDS.items()}
    if "data" not in body and names_or_why()[0] is None:
        page["data"] = "builtin"  # (the names where this build has them)
    if page["data"] not in SOURCES:
        raise ViewError(
            f"Words must be one of {', '.join(SOURCES)}, got {str(page['data'])[:40]!r}"
        )
    if not isinstance(page["words"], str):
        raise ViewError("Your words must be text, one word a line")
    sizes = {k: _number(k, page[k]) for k in FIELDS if FIELDS[k].kind in ("int", "float")}
    if sizes["n_embd"] % sizes["n_head"]:
        raise ViewError(
            f"Embedding size ({sizes['n_embd']}) must be a multiple of Heads ({sizes['n_head']})"
        )
    if page["data"] == "names":
        docs, why = names_or_why()
        if docs is None:
            raise ViewError(why)
    elif page["data"] == "builtin":
        docs = list(WORDS)
    else:
        try:
            docs = list(word_list(page["words"]))
        except ValueError as e:
            raise ViewError(f"Your words: {e}") from None
    try:  # a word longer than the block size reads: refused, as the command refuses it
        check_fits(docs, sizes["block_size"], WHERE[page["data"]], FIELDS["block_size"].label)
    except ValueError as e:
        raise ViewError(str(e)) from None
    try:
        return GPTSettings(docs=tuple(docs), **sizes), page  # type: ignore[arg-type]
    except ValueError as e:
        raise ViewError(str(e)) from None


def gpt_kind(settings: GPTSettings, engine_name: str) -> GPTKind:
    """The run's model kind on the tab's engine; an engine the GPT does not train with (it
    raises ValueError naming it) falls back to the eager engine, here and nowhere else."""
    try:
        return GPTKind(settings, engine_name)
    except ValueError:
        if engine_name == "eager":
            raise
        return GPTKind(settings, "eager")


class GPTView(RunView):
    """The GPT view of one tab: a `Trainer` of `GPTKind` (made on first use, the defaults: the
    names where this build has them, else the built-in words) and its frame reader."""

    ACTIONS = ("options", "state", "config", "control", "attention", "model", "frames", "health")

    def __init__(self, jit: bool | str = True, fps: float = 20.0) -> None:
        super().__init__(jit, fps)  # (the engine: Trainer's use_jit, GPTKind's name)
        self.page: dict[str, Any] | None = None  # the page's settings, as it sent them
        self.settings: GPTSettings | None = None  # what the first trainer starts with

    def new_trainer(self) -> Trainer:
        if self.settings is None:
            self.settings, self.page = settings_from({})
        return Trainer(self.settings, use_jit=self.jit, fps=self.fps, kind=gpt_kind)

    def _answer(self) -> dict[str, Any]:
        tr = self.trainer
        run = tr.kind.settings
        page = {**(self.page or {}), **{k: getattr(run, k) for k in FIELDS if hasattr(run, k)}}
        meta = {**tr.meta(), "settings": page}  # (the page's words, not the names' 32,033)
        return {"meta": meta, "frame": tr.latest(), "word": tr.kind.word}

    def options(self, body: dict[str, Any]) -> dict[str, Any]:
        names, why = names_or_why()
        return {
            "schema": schema(),
            "names": why or None,  # the one line saying they are missing, or None
            "builtin": list(WORDS),
            "limits": {"words": MAX_WORDS, "chars": MAX_CHARS},
            "health_presets": presets_menu(gpt=True),
        }

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._answer()

    def config(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start over with these settings (keys left out: the defaults); the temperature alone
        applies to the running model."""
        settings, page = settings_from(body)
        if self.started:
            self.trainer.configure(settings)
        else:
            self.settings = settings
        self.page = page
        return self._answer()

    def health(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Health panel: ``{"open": bool}``, ``{"preset": name}`` (a GPT broken on purpose,
        microgpt's defaults on the run's words, from step 0) or ``{"fix": true}``
        (train_health.health_action)."""
        tr = self.trainer
        try:
            health_action(tr, body)
        except (ValueError, TypeError) as e:
            raise ViewError(str(e)) from None
        return self._answer()

    def attention(self, body: dict[str, Any]) -> dict[str, Any]:
        """The word whose attention each frame carries: ``{"word": "emma"}``, characters of the
        words' vocabulary."""
        tr = self.trainer
        with tr.lock:
            try:
                tr.kind.word = check_attention_word(
                    body.get("word"), tr.kind.tokenizer, tr.kind.model.block_size
                )
            except ValueError as e:
                raise ViewError(str(e)) from None
            tr.publish()  # a frame with it, playing or not
        return self._answer()
