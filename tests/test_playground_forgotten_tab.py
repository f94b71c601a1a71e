"""A page whose tab the server no longer holds (restarted, or it forgot the tab among too many)
sends what it holds again, its program or its settings, and the learner's click just works
(issue 35, item 3; the server's side, a dropped tab's keepsake, is in test_playground_faults)."""

from __future__ import annotations

import time
from typing import Any

from micrograd.playground import serve


def forget(pg: Any, page: Any) -> None:
    """The server forgets the page's tab, keepsake and all, as a restarted server would."""
    sid = page.evaluate("() => sessionStorage.getItem('micrograd-session')")
    sessions = pg.sessions
    with sessions._lock:
        session = sessions._sessions.pop(sid)
        sessions._kept.clear()
    session.close()


def test_the_explorer_sends_its_program_again(page: Any) -> None:
    with serve(port=0) as pg:
        page.goto(pg.url)
        page.wait_for_selector("body[data-ready='1']")
        program = "a = 2.0\nb = -3.0\nc = a * b\nd = tanh(c)"
        page.get_by_label("Expression", exact=True).fill(program)
        page.get_by_role("button", name="Build graph").click()
        page.wait_for_function(
            "() => document.querySelectorAll('#graph-svg g.node.value').length === 4"
        )
        forget(pg, page)
        page.get_by_role("button", name="Forward pass", exact=True).click()
        page.wait_for_function(
            "() => document.querySelector('#status').textContent.includes('Forward pass done')"
        )
        assert page.locator("#graph-svg g.node.value").count() == 4
        assert (
            pg.sessions.get(
                page.evaluate("() => sessionStorage.getItem('micrograd-session')")
            ).tab.explorer.explorer.program
            == program
        )


def test_the_train_view_sends_its_settings_again(page: Any) -> None:
    with serve(port=0) as pg:
        page.goto(pg.url + "train?hidden=4&dataset=xor")
        page.wait_for_function("() => window.trainView && window.trainView.frame()")
        page.wait_for_function("() => window.trainView.meta().settings.dataset === 'xor'")
        forget(pg, page)
        # The page's event stream comes back first (its retry: 2 s), and looks at a run of the
        # defaults: that is not the page's run, which the page still sends again
        sid = page.evaluate("() => sessionStorage.getItem('micrograd-session')")
        end = time.monotonic() + 30
        while (
            sid not in pg.sessions._sessions or pg.sessions._sessions[sid].streams != 1
        ) and time.monotonic() < end:
            time.sleep(0.05)
        assert pg.sessions.get(sid).streams == 1
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function("() => window.trainView.frame().step >= 1")
        settings = pg.sessions.get(sid).tab.train.trainer.settings
        assert list(settings.hidden) == [4] and settings.dataset == "xor"
        assert page.evaluate("() => window.trainView.meta().settings.hidden") == [4]
