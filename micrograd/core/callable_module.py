"""Modules that can be called as their main function.

`micrograd.jit` and `micrograd.check` are each a module named after the function it offers. The
package exposes the *module* (so ``import micrograd.jit as mj; mj.TraceError`` works) and makes it
callable (so ``from micrograd import jit; jit(fn)`` works too). (`micrograd.gradcheck` is the
function itself, its module an ordinary one: docs/pytorch.md.)
"""

from __future__ import annotations

import sys
import types
from typing import Any


def make_callable(module_name: str, function_name: str) -> None:
    """Calling module `module_name` calls its function `function_name`."""

    class CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, function_name)(*args, **kwargs)

    CallableModule.__call__.__doc__ = f"Call {module_name}.{function_name}."
    sys.modules[module_name].__class__ = CallableModule
