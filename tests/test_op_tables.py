"""What is said of an op besides its maths lives with its reader, in one table keyed by the op's
name: the pictures' words (names.WORDS), the activations (nn.ACTIVATION_OPS), PyTorch's modules
(io.TORCH_MODULES), jit's kernels (jit_plan.KERNELS), the tracer's op code (watch.code_roles).
Each is held complete against the registry here, and engine.py, the file that defines `Value`,
names none of these concerns."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import torch

from micrograd import engine
from micrograd.core import compiled
from micrograd.core.names import WORDS
from micrograd.engine import OPS, Value
from micrograd.io import TORCH_MODULES
from micrograd.jit import watch
from micrograd.jit.plan import KERNELS
from micrograd.nn import ACTIVATION_OPS, ACTIVATIONS

from .support.optable import BY_NAME

ENGINE = Path(engine.__file__)
ANY_ARITY = {k for k, info in OPS.items() if info.arity is None}  # dot, sum


def test_the_pictures_words_cover_every_op_of_any_number_of_children_and_only_ops() -> None:
    assert set(WORDS) == ANY_ARITY
    for kind, words in WORDS.items():
        assert words.caption and words.rule, kind
        assert OPS[kind].formula == words.rule  # what the checker and the playground show


def test_jit_has_a_kernel_for_every_op_of_any_number_of_children_and_only_those() -> None:
    assert set(KERNELS) == ANY_ARITY
    assert set(KERNELS.values()) <= {"weighted sum", "sum"}  # the two jit_graph plans
    assert all(OPS[k].forward is None for k in KERNELS)  # the rest run by their forward rules


def test_every_activation_is_an_op_of_one_input_with_a_title_and_an_equation() -> None:
    assert set(ACTIVATION_OPS) <= set(OPS)
    for kind, (title, equation) in ACTIVATION_OPS.items():
        assert OPS[kind].arity == 1 and OPS[kind].forward is not None, kind
        assert title and equation, kind
    titles = [title for title, _ in ACTIVATION_OPS.values()]
    assert len(set(titles)) == len(titles)
    # nn.ACTIVATIONS, what MLP(..., activation=name) takes: these ops by method name, and linear
    named = {OPS[k].method.__name__: k for k in ACTIVATION_OPS}
    assert list(ACTIVATIONS) == [*named, "linear"]
    for name, kind in named.items():
        act = ACTIVATIONS[name]
        assert act.op is OPS[kind] and (act.title, act.equation) == ACTIVATION_OPS[kind]
        assert getattr(Value, name) is act.apply


@pytest.mark.parametrize("kind", sorted(ACTIVATION_OPS))
def test_every_activation_has_its_pytorch_module_computing_the_same_function(kind: str) -> None:
    assert set(TORCH_MODULES) == set(ACTIVATION_OPS)
    module = TORCH_MODULES[kind](torch)
    assert isinstance(module, torch.nn.Module)
    truth = BY_NAME[OPS[kind].method.__name__].torch  # the op table's PyTorch function
    xs = [-800.0, -3.0, -0.5, -0.0, 0.0, 0.25, 2.0, 30.0, 45.0, 800.0, math.inf, -math.inf]
    t = torch.tensor(xs, dtype=torch.float64)
    assert module(t).tolist() == truth(t).tolist()


def _reads_of_data() -> dict[str, ast.AST]:
    """engine.py's functions that read a Value's `.data` (not store it), by qualified name."""
    tree = ast.parse(ENGINE.read_text(encoding="utf-8"))
    found = {}
    scopes = [(node, "") for node in tree.body]
    while scopes:
        node, prefix = scopes.pop()
        if isinstance(node, ast.ClassDef):
            scopes += [(child, f"{prefix}{node.name}.") for child in node.body]
        elif isinstance(node, ast.FunctionDef):
            reads = any(
                isinstance(n, ast.Attribute) and n.attr == "data" and isinstance(n.ctx, ast.Load)
                for n in ast.walk(node)
            )
            if reads:
                found[prefix + node.name] = node
    return found


def test_the_tracer_knows_every_function_of_the_engine_that_reads_a_number_for_an_op() -> None:
    # A read of .data by an op's code is the op, which jit replays; any other read is the
    # program deciding something. jit/watch.py decides which code is an op's: every function of
    # engine.py that reads a number must be there, but __repr__ (it shows the number to you).
    readers = {}
    for name in _reads_of_data():
        obj = engine
        for part in name.split("."):
            obj = getattr(obj, part)
        if obj.__class__.__name__ == "builtin_function_or_method":  # the compiled core's
            obj = compiled.PYTHON[part]  # the Python method it replaced, its fallback
        readers[name] = getattr(obj, "__func__", obj)
    assert {"Value.dot", "Value.__truediv__", "_node", "_finite"} <= set(readers)
    op_code = set(watch.code_roles()["op"])
    for name, fn in readers.items():
        assert (fn in op_code) is (name != "Value.__repr__"), name


# Each op's maths is declared once, on its method in engine.py; what the pictures, PyTorch, jit's
# planner and the tracer say of it is not (keywords or names of the old declaration included).
FOREIGN = {
    "caption",
    "equation",
    "activation",
    "torch",
    "torch_module",
    "kernel",
    "formula",
    "words",
    "part_of_an_op",
    "code_roles",
    "watch",
    "tracing",
}


def test_the_file_that_defines_value_names_no_picture_pytorch_or_tracer_concern() -> None:
    tree = ast.parse(ENGINE.read_text(encoding="utf-8"))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            used.add(node.arg)
        elif isinstance(node, ast.alias):
            used.update(node.name.split("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            used.update(node.module.split("."))
    assert not used & FOREIGN
