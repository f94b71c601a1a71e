"""`micrograd.widgets.gpt(...)` (issue 42, item 1): the GPT view in a notebook cell, the page's own
files over the widget's messages. In the kernel: its settings checked as the page's, it trains on
the kernel's thread and sends the GPT view's frames; in JupyterLab: Play trains, the samples
and the attention of "emma" are drawn, Pause answers, a position's loss is shown as its program
(no explorer page beside a notebook: no link), whose grads are pᵢ − yᵢ."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

pytest.importorskip("anywidget")

from micrograd.expr import parse_program  # noqa: E402
from micrograd.widgets import PlaygroundWidget, gpt  # noqa: E402
from tests.conftest import SCREENSHOTS, watch_errors  # noqa: E402
from tests.support.jupyterlab import jupyterlab  # noqa: E402


class Wire:
    """The widget's page, played by hand: what the view sends, and what comes back."""

    def __init__(self, widget: PlaygroundWidget) -> None:
        self.widget = widget
        self.sent: list[dict[str, Any]] = []
        widget.send = self.sent.append  # type: ignore[method-assign]
        self.next_id = 0

    def call(self, action: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg = {"id": self.next_id, "view": "gpt", "action": action, "body": body or {}}
        self.widget._on_message(self.widget, msg, [])
        reply = next(m for m in self.sent if m.get("id") == self.next_id)
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["answer"]

    def frames(self) -> list[dict[str, Any]]:
        return [m["frame"] for m in self.sent if "frame" in m]


def test_a_bad_setting_is_refused_in_the_pages_words():
    with pytest.raises(ValueError, match=r"^gpt: Embedding size \(10\) must be a multiple of"):
        gpt(data="builtin", n_embd=10)
    with pytest.raises(ValueError, match=r"^gpt: Your words: line 2 \('b c'\): the character ' '"):
        gpt(data="own", words="a\nb c")


@pytest.mark.slow
def test_the_gpt_widget_trains_on_the_kernels_thread_and_sends_frames():
    widget = gpt(data="own", words="anna\nbob\nhannah", n_embd=8, n_head=2)
    wire = Wire(widget)
    widget._on_message(widget, {"frames": True, "fresh": True, "view": "gpt"}, [])
    assert wire.frames() and wire.frames()[0]["step"] == 0
    assert wire.call("state")["meta"]["vocab"] == "abhno"
    wire.call("control", {"action": "play"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(f["step"] >= 5 for f in wire.frames()):
        time.sleep(0.05)
    wire.call("control", {"action": "pause"})
    trained = [f for f in wire.frames() if f["step"] >= 5]
    assert trained and len(trained[-1]["samples"]) == 20  # frames came, unasked, as it trained
    trainer = widget.tab.gpt.trainer
    widget.close()
    assert trainer.closed


@pytest.fixture(scope="module")
def lab(tmp_path_factory: Any) -> Any:
    with jupyterlab(tmp_path_factory.mktemp("jupyterlab")) as running:
        yield running


@pytest.mark.slow
def test_the_gpt_widget_in_jupyterlab(lab: Any, browser: Any) -> None:
    name = lab.notebook(
        "gpt.ipynb", ["from micrograd.widgets import gpt\ngpt(data='builtin', n_embd=8, n_head=2)"]
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, reduced_motion="reduce")
    context.set_default_timeout(180_000)  # (a loaded machine: JupyterLab and a kernel)
    page = context.new_page()
    errors = watch_errors(page)
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(lab.url) and not r.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    root = "document.querySelector('.micrograd-widget').shadowRoot"
    try:
        lab.open_and_run(page, name)
        page.wait_for_function(
            "() => document.querySelector('.micrograd-widget')?.dataset.ready === '1'",
            polling=200,
            timeout=300_000,
        )
        widget = page.locator(".micrograd-widget")
        first = widget.locator("#samples li").all_text_contents()
        widget.locator("#play").click()
        page.wait_for_function(
            f"() => Number({root}.querySelector('#step-count').dataset.step) >= 5", timeout=300_000
        )
        widget.locator("#pause").click()
        page.wait_for_function(f"() => {root}.querySelector('#run-state').textContent === 'paused'")
        assert widget.locator("#samples li").all_text_contents() != first
        rows = page.evaluate(f"""() => [...{root}.querySelectorAll('#attention tr[data-row]')]
            .map(tr => [...tr.querySelectorAll('td[data-w]')].map(td => Number(td.dataset.w)))""")
        assert len(rows) == 2 * 5  # two heads, "emma" read as . e m m a
        assert all(math.isclose(math.fsum(r), 1.0, abs_tol=1e-9) for r in rows)
        # a position's loss: no explorer page beside a notebook, so its program, for explore()
        widget.locator("#attention tr[data-row='1'] th").first.click()
        assert widget.locator("#loss-pos").input_value() == "1"
        assert widget.locator("#open-loss").is_hidden()
        widget.locator("#loss-details summary").click()
        program = widget.locator("#loss-program").input_value()
        assert program.startswith('# "emma", position 1: having read ".e"') and "explore(" in (
            widget.locator("#loss-where").text_content() or ""
        )
        names = parse_program(program)
        names["L"].backward()
        z = {k: v for k, v in names.items() if k.startswith("logit_")}
        total = math.fsum(math.exp(v.data) for v in z.values())
        for k, v in z.items():  # pᵢ − yᵢ, the target "m" (the closed form, not the engine)
            want = math.exp(v.data) / total - (k == "logit_m")
            assert math.isclose(v.grad, want, rel_tol=1e-9, abs_tol=1e-12), k
        SCREENSHOTS.mkdir(exist_ok=True)
        widget.scroll_into_view_if_needed()
        page.locator(".jp-Cell").first.screenshot(path=str(SCREENSHOTS / "widget-gpt.png"))
    finally:
        context.close()
    assert not errors, errors
    assert not outside, outside
