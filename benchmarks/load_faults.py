"""Load and fault harness: a class's tabs on one playground, with what networks and people do to
them (issue 35). Loopback only, bounded in tabs and time.

A server (`micrograd playground`, its own process, so its memory and CPU are its own) gets
`--tabs` tabs for `--minutes`: half train (settings of their own, Play, the frames' event
stream), half step through the explorer (load a program, forward, step, backward, set a leaf,
reset). Meanwhile, at random: a tab closes its event stream and opens another (a reconnect), a
stream is opened and reset before its first byte (an aborted stream), and a burst of new tabs
pushes the least recently seen ones out (`--max-sessions` is below the tab count: evictions).

Reported per tab: steps/s (training steps, or explorer actions), frames/s (event-stream frames),
answers >= 500 (must be 0), state lost (must be 0: a train tab's settings changed or its step
went back; an explorer tab's program other than the one it holds, or "no expression yet"); and
the server's memory over time and its CPU once every client has gone.

    python3 benchmarks/load_faults.py [--tabs 30] [--minutes 10] [--max-sessions 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PROGRAM = "a = 2.0\nb = -3.0\nc = a * b + 1.0\nd = tanh(c)"
SETTINGS = [
    {"hidden": [4], "dataset": "xor"},
    {"hidden": [8, 8]},
    {"hidden": [16, 16], "dataset": "moons", "activation": "relu"},
    {"hidden": [3], "dataset": "circles"},
]


class Stats:
    def __init__(self, name: str) -> None:
        self.name = name
        self.steps = 0  # training steps seen advance, or explorer actions answered
        self.frames = 0
        self.errors_5xx: list[str] = []
        self.lost: list[str] = []
        self.other_4xx = 0
        self.lock = threading.Lock()


class Client:
    def __init__(self, url: str, port: int, stats: Stats, stop: threading.Event, seed: int):
        self.url, self.port, self.stats, self.stop = url, port, stats, stop
        self.session = uuid.uuid4().hex
        self.rng = random.Random(seed)

    def call(self, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json", "X-Session": self.session},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, answer = r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            status, answer = e.code, json.loads(e.read() or b"{}")
        if status >= 500:
            self.stats.errors_5xx.append(f"{path}: {status} {answer}")
        elif status >= 400:
            self.stats.other_4xx += 1
        return status, answer

    def aborted_stream(self) -> None:
        s = socket.create_connection(("127.0.0.1", self.port))
        s.sendall(
            f"GET /api/train/stream?session={self.session} HTTP/1.1\r\n"
            f"Host: 127.0.0.1\r\n\r\n".encode()
        )
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # RST before the first byte

    def pause(self, low: float, high: float) -> None:
        self.stop.wait(self.rng.uniform(low, high))


class TrainTab(Client):
    def run(self) -> None:
        self.want = self.rng.choice(SETTINGS)
        status, answer = self.call("/api/train/config", self.want)
        while status != 200 and not self.stop.wait(1.0):  # (counted above if >= 500)
            status, answer = self.call("/api/train/config", self.want)
        if status != 200:
            return
        self.settings = answer["meta"]["settings"]
        self.call("/api/train/control", {"action": "play"})
        self.last_step = 0
        self.seen: dict[str, int] = {}
        reader = threading.Thread(target=self.read_frames, daemon=True)
        reader.start()
        while not self.stop.is_set():
            self.pause(0.5, 2.0)
            r = self.rng.random()
            if r < 0.1:
                self.aborted_stream()
            elif r < 0.2:
                self.call("/api/train/control", {"action": "step", "steps": 5})
            else:
                status, answer = self.call("/api/train/state")
                if status == 200:
                    self.check(answer["meta"]["settings"], answer["frame"]["step"], "state")
        reader.join(timeout=30)

    def check(self, settings: dict[str, Any], step: int, source: str) -> None:
        """A state answer or a frame: the tab's settings, and a step never below the last one
        from the same source (a frame may arrive after a newer state answer)."""
        with self.stats.lock:
            if settings != self.settings:
                self.stats.lost.append(f"settings {settings} != {self.settings}")
            last = self.seen.get(source, 0)
            if step < last:
                self.stats.lost.append(f"{source}: step went back from {last} to {step}")
            self.seen[source] = max(last, step)
            self.stats.steps += max(0, step - self.last_step)
            self.last_step = max(self.last_step, step)

    def read_frames(self) -> None:
        while not self.stop.is_set():
            until = time.monotonic() + self.rng.uniform(3.0, 30.0)  # then a reconnect
            req = urllib.request.Request(f"{self.url}/api/train/stream?session={self.session}")
            try:
                with urllib.request.urlopen(req, timeout=60) as stream:
                    for line in stream:
                        if line.startswith(b"data:"):
                            frame = json.loads(line[5:])
                            self.stats.frames += 1
                            self.check(self.settings, frame["step"], "frames")
                        if self.stop.is_set() or time.monotonic() > until:
                            break
            except urllib.error.HTTPError as e:
                if e.code >= 500:
                    self.stats.errors_5xx.append(f"stream: {e.code}")
                self.pause(0.5, 1.0)
            except OSError:  # the connection broke: a reconnect is what follows, as a page's
                self.pause(0.5, 1.0)


class ExplorerTab(Client):
    def run(self) -> None:
        status, answer = self.call("/api/explorer/load", {"program": PROGRAM})
        while status != 200 and not self.stop.wait(1.0):  # (counted above if >= 500)
            status, answer = self.call("/api/explorer/load", {"program": PROGRAM})
        if status != 200:
            return
        self.program = answer["program"]
        leaves = [k for k, v in answer["values"].items() if v["data"] in (2.0, -3.0)]
        while not self.stop.is_set():
            self.pause(0.3, 1.5)
            action = self.rng.choice(
                ["step", "step", "forward", "backward", "reset", "set", "state"]
            )
            if action == "set":
                value = round(self.rng.uniform(-3, 3), 2) or 0.5
                status, answer = self.call(
                    "/api/explorer/set", {"node": self.rng.choice(leaves), "value": value}
                )
                if status == 200:
                    self.program = answer["program"]
            elif action == "state":
                status, answer = self.call("/api/explorer/state")
                if status == 200 and answer["program"] != self.program:
                    self.stats.lost.append(f"program {answer['program']!r} != {self.program!r}")
            else:
                status, answer = self.call(f"/api/explorer/{action}", {})
            if status == 409 and "no expression yet" in answer.get("error", ""):
                self.stats.lost.append("the server forgot the graph")
            elif status == 200:
                self.stats.steps += 1


def evictor(url: str, stop: threading.Event, seed: int, counts: dict[str, int]) -> None:
    """Now and then a burst of new tabs (each one request): the least recently seen go."""
    rng = random.Random(seed)
    while not stop.wait(rng.uniform(5.0, 15.0)):
        for _ in range(rng.randint(3, 8)):
            req = urllib.request.Request(
                url + "/api/explorer/examples", headers={"X-Session": uuid.uuid4().hex}
            )
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    r.read()
                counts["new tabs"] += 1
            except urllib.error.HTTPError as e:
                counts[f"new tab answered {e.code}"] = (
                    counts.get(f"new tab answered {e.code}", 0) + 1
                )


def proc_stats(pid: int) -> tuple[float, float]:
    """(RSS in MiB, CPU seconds so far) of a process."""
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tabs", type=int, default=30)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--max-sessions", type=int, default=20)
    ap.add_argument("--seed", type=int, default=35)
    args = ap.parse_args()
    if not 2 <= args.tabs <= 64 or not 0 < args.minutes <= 30:
        ap.error("--tabs from 2 to 64, --minutes at most 30 (the harness is bounded)")
    env = {**os.environ, "PYTHONPATH": REPO, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "micrograd",
            "playground",
            "--no-browser",
            "--port",
            "0",
            "--max-sessions",
            str(args.max_sessions),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if "serving " not in line:
        server.kill()
        why = server.stderr.read()[:300] if server.stderr else ""
        print(f"load_faults: the server did not start: {why}", file=sys.stderr)
        return 2
    url = line.split("serving ")[1].split()[0].rstrip("/")
    port = int(url.rsplit(":", 1)[1])
    stop = threading.Event()
    tabs: list[Client] = []
    for i in range(args.tabs):
        kind = TrainTab if i % 2 == 0 else ExplorerTab
        tabs.append(
            kind(
                url,
                port,
                Stats(f"{kind.__name__[:-3].lower()} {i:02d}"),
                stop,
                args.seed * 1000 + i,
            )
        )
    counts = {"new tabs": 0}
    threads = [threading.Thread(target=t.run, daemon=True) for t in tabs]
    threads.append(
        threading.Thread(target=evictor, args=(url, stop, args.seed, counts), daemon=True)
    )
    memory: list[tuple[float, float]] = []
    start = time.monotonic()
    for t in threads:
        t.start()
    seconds = args.minutes * 60
    try:
        while time.monotonic() - start < seconds:
            memory.append((time.monotonic() - start, proc_stats(server.pid)[0]))
            time.sleep(min(15.0, max(0.1, seconds - (time.monotonic() - start))))
    except KeyboardInterrupt:
        print("load_faults: stopped early (Ctrl-C)", file=sys.stderr)
    elapsed = time.monotonic() - start
    stop.set()
    try:
        return report(args, server, tabs, threads, memory, counts, elapsed, start)
    finally:
        if server.poll() is None:
            server.kill()


def report(
    args: argparse.Namespace,
    server: subprocess.Popen,
    tabs: list[Client],
    threads: list[threading.Thread],
    memory: list[tuple[float, float]],
    counts: dict[str, int],
    elapsed: float,
    start: float,
) -> int:
    """Let the clients go, measure the idle server, print the figures."""
    for t in threads:
        t.join(timeout=60)
    memory.append((time.monotonic() - start, proc_stats(server.pid)[0]))
    time.sleep(20.0)  # every client gone: unwatched runs are held within WATCH_SECONDS (8 s)
    _, cpu0 = proc_stats(server.pid)
    time.sleep(20.0)
    rss_idle, cpu1 = proc_stats(server.pid)
    idle_cpu = (cpu1 - cpu0) / 20.0
    server.terminate()
    _, err = server.communicate(timeout=30)

    print(
        f"load and fault harness: {args.tabs} tabs for {elapsed / 60:.1f} min, "
        f"--max-sessions {args.max_sessions}, {os.cpu_count()} cores (shared; load average "
        f"{os.getloadavg()[1]:.1f} over the last 5 min)"
    )
    print(f"{'tab':<13} {'steps/s':>8} {'frames/s':>9} {'>=500':>6} {'lost':>5} {'4xx':>5}")
    for t in tabs:
        s = t.stats
        print(
            f"{s.name:<13} {s.steps / elapsed:8.1f} {s.frames / elapsed:9.2f} "
            f"{len(s.errors_5xx):6d} {len(s.lost):5d} {s.other_4xx:5d}"
        )
    import statistics

    trains = [t.stats for t in tabs if isinstance(t, TrainTab)]
    explorers = [t.stats for t in tabs if isinstance(t, ExplorerTab)]
    if trains and explorers:
        print(
            f"medians: a training tab {statistics.median(s.steps for s in trains) / elapsed:.1f} "
            f"steps/s and {statistics.median(s.frames for s in trains) / elapsed:.2f} frames/s "
            f"(all {sum(s.steps for s in trains) / elapsed:.0f} steps/s); an explorer tab "
            f"{statistics.median(s.steps for s in explorers) / elapsed:.2f} actions/s"
        )
    total_5xx = sum(len(t.stats.errors_5xx) for t in tabs)
    total_lost = sum(len(t.stats.lost) for t in tabs)
    print(f"answers >= 500: {total_5xx}; state lost: {total_lost}; evicting bursts: {counts}")
    for t in tabs:
        for e in (t.stats.errors_5xx + t.stats.lost)[:3]:
            print(f"  {t.stats.name}: {e}")
    print(
        "server memory (MiB) over time: "
        + ", ".join(f"{m:.0f} at {s / 60:.1f} min" for s, m in memory)
    )
    print(
        f"server memory once idle: {rss_idle:.0f} MiB; its CPU once every client had gone "
        f"(20 s, after 20 s): {100 * idle_cpu:.1f}% of a core"
    )
    lines = [x for x in err.splitlines() if x.strip()]
    print(f"server's stderr: {len(lines)} line(s)" + "".join(f"\n  {x}" for x in lines[:10]))
    return 0 if total_5xx == 0 and total_lost == 0 else 1


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    try:
        sys.exit(recorded("load_faults", main))
    except KeyboardInterrupt:  # a second Ctrl-C, during the report: its server goes with it
        print("load_faults: interrupted", file=sys.stderr)
        sys.exit(130)
