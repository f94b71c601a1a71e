"""For the notebooks' exercises: `@exercise` marks a template, and `@solution` on the collapsed
solution after it stands in only while the learner's own is still that template."""

from __future__ import annotations

import sys
from typing import TypeVar

T = TypeVar("T")


def exercise(obj: T) -> T:
    """Mark a class or function as an exercise template (delete the mark once you've written it).

    While the mark is there, the `@solution` of the same name below takes over.
    """
    _decoratable(obj, "exercise")
    obj.__exercise__ = True  # type: ignore[attr-defined]
    return obj


def solution(obj: T) -> T:
    """Use this solution only if the learner has not written their own of the same name.

    The learner's own is the object of that name in the calling module's globals, unless it is
    still marked `@exercise` (a template) or is itself an earlier solution. Prints which it uses.
    """
    _decoratable(obj, "solution")
    name = obj.__name__  # type: ignore[attr-defined]
    yours = sys._getframe(1).f_globals.get(name)
    if yours is not None and not _marked(yours, "__exercise__") and not _marked(
        yours, "__solution__"
    ):
        print(f"Keeping your {name} (the solution is not used).")
        return yours
    obj.__solution__ = True  # type: ignore[attr-defined]
    print(f"Using the solution's {name} (the exercise above is still the template).")
    return obj


def _decoratable(obj: object, what: str) -> None:
    if not (isinstance(obj, type) or callable(obj)) or not hasattr(obj, "__name__"):
        raise TypeError(f"@{what} goes on a class or a function (def), got {type(obj).__name__} "
                        f"{obj!r}")


def _marked(obj: object, mark: str) -> bool:
    # Only the object's own mark: a learner's class may subclass a template.
    try:
        return bool(vars(obj).get(mark, False))
    except TypeError:  # no __dict__
        return False
