"""The explorer on a GPT's parts (issue 42, item 3): the Examples "Softmax and cross-entropy (the
GPT's last step)" and "One attention head". Both are listed and load on every transport (the
views themselves, the server's HTTP API, the notebook widget's and the static site's messages, the
site's baked first answers); Backward pass gives each logit pᵢ − yᵢ (the closed form, and PyTorch
float64) and the attention head's grads as PyTorch float64 does; Predict each grad names a logit's
grad given as pᵢ alone or as −yᵢ alone, through the views and in Chromium (1280 and 390 wide)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.playground.serving.messages import MessageHost
from micrograd.playground.serving.worker import Host
from micrograd.playground.views import Tab
from micrograd.site import static_site as site
from micrograd.viz.formatting import format_number as fmt
from tests.test_playground_explorer_api import post

SOFTMAX, ATTENTION = (
    next(e for e in EXAMPLES if e["title"] == title)
    for title in ("Softmax and cross-entropy (the GPT's last step)", "One attention head")
)
LOGITS, TARGET = (2.0, 1.0, 0.1), 1  # as the example writes them: class 2 (index 1) the target


def softmax_reference() -> tuple[list[float], list[float]]:
    """p and y of the example, by the closed form (math, not the engine)."""
    exps = [math.exp(z) for z in LOGITS]
    total = sum(exps)
    return [e / total for e in exps], [1.0 if i == TARGET else 0.0 for i in range(len(LOGITS))]


def named(state: dict[str, Any], loaded: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each named node's data and grad in `state`, by its name in the drawing."""
    ids = {n["name"]: n["id"] for n in loaded["drawing"]["nodes"] if n["kind"] == "value"}
    return {name: state["values"][i] for name, i in ids.items()}


# ------------------------------------------------------------------ listed and loaded everywhere


def _through_messages(host: Any, view: str, action: str, body: dict[str, Any]) -> Any:
    raw = host.receive(json.dumps({"id": 1, "view": view, "action": action, "body": body}))
    (reply,) = json.loads(raw) if isinstance(raw, str) else raw
    assert "error" not in reply, reply
    return reply["answer"]


def test_both_examples_are_listed_and_load_on_every_transport(playground: str) -> None:
    titles = {SOFTMAX["title"], ATTENTION["title"]}
    widget = MessageHost(Tab())  # the notebook widget's host: dicts in, dicts out
    transports = {
        "views": lambda action, body: Tab().call("explorer", action, body),
        "server": lambda action, body: post(playground, f"/api/explorer/{action}", body)[1],
        "widget": lambda action, body: widget.receive(
            {"id": 1, "view": "explorer", "action": action, "body": body}
        )[0]["answer"],
        "site": lambda action, body: _through_messages(Host(), "explorer", action, body),
    }
    for where, call in transports.items():
        listed = call("examples", {})["examples"]
        assert titles <= {e["title"] for e in listed}, where
        for example in listed:
            if example["title"] in titles:
                state = call("load", {"program": example["program"]})
                assert state["program"] == example["program"], where
                assert len(state["drawing"]["nodes"]) > 20, where
    # the static site's examples list is the answer baked into its pages
    baked = site.snapshot(log=lambda line: None)
    (examples,) = [b["answer"] for b in baked if b["action"] == "examples"]
    assert titles <= {e["title"] for e in examples["examples"]}


# ------------------------------------------------------------------ Backward pass


