"""Where Python has no threads (Pyodide: the course's JupyterLite kernel), the Train widget's
runner steps its trainers as a task on the running asyncio loop (the kernel's), between the
loop's other work, as the static site's worker steps on a timer. Here CPython is told it has no
threads, and the same trainer plays, publishes frames and pauses with no thread started."""

from __future__ import annotations

import asyncio
import threading

from micrograd.playground.training import train_thread as runner_module
from micrograd.playground.training.train_thread import Runner
from micrograd.playground.training.trainer import Trainer


async def _until(condition, timeout: float = 120.0) -> None:  # an event, never a speed
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the runner never got there"
        await asyncio.sleep(0.01)


def test_without_threads_the_runner_trains_on_the_asyncio_loop(monkeypatch) -> None:
    monkeypatch.setattr(runner_module, "threads_available", lambda: False)
    before = {t.ident for t in threading.enumerate()}

    async def play() -> None:
        runner = Runner()
        tr = Trainer()
        frames: list[int] = []
        runner.add(tr, on_frame=lambda: frames.append(tr.step_no))
        tr.play()
        runner.wake()
        await _until(lambda: tr.step_no > 5 and len(frames) > 1)
        assert frames == sorted(frames)
        # the loop is free between rounds: this coroutine ran while training went on
        tr.pause()
        await asyncio.sleep(0)  # a turn under way ends
        n = tr.step_no
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert tr.step_no == n  # paused: no more steps
        tr.play()
        await _until(lambda: tr.step_no > n)
        runner.stop()
        await _until(lambda: runner._task.done())
        assert runner._thread is None

    asyncio.run(play())
    assert {t.ident for t in threading.enumerate()} <= before  # no thread was started
