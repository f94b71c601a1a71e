"""Benchmark: the playground's training view, live, at every size the page offers.

What a learner gets after pressing Play: training steps per second, frames per second reaching
the page (each with a 50x50 decision grid, a heat map per hidden neuron at the size of its square,
every weight's link, and the chosen point's graph while it is in sight), their size, how long a
Pause takes to answer while training runs, and the wall time from Play until a frame shows 100%
accuracy. Networks: the smallest the page allows (no hidden layer), its default (2-8-8-1, tanh),
karpathy's moons net (2-16-16-1, ReLU) and the largest (6 hidden layers of 32, also with its
gradients drawn on the links); each with micrograd.jit and with the eager engine (no numpy, or
``micrograd playground --no-jit``).

By default it goes through a real server (`micrograd.playground.serve`), as the page does: POST
the settings, POST Play, read the Server-Sent Events stream. ``--direct`` reads the trainer's
frame stream in-process instead (no HTTP). ``--browser`` also opens each run's page in Chromium
(Playwright) and counts the frames the page draws (it draws the newest frame once per screen
refresh). Targets from the issues: >= 15 frames/s drawn at every size (and >= 50 steps/s at the
largest), a Pause answered within 100 ms, 100% accuracy in < 5 s.

With ``--gpt``, the GPT view instead (/gpt, microgpt's model on numpy, its own section of
RESULTS.md, ``bench_playground_gpt``), through the server, on the built-in words and on
makemore's names where ``MICROGRAD_NAMES_FILE`` names them: the first 20 steps' losses (Step)
against Python's ``microgpt(docs, 20, 42)``, then Play for ``--seconds`` (steps: 100,000):
steps a second (all of it, and its second half: the first traces the word lengths as it meets
them), frames a second sent, the running mean at the end and Pause.

    python3 benchmarks/bench_playground.py [--seconds 3] [--eager-seconds 6] [--direct] [--browser]
    python3 benchmarks/bench_playground.py --gpt [--seconds 10]
    python3 benchmarks/bench_playground.py --health 5 [--seconds 3]   # the Health panel's cost
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
import urllib.request
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MOONS = {"dataset": "moons", "points": 100, "noise": 0.1, "hidden": [16, 16]}
# The networks measured: (name, settings, what the page shows); settings left out are the page's
# defaults.
SIZES = [
    ("smallest: no hidden layer", {"hidden": []}, {}),
    ("the page's default: 2-8-8-1 tanh", {}, {}),
    ("karpathy's moons net: 2-16-16-1 ReLU", {**MOONS, "activation": "relu"}, {}),
    ("largest: 6 hidden layers of 32", {"hidden": [32] * 6}, {}),
    ("largest, gradients on the links", {"hidden": [32] * 6}, {"grads": True}),
]


# ------------------------------------------------------------------ two ways to watch a run


class Direct:
    """No server: the trainer advanced by a runner thread, as the server does, its frames read
    by a cursor in-process."""

    def __init__(self, use_jit: bool | str, settings: dict, shown: dict, gpt: bool = False) -> None:
        from micrograd.playground.training.train_publish import FrameCursor
        from micrograd.playground.training.train_settings import Settings
        from micrograd.playground.training.train_thread import Runner
        from micrograd.playground.training.trainer import Trainer

        if gpt:  # the GPT view's run (gpt_view.py), its settings as the page sends them
            from micrograd.playground.gpt.gpt_view import gpt_kind, settings_from

            run, _ = settings_from(settings)
            self.tr = Trainer(run, use_jit=use_jit, kind=gpt_kind)
            while not self.tr.kind.prepare(5.0):  # every word length traced, as a page waits
                pass
        else:
            self.tr = Trainer(Settings.from_dict(settings), use_jit=use_jit)
        shown = dict(shown)
        if shown.pop("health", False):  # the Health panel open (train_health.health_action)
            from micrograd.playground.training.train_health import health_action

            health_action(self.tr, {"open": True})
        if not gpt:
            self.tr.view(graph=False, **shown)  # as a page whose graph is out of sight
        self.cursor = FrameCursor(self.tr)
        self.published = threading.Condition()
        self.runner = Runner()
        self.runner.add(self.tr, on_frame=self.notify)
        self.page = None
        self.done = False

    def notify(self) -> None:
        with self.published:
            self.published.notify_all()

    def frames(self) -> Any:
        while not self.done:
            f = self.cursor.next()
            if f is None:
                with self.published:
                    self.published.wait(0.5)
            else:
                f["bytes"] = len(json.dumps(f))
            yield f

    def play(self) -> None:
        self.tr.play()
        self.runner.wake()

    def pause(self) -> None:
        self.tr.pause()
        self.notify()

    def close(self) -> None:
        self.done = True
        self.tr.close()
        self.runner.stop()


class Served:
    """A real server on 127.0.0.1: the page's requests, the page's event stream."""

    def __init__(self, use_jit: bool, settings: dict, shown: dict, browser: Any = None) -> None:
        from micrograd.playground import serve

        kwargs = {} if use_jit else {"jit": False}
        self.handle = serve(port=0, **kwargs)
        self.url = self.handle.url.rstrip("/")
        self.page = None
        if browser is not None:  # the page itself, in its own session: Play is pressed there
            self.page = browser.new_page(viewport={"width": 1280, "height": 800})
            query = "&".join(
                f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in settings.items()
            )
            if shown.get("grads"):
                query += "&grads=1"
            self.page.goto(f"{self.url}/train?{query}")
            self.page.wait_for_function("() => window.trainView && window.trainView.frame()")
            self.session = self.page.evaluate("() => sessionStorage.getItem('micrograd-session')")
        else:
            self.session = f"bench-{os.getpid()}-{int(use_jit)}"
            self.post("/api/train/config", settings)
            self.post("/api/train/view", {"graph": False, **shown})

    def post(self, path: str, body: dict) -> dict:
        req = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Session": self.session},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def frames(self) -> Any:
        r = urllib.request.urlopen(
            f"{self.url}/api/train/stream?session={self.session}", timeout=10
        )
        try:
            for line in r:
                if line.startswith(b"data:"):
                    f = json.loads(line[5:])
                    f["bytes"] = len(line)
                    yield f
        finally:
            r.close()

    def play(self) -> None:
        self.post("/api/train/control", {"action": "play"})

    def pause(self) -> None:
        self.post("/api/train/control", {"action": "pause"})

    def drawn(self) -> int:
        return self.page.evaluate("() => window.trainView.drawn() || 0")

    def close(self) -> None:
        self.pause()
        if self.page is not None:
            self.page.close()
        self.handle.stop()


def watch(run: Any, seconds: float) -> dict:
    """Press Play, count what arrives for `seconds`, note when 100% accuracy first shows."""
    got: list = []  # (time, frame)
    stop = threading.Event()

    def reader() -> None:
        for f in run.frames():
            if f is not None and f.get("type") == "frame":
                got.append((time.perf_counter(), f))
            if stop.is_set():
                break

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    time.sleep(0.3)  # the stream is open and has sent its first frame
    got.clear()
    drawn0 = run.drawn() if run.page is not None else None
    t0, cpu0 = time.perf_counter(), time.process_time()
    run.play()
    time.sleep(seconds)
    end, cpu = time.perf_counter(), time.process_time() - cpu0
    drawn = None if drawn0 is None else (run.drawn() - drawn0) / (end - t0)
    frames = [f for ts, f in got if ts <= end]
    asked = time.perf_counter()
    run.pause()  # while it trains: how long until the answer says it stopped
    pause_ms = 1000 * (time.perf_counter() - asked)
    stop.set()
    steps = frames[-1]["step"] if frames else 0
    first = next((ts for ts, f in got if f.get("accuracy") == 1.0), None)
    grid = frames[-1].get("grid") if frames else None  # (a GPT frame has none)
    import base64

    cells = len(base64.b64decode(grid["b64"])) if grid else 0
    return {
        "steps/s": steps / (end - t0),
        # steps a second of this process's CPU time (in-process runs: the trainer's and the
        # reader's threads): what the run costs, whatever else the machine is doing
        "steps/cpu s": steps / cpu if cpu > 0 else math.nan,
        "frames/s": len(frames) / (end - t0),
        "drawn/s": drawn,
        "to 100%": None if first is None else first - t0,
        "pause ms": pause_ms,
        "KB/frame": sum(f.get("bytes", 0) for f in frames) / max(1, len(frames)) / 1000,
        "steps": steps,
        "grid": f"{round(cells**0.5)}x{round(cells**0.5)}",
        "accuracy": frames[-1]["accuracy"] if frames else None,
        "loss": frames[-1]["loss"] if frames else None,
    }


def gpt_served(body: dict, docs: list[str], seconds: float) -> dict[str, Any]:
    """The GPT view through a real server: see the module docstring."""
    from micrograd.gpt import microgpt
    from micrograd.playground import serve
    from micrograd.playground.gpt.train_gpt import MAX_STEPS

    handle = serve(port=0)
    url, session = handle.url.rstrip("/"), f"bench-gpt-{os.getpid()}"

    def post(path: str, b: dict) -> dict:
        req = urllib.request.Request(
            f"{url}/api/gpt/{path}",
            data=json.dumps(b).encode(),
            headers={"Content-Type": "application/json", "X-Session": session},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())

    got: list = []  # (time, frame)
    stop = threading.Event()

    def reader() -> None:
        r = urllib.request.urlopen(f"{url}/api/gpt/stream?session={session}", timeout=60)
        with r:
            for line in r:
                if line.startswith(b"data:"):
                    f = json.loads(line[5:])
                    if f is not None and f.get("type") == "frame":
                        got.append((time.perf_counter(), f))
                if stop.is_set():
                    break

    try:
        post("config", {**body, "steps": 20})  # microgpt(docs, 20, 42): the rate over 20 steps
        losses = [post("control", {"action": "step"})["frame"]["loss_exact"] for _ in range(20)]
        truth = microgpt(docs, 20, 42)[2]
        post("config", {**body, "steps": MAX_STEPS})
        t = threading.Thread(target=reader, daemon=True)
        t.start()
        time.sleep(0.5)
        got.clear()
        t0 = time.perf_counter()
        post("control", {"action": "play"})
        time.sleep(seconds)
        end = time.perf_counter()
        asked = time.perf_counter()
        post("control", {"action": "pause"})
        pause_ms = 1000 * (time.perf_counter() - asked)
        stop.set()
        frames = [(ts, f) for ts, f in got if ts <= end]
        half = next(f["step"] for ts, f in frames if ts >= t0 + seconds / 2)
        last = frames[-1][1]
        return {
            "error": max(abs(a - b) for a, b in zip(losses, truth, strict=True)),
            "steps/s": last["step"] / (end - t0),
            "second half": (last["step"] - half) / (end - t0 - seconds / 2),
            "frames/s": len(frames) / (end - t0),
            "mean": last["mean"],
            "step": last["step"],
            "pause ms": pause_ms,
        }
    finally:
        handle.stop()


def gpt_main(seconds: float) -> int:
    from micrograd.playground.gpt.train_gpt import WORDS

    print(
        f"# the GPT view through the server (microgpt's model, numpy, seed 42; Play {seconds:g} "
        f"s, steps 100,000; {os.cpu_count()} cores, load "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})\n"
    )
    cases = [(f"the built-in words ({len(WORDS)})", {"data": "builtin"}, list(WORDS))]
    if os.environ.get("MICROGRAD_NAMES_FILE"):
        from micrograd import data

        names = data.names()
        cases.append((f"makemore's names ({len(names):,})", {"data": "names"}, names))
    print(
        "| words | first 20 losses vs microgpt() | steps/s (second half) | frames/s sent | "
        "running mean at the end (step) | Pause answers |"
    )
    print("|---|---|---|---|---|---|")
    for name, body, docs in cases:
        r = gpt_served(body, docs, seconds)
        print(
            f"| {name} | max diff {r['error']:.1e} | {r['steps/s']:,.1f} "
            f"({r['second half']:,.1f}) | {r['frames/s']:.1f} | {r['mean']:.4f} "
            f"({r['step']:,}) | {r['pause ms']:.0f} ms |",
            flush=True,
        )
    return 0


def many_tabs(n: int, seconds: float, settings: dict) -> dict:
    """`n` tabs of one server playing at once, each reading its own event stream: frames and
    steps per second per tab (the runner shares the CPU among them)."""
    from micrograd.playground import serve

    handle = serve(port=0)
    url = handle.url.rstrip("/")
    tabs = [f"bench-tab-{i:03d}-{os.getpid()}" for i in range(n)]

    def post(session: str, path: str, body: dict) -> dict:
        req = urllib.request.Request(
            url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "X-Session": session},
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    got: dict[str, list] = {t: [] for t in tabs}
    stop = threading.Event()

    def reader(session: str) -> None:
        r = urllib.request.urlopen(f"{url}/api/train/stream?session={session}", timeout=60)
        try:
            for line in r:
                if stop.is_set():
                    break
                if line.startswith(b"data:"):
                    got[session].append((time.perf_counter(), json.loads(line[5:])))
        finally:
            r.close()

    try:
        for t in tabs:
            post(t, "/api/train/config", settings)
        threads = [threading.Thread(target=reader, args=(t,), daemon=True) for t in tabs]
        for th in threads:
            th.start()
        time.sleep(1.0)
        t0 = time.perf_counter()
        for t in tabs:
            post(t, "/api/train/control", {"action": "play"})
        time.sleep(seconds)
        end = time.perf_counter()
        per_tab = []
        for t in tabs:
            frames = [f for ts, f in got[t] if t0 <= ts <= end]
            first = next((f["step"] for ts, f in got[t] if ts >= t0), 0)
            last = frames[-1]["step"] if frames else 0
            per_tab.append((len(frames) / (end - t0), (last - first) / (end - t0)))
        stop.set()
        for t in tabs:
            post(t, "/api/train/control", {"action": "pause"})
    finally:
        handle.stop()
    fps = sorted(f for f, _ in per_tab)
    sps = sorted(s for _, s in per_tab)
    return {"fps": fps, "sps": sps}


# The networks the Health panel's cost is measured on: the Train view's (the page's default, the
# moons net, the largest) and the GPT view's (microgpt's default, the largest it offers), on the
# server's engine (numpy's jit).
HEALTH_NETS = [
    *((name, settings, False) for name, settings, _ in SIZES[1:4]),
    ("GPT view: microgpt's default (16 wide, 1 layer)", {"data": "builtin"}, True),
    (
        "GPT view: largest (32 wide, 2 layers)",
        {"data": "builtin", "n_embd": 32, "n_layer": 2},
        True,
    ),
]


class HealthClock:
    """The CPU time the Health panel's own code takes (its reads' statistics, the tap's
    bookkeeping, the frame's health), by the thread that runs it: wraps those functions while
    it is entered. A share of the run's CPU time that the machine's other load does not move."""

    def __init__(self) -> None:
        from micrograd.playground.training.train_health import HealthTap
        from micrograd.train.health import Monitor

        self.seconds = 0.0
        self.wrapped = [
            (cls, name, getattr(cls, name))
            for cls, names in (
                (HealthTap, ("begin", "end", "frame")),
                (Monitor, ("read_grads", "given", "given_stats")),
            )
            for name in names
        ]

    def __enter__(self) -> HealthClock:
        for cls, name, fn in self.wrapped:
            setattr(cls, name, self._timed(fn))
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, name, fn in self.wrapped:
            setattr(cls, name, fn)

    def _timed(self, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start

        return timed


def _ratio(a: float, b: float) -> str:
    """a / b as a percentage, or – where b is no steps (a run too short to take one)."""
    return f"{a / b:.0%}" if b > 0 else "–"


def health_main(seconds: float, rounds: int) -> int:
    """The Health panel's cost (issue 58: at most 10% of the steps/s): each network of the Train
    and GPT views (`HEALTH_NETS`) on the jit, in-process, played `seconds` with the panel shut
    and then open, `rounds` times in turn (the machine's other load falls on both alike); the
    median steps/s of each and their ratio; and with the panel open, the share of the process's
    CPU time spent in the panel's own code (`HealthClock`)."""
    print(
        f"# Health panel open vs shut, in-process, jit, {rounds} rounds of {seconds:g} s each "
        f"({os.cpu_count()} cores, load {', '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    print(
        "| network | steps/s shut | steps/s open | open / shut | steps/CPU s shut | "
        "steps/CPU s open | open / shut (CPU) | the panel's share of CPU (open) | "
        "frames/s open | KB a frame open |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, settings, gpt in HEALTH_NETS:
        got: dict[bool, list[dict]] = {False: [], True: []}
        for _ in range(rounds):
            for health in (False, True):
                run = Direct(True, settings, {"health": health}, gpt=gpt)
                try:
                    cpu = time.process_time()
                    with HealthClock() as clock:
                        r = watch(run, seconds)
                    r["health share"] = clock.seconds / (time.process_time() - cpu)
                    got[health].append(r)
                finally:
                    run.close()
        med = lambda rs, k: sorted(r[k] for r in rs)[len(rs) // 2]  # noqa: E731
        shut, open_ = med(got[False], "steps/s"), med(got[True], "steps/s")
        cshut, copen = med(got[False], "steps/cpu s"), med(got[True], "steps/cpu s")
        print(
            f"| {name} | {shut:,.0f} | {open_:,.0f} | {_ratio(open_, shut)} | {cshut:,.0f} | "
            f"{copen:,.0f} | {_ratio(copen, cshut)} | {med(got[True], 'health share'):.1%} | "
            f"{med(got[True], 'frames/s'):.1f} | {med(got[True], 'KB/frame'):.1f} |",
            flush=True,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="how long each jit run plays")
    p.add_argument("--eager-seconds", type=float, default=6.0, help="how long each eager run plays")
    p.add_argument("--direct", action="store_true", help="no server: the trainer in-process")
    p.add_argument(
        "--browser",
        action="store_true",
        help="also count the frames the page draws, in Chromium (Playwright)",
    )
    p.add_argument(
        "--tabs",
        type=int,
        default=0,
        metavar="N",
        help="instead: N tabs of one server playing the default network at once "
        "(frames/s and steps/s per tab)",
    )
    p.add_argument("--gpt", action="store_true", help="instead: the GPT view (its own section)")
    p.add_argument(
        "--health",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="instead: steps/s with the Health panel open against shut, ROUNDS times each",
    )
    args = p.parse_args(argv)
    if args.health:
        try:
            return health_main(args.seconds, args.health)
        except KeyboardInterrupt:
            print("bench_playground: stopped (Ctrl-C)", file=sys.stderr)
            return 130
    if args.gpt:
        try:
            return gpt_main(args.seconds)
        except KeyboardInterrupt:
            print("bench_playground: stopped (Ctrl-C)", file=sys.stderr)
            return 130
    if args.tabs:
        print(
            f"# {args.tabs} tabs playing at once, each 2-8-8-1 tanh on moons, through one "
            f"server ({os.cpu_count()} cores, load "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})"
        )
        try:
            r = many_tabs(args.tabs, args.seconds, {})
        except KeyboardInterrupt:
            print("bench_playground: stopped (Ctrl-C)", file=sys.stderr)
            return 130
        fps, sps = r["fps"], r["sps"]
        print(
            "| tabs | frames/s per tab: min / median / max | steps/s per tab: min / median / "
            "max | steps/s in all |"
        )
        print("|---|---|---|---|")
        print(
            f"| {args.tabs} | {fps[0]:.1f} / {fps[len(fps) // 2]:.1f} / {fps[-1]:.1f} | "
            f"{sps[0]:,.0f} / {sps[len(sps) // 2]:,.0f} / {sps[-1]:,.0f} | {sum(sps):,.0f} |"
        )
        return 0
    if args.direct and args.browser:
        p.error("--browser needs the server: leave out --direct")
    pw = browser = None
    if args.browser:
        from playwright.sync_api import sync_playwright

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        from conftest import chromium_path

        path = chromium_path()
        if path is None:
            p.error("no Chromium found: run scripts/ensure-chromium")
        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path=path, headless=True)
    how = "in-process" if args.direct else "through the server"
    print(
        f"# playground training view, moons ({how}"
        f"{', drawn in Chromium' if browser else ''}; {os.cpu_count()} cores, load "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    print(
        "| network | engine | steps/s | frames/s sent | frames/s drawn | KB a frame | Pause "
        "answers in | time to 100% | steps | accuracy |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    try:
        for name, settings, shown in SIZES:
            for use_jit in (True, False):
                if shown and not use_jit:
                    continue  # the eager engine draws the same; its speed is the row above's
                run = (
                    Direct(use_jit, settings, shown)
                    if args.direct
                    else Served(use_jit, settings, shown, browser)
                )
                try:
                    r = watch(run, args.seconds if use_jit else args.eager_seconds)
                finally:
                    run.close()
                to100 = "not within the run" if r["to 100%"] is None else f"{r['to 100%']:.2f} s"
                acc = "-" if r["accuracy"] is None else f"{100 * r['accuracy']:.1f}%"
                drawn = "-" if r["drawn/s"] is None else f"{r['drawn/s']:.1f}"
                print(
                    f"| {name} | {'jit' if use_jit else 'eager'} | {r['steps/s']:,.0f} | "
                    f"{r['frames/s']:.1f} | {drawn} | {r['KB/frame']:.0f} | "
                    f"{r['pause ms']:.0f} ms | {to100} | {r['steps']} | {acc} |",
                    flush=True,
                )
    except KeyboardInterrupt:
        print("bench_playground: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    finally:
        if browser is not None:
            browser.close()
            pw.stop()
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    # (the GPT view's run, and the Health panel's, write sections of their own: the Train
    # view's figures stay)
    sys.exit(
        recorded(
            "bench_playground_gpt"
            if "--gpt" in sys.argv
            else "bench_playground_health"
            if "--health" in sys.argv
            else "bench_playground",
            main,
        )
    )
