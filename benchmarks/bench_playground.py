"""Benchmark: the playground's training view, live, on karpathy's moons (100 points, 2-16-16-1).

What a learner gets after pressing Play: training steps per second, frames per second reaching
the page (each with a 50x50 decision grid, a heat map per hidden neuron, the weights and the chosen
point's graph), and the wall time from Play until a frame shows 100% accuracy; then the same
with the eager engine (no numpy, or ``micrograd playground --no-jit``).

By default it goes through a real server (`micrograd.playground.serve`), as the page does: POST
the settings, POST Play, read the Server-Sent Events stream. ``--direct`` reads the trainer's
frame stream in-process instead (no HTTP). Targets from the issue: >= 200 steps/s with >= 15
frames/s, 100% accuracy in < 5 s, eager >= 10 steps/s.

    python3 benchmarks/bench_playground.py [--seconds 3] [--eager-seconds 10] [--direct]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.request
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MOONS = {"dataset": "moons", "points": 100, "noise": 0.1, "hidden": [16, 16]}


# ------------------------------------------------------------------ two ways to watch a run


class Direct:
    """The trainer's own frame stream, read on a thread, as the server would."""

    def __init__(self, use_jit: bool) -> None:
        from micrograd.playground.train_settings import Settings
        from micrograd.playground.trainer import Trainer

        self.tr = Trainer(Settings.from_dict(MOONS), use_jit=use_jit, idle_after=60)

    def frames(self) -> Any:
        return self.tr.stream(keepalive=0.5)

    def play(self) -> None:
        self.tr.play()

    def pause(self) -> None:
        self.tr.pause()

    def close(self) -> None:
        self.tr.pause()


class Served:
    """A real server on 127.0.0.1: the page's requests, the page's event stream."""

    def __init__(self, use_jit: bool) -> None:
        from micrograd.playground import serve

        kwargs = {} if use_jit else {"jit": False}
        self.handle = serve(port=0, **kwargs)
        self.url = self.handle.url.rstrip("/")
        self.session = f"bench-{os.getpid()}-{int(use_jit)}"
        self.post("/api/train/config", MOONS)

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
                    yield json.loads(line[5:])
        finally:
            r.close()

    def play(self) -> None:
        self.post("/api/train/control", {"action": "play"})

    def pause(self) -> None:
        self.post("/api/train/control", {"action": "pause"})

    def close(self) -> None:
        self.pause()
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
    t0 = time.perf_counter()
    run.play()
    time.sleep(seconds)
    end = time.perf_counter()
    frames = [f for ts, f in got if ts <= end]
    run.pause()
    stop.set()
    steps = frames[-1]["step"] if frames else 0
    first = next((ts for ts, f in got if f.get("accuracy") == 1.0), None)
    grid = frames[-1]["grid"] if frames else None
    import base64

    cells = len(base64.b64decode(grid["b64"])) if grid else 0
    return {
        "steps/s": steps / (end - t0),
        "frames/s": len(frames) / (end - t0),
        "to 100%": None if first is None else first - t0,
        "steps": steps,
        "grid": f"{round(cells ** 0.5)}x{round(cells ** 0.5)}",
        "accuracy": frames[-1]["accuracy"] if frames else None,
        "loss": frames[-1]["loss"] if frames else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="how long the jit run plays")
    p.add_argument("--eager-seconds", type=float, default=10.0, help="how long the eager run plays")
    p.add_argument("--direct", action="store_true", help="no server: the trainer in-process")
    args = p.parse_args(argv)
    kind = Direct if args.direct else Served
    from micrograd.playground.train_settings import Settings

    s = Settings.from_dict(MOONS)
    print(f"# playground training view, karpathy's moons, MLP 2-16-16-1 ({kind.__name__}; "
          f"{s.activation}, {s.loss}, {s.optimizer} lr {s.lr} momentum {s.momentum}, L2 {s.l2}, "
          f"full batch, seed {s.seed}; {os.cpu_count()} cores, load "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print("| engine | steps/s | frames/s | decision grid | time to 100% | steps | loss | accuracy"
          " |")
    print("|---|---|---|---|---|---|---|---|")
    for use_jit in (True, False):
        run = kind(use_jit)
        try:
            r = watch(run, args.seconds if use_jit else args.eager_seconds)
        finally:
            run.close()
        to100 = "not within the run" if r["to 100%"] is None else f"{r['to 100%']:.2f} s"
        acc = "-" if r["accuracy"] is None else f"{100 * r['accuracy']:.1f}%"
        print(f"| {'jit' if use_jit else 'eager'} | {r['steps/s']:,.0f} | {r['frames/s']:.1f} | "
              f"{r['grid']} | {to100} | {r['steps']} | {r['loss']} | {acc} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
