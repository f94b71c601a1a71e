"""gpt.py is the course's second lecture file: read by its syntax tree, it names none of what only
jit, the browser or the pictures need (those live beside it, in jit/ and playground/), and it has
microgpt's names where they mean what his do."""

from __future__ import annotations

import ast
import inspect
import re

import micrograd.gpt as gpt_module

# What only jit (one-hot tokens, unshifted softmaxes, kept logits), the page (a hook for the
# attention weights, a cache of them) or the JavaScript target need: none of it in gpt.py.
FORBIDDEN = {
    "one_hot",
    "onehot",
    "keep",
    "kept",
    "shift",
    "check_token",
    "token_type",
    "Token",
    "_pick",
    "cache",
    "new_cache",
    "step",  # the forward pass is `forward` (Adam.step is the one step, as in optim)
    "logits_of",
    "weights",
}
FORBIDDEN_WORDS = re.compile(
    r"\b(jit|trace[sd]?|tracing|one-hot|javascript|playground|page|browser|widget|picture|"
    r"hook|shift(ed)?)\b",
    re.IGNORECASE,
)


def tree() -> ast.Module:
    return ast.parse(inspect.getsource(gpt_module))


def names_in(node: ast.AST) -> set[str]:
    """Every name the code binds or reads: variables, attributes, functions, classes, arguments
    (not the keyword names of a call into another library, e.g. random.choices(weights=...))."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def method_names(cls: ast.ClassDef) -> set[str]:
    return {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}


def test_gpt_py_names_none_of_jits_or_the_pages_concerns() -> None:
    module = tree()
    gpt_class = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "GPT")
    found = (names_in(module) - {"step"}) | method_names(gpt_class)
    assert found & FORBIDDEN == set()
    texts = [n.value for n in ast.walk(module) if isinstance(n, ast.Constant)]
    texts = [t for t in texts if isinstance(t, str)]
    assert [t for t in texts if FORBIDDEN_WORDS.search(t)] == []
    comments = [line for line in inspect.getsource(gpt_module).splitlines() if "#" in line]
    assert [c for c in comments if FORBIDDEN_WORDS.search(c.split("#", 1)[1])] == []


def test_the_forward_pass_has_microgpts_names() -> None:
    module = tree()
    gpt_class = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "GPT")
    assert {"forward", "loss", "parameters"} <= method_names(gpt_class)
    forward = next(n for n in gpt_class.body if getattr(n, "name", "") == "forward")
    assert [a.arg for a in forward.args.args] == ["self", "token_id", "pos_id", "keys", "values"]
    inside = names_in(forward)
    assert {"attn_logits", "attn_weights", "keys", "values", "q_h", "k_h", "v_h", "x_residual"} <= (
        inside
    )
    # the head index: `for h in range(self.n_head)`, its slice starting at h * head_dim
    loops = [n for n in ast.walk(forward) if isinstance(n, ast.For)]
    heads = [n for n in loops if ast.unparse(n.iter) == "range(self.n_head)"]
    assert len(heads) == 1 and ast.unparse(heads[0].target) == "h"
    # his module-level helpers, and his state_dict's names
    top = {n.name for n in module.body if isinstance(n, ast.FunctionDef)}
    assert {"linear", "softmax", "rmsnorm", "matrix", "microgpt", "sample"} <= top
    assert gpt_module.LAYER == ("attn_wq", "attn_wk", "attn_wv", "attn_wo", "mlp_fc1", "mlp_fc2")


def test_the_state_dict_is_his() -> None:
    import random

    random.seed(0)
    model = gpt_module.GPT(5, n_layer=2, n_embd=8, n_head=2, block_size=4)
    assert list(model.sd) == [
        "wte",
        "wpe",
        "lm_head",
        *(f"layer{i}.{name}" for i in range(2) for name in gpt_module.LAYER),
    ]
    shapes = {k: (len(m), len(m[0])) for k, m in model.sd.items()}
    assert shapes["wte"] == (5, 8) and shapes["wpe"] == (4, 8) and shapes["lm_head"] == (5, 8)
    assert shapes["layer1.mlp_fc1"] == (32, 8) and shapes["layer1.mlp_fc2"] == (8, 32)
    flat = [p for m in model.sd.values() for row in m for p in row]
    assert model.parameters() == flat


def test_docs_table_points_at_the_lines_that_do_it() -> None:
    """docs/gpt.md maps each part of microgpt.py to gpt.py's lines: each cited range holds the
    name the table gives it (so an edit that moves the code shows here, not to a reader)."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    table = (root / "docs" / "gpt.md").read_text()
    lines = inspect.getsource(gpt_module).splitlines()
    cited = re.findall(r"`(?:\w+\.)?(\w+)(?:\(\))?`, lines? (\d+)(?:–(\d+))?", table)
    assert len(cited) >= 15
    for name, first, last in cited:
        span = lines[int(first) - 1 : int(last or first)]
        assert any(re.search(rf"\b{name}\b", line) for line in span), (name, first, last)
