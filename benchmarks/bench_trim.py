"""What glibc's malloc_trim saves the playground's server (micrograd/playground/serving/web.py,
`give_back_memory`): resident memory of one server after many tabs came and went, with the trim
and without it (``web._TRIM = None``: the collection alone), each in a fresh process, the rows
alternated round by round.

    python benchmarks/bench_trim.py                  # 300 tabs, 3 rounds
    python benchmarks/bench_trim.py --tabs 150 --rounds 5

A tab is a session with its Train view (`GET api/train/state`); the server keeps 64 and drops the
rest as new ones come (then `give_back_memory()` runs), and stopping it drops every one. Figures:
MiB resident at the start (one tab), with all the tabs served (the server still running, past its
cap: what a long-running server keeps), and after `stop()`. Linux only (/proc/self/statm).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

SCRIPT = r"""
import json, sys, threading, urllib.request
from micrograd.playground import serve, web

tabs, trim = int(sys.argv[1]), sys.argv[2] == "trim"
if not trim:
    web._TRIM = None  # give_back_memory(): the collection alone
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
h = serve(port=0)
def get(path, s):
    req = urllib.request.Request(h.url + path, headers={"X-Session": s})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()
get("api/train/state", "warm-up-0")
start = rss()
for i in range(tabs):
    get("api/train/state", f"tab-{i:06d}")
served = rss()
h.stop()
for t in threading.enumerate():
    if t is not threading.main_thread():
        t.join(timeout=5)
web.give_back_memory()
print(json.dumps({"start": start, "served": served, "stopped": rss()}))
"""


def one(tabs: int, trim: bool) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tabs), "trim" if trim else "none"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tabs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not Path("/proc/self/statm").exists():
        print("skipped: resident memory is read from /proc (Linux)")
        return 0
    rows: dict[bool, list[dict]] = {True: [], False: []}
    for k in range(args.rounds):
        for trim in (True, False) if k % 2 == 0 else (False, True):
            rows[trim].append(one(args.tabs, trim))
    print(f"{args.tabs} tabs through one server, {args.rounds} rounds, MiB resident (median):")
    for trim in (True, False):
        label = "malloc_trim" if trim else "gc.collect() alone"
        cells = []
        for key in ("start", "served", "stopped"):
            values = [r[key] for r in rows[trim]]
            every = ", ".join(f"{v:.0f}" for v in values)
            cells.append(f"{key} {statistics.median(values):.0f} ({every})")
        print(f"  {label:20} " + "; ".join(cells))
    for key in ("served", "stopped"):
        saved = statistics.median(r[key] for r in rows[False]) - statistics.median(
            r[key] for r in rows[True]
        )
        print(f"  the trim saves {saved:.0f} MiB {key}")
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_trim", main))