def test_each_logits_grad_is_p_minus_y_to_the_digits_shown() -> None:
    torch = pytest.importorskip("torch")
    p, y = softmax_reference()
    tab = Tab()
    loaded = tab.call("explorer", "load", {"program": SOFTMAX["program"]})
    state = tab.call("explorer", "backward", {})
    nodes = named(state, loaded)
    z = torch.tensor(LOGITS, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(z.unsqueeze(0), torch.tensor([TARGET]))
    loss.backward()
    assert nodes["L"]["data"] == pytest.approx(loss.item(), rel=1e-12)
    log = " ".join(line for step in state["log"] for line in step["lines"])
    for i in range(3):
        grad = nodes[f"z{i + 1}"]["grad"]
        assert grad == pytest.approx(p[i] - y[i], rel=1e-12, abs=1e-15)
        assert grad == pytest.approx(z.grad[i].item(), rel=1e-12, abs=1e-15)
        assert nodes[f"p{i + 1}"]["data"] == pytest.approx(p[i], rel=1e-12)
        # the chain-rule line that writes it ends in pᵢ − yᵢ as the page prints numbers
        assert re.search(rf"z{i + 1}\.grad = 0\.0000 \+ .* = {re.escape(fmt(p[i] - y[i]))} ", log)


def test_the_attention_heads_grads_are_pytorchs() -> None:
    torch = pytest.importorskip("torch")
    tab = Tab()
    loaded = tab.call("explorer", "load", {"program": ATTENTION["program"]})
    nodes = named(tab.call("explorer", "backward", {}), loaded)

    def leaf(*names: str) -> Any:
        return torch.tensor(
            [nodes[n]["data"] for n in names], dtype=torch.float64, requires_grad=True
        )

    q, ka, kb = leaf("q1", "q2"), leaf("ka1", "ka2"), leaf("kb1", "kb2")
    va, vb, t = leaf("va1", "va2"), leaf("vb1", "vb2"), leaf("t1", "t2")
    assert q.tolist() == [1.0, -0.5] and t.tolist() == [0.0, 1.0]  # the example's own numbers
    scores = torch.stack([q @ ka, q @ kb]) / math.sqrt(2.0)
    weights = torch.softmax(scores, dim=0)
    out = weights[0] * va + weights[1] * vb
    loss = ((out - t) ** 2).sum()
    loss.backward()
    assert nodes["L"]["data"] == pytest.approx(loss.item(), rel=1e-12)
    assert [nodes["wa"]["data"], nodes["wb"]["data"]] == pytest.approx(weights.tolist(), rel=1e-12)
    assert [nodes["o1"]["data"], nodes["o2"]["data"]] == pytest.approx(out.tolist(), rel=1e-12)
    for tensor, names in (
        (q, "q1 q2"),
        (ka, "ka1 ka2"),
        (kb, "kb1 kb2"),
        (va, "va1 va2"),
        (vb, "vb1 vb2"),
        (t, "t1 t2"),
    ):
        ours = [nodes[n]["grad"] for n in names.split()]
        assert ours == pytest.approx(tensor.grad.tolist(), rel=1e-12, abs=1e-15), names


# ------------------------------------------------------------------ Predict each grad


def asked_until(tab: Tab, name: str) -> dict[str, Any]:
    """Show me every step until `name`'s grad is asked; the state then."""
    state = tab.call("explorer", "state", {})
    while True:
        ask = state["predict"]["ask"]
        if ask is not None and ask["name"] == name:
            return state
        assert state["phase"] != "done", f"{name}.grad was never asked"
        state = tab.call("explorer", "reveal" if ask else "step", {})


def said(tab: Tab, value: float) -> str:
    feedback = tab.call("explorer", "answer", {"value": value})["predict"]["feedback"]
    assert not feedback["right"], feedback
    return feedback["text"]


P_ALONE = (
    "that is p{i} alone, the softmax's part: it leaves out −y{i}, the target's part "
    "(here y{i} = {y})"
)
Y_ALONE = (
    "that is −y{i} alone, the target's part: it leaves out p{i}, the softmax's part (z{i} is in "
    "every p through the sum s, so its grad has p{i} whatever the target)"
)


def test_predict_names_a_logits_grad_given_as_p_alone_or_minus_y_alone() -> None:
    p, y = softmax_reference()
    tab = Tab()
    tab.call("explorer", "load", {"program": SOFTMAX["program"]})
    tab.call("explorer", "predict", {"on": True})
    for i in (3, 2, 1):  # the order the backward pass reaches them
        asked_until(tab, f"z{i}")
        if y[i - 1]:  # the target's logit: pᵢ alone is wrong too
            assert said(tab, p[i - 1]) == P_ALONE.format(i=i, y=fmt(y[i - 1]))
            assert said(tab, round(p[i - 1], 4)) == P_ALONE.format(i=i, y=fmt(y[i - 1]))
        assert said(tab, -y[i - 1]) == Y_ALONE.format(i=i)
        assert said(tab, y[i - 1] - p[i - 1]).startswith("the size is right but not the sign")
        right = tab.call("explorer", "answer", {"value": round(p[i - 1] - y[i - 1], 4)})
        assert right["predict"]["feedback"]["right"]


def test_a_softmax_under_another_loss_gets_no_such_line() -> None:
    # The attention head's weights are a softmax too, but its loss is not cross-entropy: a
    # score's grad is not w − y there, and nothing says it is.
    tab = Tab()
    loaded = tab.call("explorer", "load", {"program": ATTENTION["program"]})
    nodes = named(tab.call("explorer", "backward", {}), loaded)
    tab.call("explorer", "reset", {})
    tab.call("explorer", "predict", {"on": True})
    asked_until(tab, "sa")
    for wrong in (nodes["wa"]["data"], 0.0, -1.0):
        line = said(tab, wrong)
        assert "softmax's part" not in line and "target's part" not in line, line


def test_the_target_as_minus_log_p_alone_is_recognised_too() -> None:
    # L = -log(p2): no y leaves (the target's y is 1), and the lines say y
    program = (
        "z1 = 2.0; z2 = 1.0; z3 = 0.1\ne1 = exp(z1); e2 = exp(z2); e3 = exp(z3)\n"
        "s = e1 + e2 + e3\np2 = e2/s\nL = -log(p2)"
    )
    p, _ = softmax_reference()
    tab = Tab()
    tab.call("explorer", "load", {"program": program})
    tab.call("explorer", "predict", {"on": True})
    asked_until(tab, "z2")
    assert said(tab, p[1]).startswith("that is p2 alone, the softmax's part: it leaves out −y,")
    assert said(tab, -1.0).startswith("that is −y alone, the target's part: it leaves out p2,")


# ------------------------------------------------------------------ in Chromium


def test_predict_names_both_mistakes_on_the_page(
    page: Any, playground: str, screenshot: Any
) -> None:
    from playwright.sync_api import expect

    from tests.support.predict_browser import WAIT, answer, asked, wrong_answer

    p, y = softmax_reference()
    page.goto(playground)
    page.wait_for_selector("body[data-ready='1']")
    page.get_by_label("Examples").select_option(label=SOFTMAX["title"])
    expect(page.locator("g.node.value[data-name='z2']")).to_have_count(1, timeout=WAIT)
    page.get_by_label("Predict each grad").check()
    step = page.get_by_role("button", name="Backward step", exact=True)
    show = page.get_by_role("button", name="Show me", exact=True)
    form = page.locator("#predict-form")
    step.click()
    while True:
        expect(form).to_be_visible(timeout=WAIT)
        if asked(page) == "z2":
            break
        show.click()
        expect(form).to_be_hidden(timeout=WAIT)
        step.click()
    expect(page.locator("g.node.asked[data-name='z2']")).to_have_count(1)
    assert wrong_answer(page, -1.0) == Y_ALONE.format(i=2)
    assert wrong_answer(page, round(p[1], 4)) == P_ALONE.format(i=2, y=fmt(1.0))
    screenshot(page, "explorer-softmax-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    assert wrong_answer(page, 0.0 - y[1]) == Y_ALONE.format(i=2)
    for el in (page.get_by_label("your z2.grad"), page.locator("#predict-feedback")):
        el.scroll_into_view_if_needed()
        r = el.bounding_box()
        assert r and r["x"] >= 0 and r["x"] + r["width"] <= 390, r
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    screenshot(page, "explorer-softmax-390")
    assert answer(page, round(p[1] - y[1], 4)) == f"Right: z2.grad = {fmt(p[1] - y[1])}."
