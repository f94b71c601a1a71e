"""Closed tabs give their memory back: 150 tabs (each with its training view; the server keeps
64) and 100 event streams opened and dropped leave no more than the server's session cap alive,
and once the server stops, nothing of them (no Trainer object; the process's resident memory back
near where it started). Run in a fresh Python process, so the figures are the server's alone."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = r"""
import gc, json, socket, threading, urllib.request
from micrograd.playground import serve
from micrograd.playground.serving.web import give_back_memory
from micrograd.playground.training.trainer import Trainer
from micrograd.playground.serving.web import MAX_SESSIONS

def rss():  # resident memory of this process, MB
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20

def trainers():
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Trainer))

h = serve(port=0)
port = int(h.url.rstrip("/").rsplit(":", 1)[1])
def get(path, s):
    req = urllib.request.Request(h.url + path, headers={"X-Session": s})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()

get("api/train/state", "warm-up-0")
start = rss()
for i in range(150):
    get("api/train/state", f"tab-{i:06d}")
for i in range(100):  # event streams opened, read from, dropped
    c = socket.create_connection(("127.0.0.1", port))
    s = f"tab-{149 - i % 10:06d}"
    c.sendall(f"GET /api/train/stream?session={s} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
              .encode())
    c.recv(4096)
    c.close()
busy = {"rss": rss(), "trainers": trainers()}
h.stop()
for t in threading.enumerate():  # the streams' threads end as their trainers close
    if t is not threading.main_thread():
        t.join(timeout=5)
give_back_memory()  # as the server does when it drops a session (its threads are gone now)
print(json.dumps({"start": start, "busy": busy, "stopped": {"rss": rss(), "trainers": trainers()},
                  "cap": MAX_SESSIONS}))
"""


@pytest.mark.skipif(
    not pathlib.Path("/proc/self/statm").exists(),
    reason="resident memory is read from /proc (Linux)",
)
@pytest.mark.slow
def test_closed_tabs_give_their_memory_back() -> None:
    root = pathlib.Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    m = json.loads(run.stdout.strip().splitlines()[-1])
    # While running: at most the session cap of trainers, whatever came and went.
    assert m["busy"]["trainers"] <= m["cap"], m
    # A tab holds about a megabyte; 64 of them, and the event streams' threads, stay well
    # under this (without handing memory back it grew with every tab that ever came).
    assert m["busy"]["rss"] - m["start"] < 150, m
    # Stopped: no trainer left, and the memory handed back to the system.
    assert m["stopped"]["trainers"] == 0, m
    assert m["stopped"]["rss"] - m["start"] < 30, m
