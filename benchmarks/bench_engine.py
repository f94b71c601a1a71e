"""The engine against its goals, side by side in one run, the rows alternated round by round.

    python benchmarks/bench_engine.py                    # this interpreter, 3 rounds
    python benchmarks/bench_engine.py --python python3.13 --rounds 3
    python benchmarks/bench_engine.py --memory 2000      # resident memory over 2,000 steps

Each figure is measured in a fresh interpreter (`_worker.py`), CPU time (`time.process_time`,
the garbage collector's pauses included), with the collector as Python and the engine leave it
(ours: the engine's policy, core/collector.py; the minimal Value: Python's defaults):

* microgpt's loop (microgpt_loop.py: n_layer 1, n_embd 16, 4 heads, block 16, one document a
  step, Adam) on `MinimalValue`, a lecture-style Value of microgpt's shape, and on ours; the
  figure is the mean CPU time of a step after the first. Goal: ours >= 2.5x faster. The losses of
  the first steps must be the same bits on both.
* karpathy's moons demo (workloads.moons) on ours and on his micrograd 0.1.0 (installed into
  benchmarks/.peers by run.py's `ensure_peer`; needs numpy and scikit-learn). Goal: >= 50x.
* the chain y = y*w + c (workloads.chain, chain_memory): cost per node at 1,001 and 1,000,001
  nodes (goal: growth <= 1.6x) and tracemalloc's peak per node at 1,000,001 (goal: <= 150 bytes).

The median over the rounds is reported, with every round's figure beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def microgpt(which: str, steps: int) -> dict:
    """Mean CPU seconds of a step (after the first) of microgpt's loop; the losses."""
    import time

    import microgpt_loop

    if which == "ours":
        from micrograd.engine import Value
    elif which == "ours, restore_gc()":
        from micrograd.engine import Value, restore_gc

        restore_gc()
    else:
        Value = microgpt_loop.MinimalValue
    times, losses = microgpt_loop.timed(Value, steps, time.process_time)
    mean = statistics.mean(times[1:]) * 1e3
    return {"value": mean, "unit": "ms/step", "losses": losses[:5], "detail": f"{steps} steps"}


def memory(steps: int) -> dict:
    """Resident memory (from /proc/self/statm) along `steps` steps of microgpt's loop on ours."""
    import time

    import microgpt_loop

    from micrograd.engine import Value

    page = os.sysconf("SC_PAGE_SIZE")
    marks = {}
    for k, _ in enumerate(microgpt_loop.steps(Value, steps), 1):
        if k in (10, 100, 500, 1000, 1500, 2000) or k == steps:
            with open("/proc/self/statm") as f:
                marks[k] = int(f.read().split()[1]) * page / 2**20
    t = time.process_time()
    return {"value": marks[steps], "unit": "MiB", "marks": marks, "cpu": t}


def run(python: str, func: str, kwargs: dict, path: list[str]) -> dict:
    spec = json.dumps({"func": func, "kwargs": kwargs, "path": path})
    done = subprocess.run(
        [python, str(HERE / "_worker.py"), spec], capture_output=True, text=True, cwd=HERE
    )
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}


def has(python: str, *modules: str) -> bool:
    code = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in "
    code += f"{list(modules)!r}))"
    return subprocess.run([python, "-c", code]).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20, help="microgpt steps per row")
    parser.add_argument("--memory", type=int, default=0, help="only: RSS over this many steps")
    args = parser.parse_args(argv)
    ours = [str(ROOT), str(HERE)]
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"Python {version} ({args.python}), {args.rounds} rounds, alternated")
    if args.memory:
        r = run(args.python, "bench_engine:memory", {"steps": args.memory}, ours)
        print(f"microgpt, {args.memory} steps on ours: resident MiB at step {r.get('marks', r)}")
        return 0

    rows: dict[str, list[dict]] = {}
    gpt = [
        ("minimal Value", "minimal"),
        ("ours", "ours"),
        ("ours, restore_gc()", "ours, restore_gc()"),
    ]
    moons_ok = has(args.python, "numpy", "sklearn")
    peer = None
    if moons_ok:
        from run import PEER, ensure_peer

        peer = ensure_peer()
    for k in range(args.rounds):
        order = gpt if k % 2 == 0 else gpt[::-1]  # alternated: neither always goes first
        for label, which in order:
            kw = {"which": which, "steps": args.steps}
            rows.setdefault(f"microgpt: {label}", []).append(
                run(args.python, "bench_engine:microgpt", kw, ours)
            )
        if moons_ok and peer is None:
            pair = [("ours", ours, 20), ("karpathy 0.1.0", [str(PEER), str(HERE)], 2)]
            for label, path, steps in pair if k % 2 == 0 else pair[::-1]:
                rows.setdefault(f"moons: {label}", []).append(
                    run(args.python, "workloads:moons", {"steps": steps}, path)
                )
        for n in (1_001, 1_000_001):
            rows.setdefault(f"chain {n:,} nodes: ours", []).append(
                run(args.python, "workloads:chain", {"nodes": n}, ours)
            )
    rows["chain 1,000,001 nodes: memory"] = [
        run(args.python, "workloads:chain_memory", {"nodes": 1_000_001}, ours)
    ]

    def median(label: str) -> float:
        return statistics.median(r["value"] for r in rows[label])

    for label, results in rows.items():
        values = ", ".join(f"{r['value']:.3g}" if "value" in r else str(r) for r in results)
        unit = next((r["unit"] for r in results if "unit" in r), "")
        print(f"  {label:36} {median(label):10.4g} {unit:10} ({values})")
    print("goals:")
    mine, theirs = rows["microgpt: ours"], rows["microgpt: minimal Value"]
    same = all(a["losses"] == b["losses"] for a, b in zip(mine, theirs))
    ratio = median("microgpt: minimal Value") / median("microgpt: ours")
    print(f"  microgpt, minimal / ours = {ratio:.2f}x (goal >= 2.5x); same losses: {same}")
    if "moons: ours" in rows:
        ratio = median("moons: karpathy 0.1.0") / median("moons: ours")
        print(f"  moons, karpathy 0.1.0 / ours = {ratio:.1f}x (goal >= 50x)")
    else:
        why = "no numpy or scikit-learn here" if not moons_ok else f"karpathy's package: {peer}"
        print(f"  moons: skipped ({why})")
    growth = median("chain 1,000,001 nodes: ours") / median("chain 1,001 nodes: ours")
    print(f"  chain, cost per node 1e3 -> 1e6: {growth:.2f}x (goal <= 1.6x)")
    print(
        f"  chain, memory: {median('chain 1,000,001 nodes: memory'):.0f} bytes/node (goal <= 150)"
    )
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_engine", main))
