"""The engine against its goals, side by side in one run, the rows alternated round by round.

    python benchmarks/bench_engine.py                    # this interpreter, 3 rounds
    python benchmarks/bench_engine.py --python python3.13 --rounds 3
    python benchmarks/bench_engine.py --memory 2000      # resident memory over 2,000 steps

Each figure is measured in a fresh interpreter (`_worker.py`), CPU time (`time.process_time`,
the garbage collector's pauses included), with the collector as Python and the engine leave it at
import (the compiled core: Python's thresholds; the pure engine: its policy, core/collector.py;
the minimal Value: Python's). Rows marked "gc: Python's" undo the engine's policy first
(``restore_gc()``), rows marked "gc: young 1M" raise the young threshold to a million by hand:
the figures that say whether an engine needs the policy (docs/memory.md, "The garbage collector").

Ours twice: the compiled core (micrograd/core/cvalue.c, where it is built for that interpreter)
and the pure engine (``MICROGRAD_PURE_PYTHON=1``); each row says which ran.

* microgpt's loop (microgpt_loop.py: n_layer 1, n_embd 16, 4 heads, block 16, one document a
  step, Adam) on `MinimalValue`, a lecture-style Value of microgpt's shape, and on ours; the
  figure is the mean CPU time of a step after the first. Goals: compiled >= 2.5x faster, pure
  >= 1.0x. The losses of the first steps must be the same bits on all.
* karpathy's moons demo (workloads.moons) on ours, on his micrograd 0.1.0 (installed into
  benchmarks/.peers by run.py's `ensure_peer`; needs numpy and scikit-learn) and in PyTorch
  (float64 tensors, one thread, where torch is installed). Goal: >= 50x his.
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
ENGINES = (("compiled", False), ("pure", True))
GCS = (("Python's", "python"), ("young 1M", "young1m"))  # (row label, workloads._gc_mode)
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def microgpt(which: str, steps: int, gc_mode: str = "default") -> dict:
    """Mean CPU seconds of a step (after the first) of microgpt's loop; the losses."""
    import time

    import microgpt_loop
    from workloads import _gc_mode

    if which == "ours":
        from micrograd.engine import Value
    else:
        Value = microgpt_loop.MinimalValue
    _gc_mode(gc_mode)
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


def run(python: str, func: str, kwargs: dict, path: list[str], pure: bool = False) -> dict:
    """One row's figure from a fresh `python`; `pure`: with MICROGRAD_PURE_PYTHON=1."""
    spec = json.dumps({"func": func, "kwargs": kwargs, "path": path})
    env = {k: v for k, v in os.environ.items() if k != "MICROGRAD_PURE_PYTHON"}
    if pure:
        env["MICROGRAD_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [python, str(HERE / "_worker.py"), spec], capture_output=True, text=True, cwd=HERE, env=env
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
        for engine, pure in (("compiled", False), ("pure", True)):
            r = run(args.python, "bench_engine:memory", {"steps": args.memory}, ours, pure)
            marks = r.get("marks", r)
            print(f"microgpt, {args.memory} steps on ours ({engine}): resident MiB at step {marks}")
        return 0

    rows: dict[str, list[dict]] = {}
    gpt = [  # (label, which, pure, gc mode)
        ("minimal Value", "minimal", False, "default"),
        ("ours, compiled", "ours", False, "default"),
        ("ours, pure", "ours", True, "default"),
    ]
    gpt += [
        (f"ours, {engine}, gc: {name}", "ours", pure, mode)
        for engine, pure in (("compiled", False), ("pure", True))
        for name, mode in GCS
    ]
    moons_ok = has(args.python, "numpy", "sklearn")
    torch_ok = moons_ok and has(args.python, "torch")
    peer = None
    if moons_ok:
        from run import PEER, ensure_peer

        peer = ensure_peer()
    pair = [
        ("ours, compiled", ours, 20, False, "default"),
        ("ours, pure", ours, 20, True, "default"),
    ]
    pair += [
        (f"ours, {engine}, gc: {name}", ours, 20, pure, mode)
        for engine, pure in (("compiled", False), ("pure", True))
        for name, mode in GCS
    ]
    pair += [("karpathy 0.1.0", [str(PEER), str(HERE)], 2, False, "default")] if moons_ok else []
    for k in range(args.rounds):
        for label, which, pure, mode in gpt if k % 2 == 0 else gpt[::-1]:  # alternated
            kw = {"which": which, "steps": args.steps, "gc_mode": mode}
            rows.setdefault(f"microgpt: {label}", []).append(
                run(args.python, "bench_engine:microgpt", kw, ours, pure)
            )
        if moons_ok and peer is None:
            for label, path, steps, pure, mode in pair if k % 2 == 0 else pair[::-1]:
                kw = {"steps": steps, "gc_mode": mode}
                rows.setdefault(f"moons: {label}", []).append(
                    run(args.python, "workloads:moons", kw, path, pure)
                )
            if torch_ok:
                rows.setdefault("moons: PyTorch (float64, 1 thread)", []).append(
                    run(args.python, "workloads:moons_torch", {"steps": 20}, [str(HERE)])
                )
        for n in (1_001, 1_000_001):
            chains = [(engine, pure, "", "default") for engine, pure in ENGINES]
            if n > 1_001:
                chains += [(e, p, f", gc: {name}", mode) for e, p in ENGINES for name, mode in GCS]
            for engine, pure, gc_label, mode in chains[:: 1 if k % 2 == 0 else -1]:
                kw = {"nodes": n, "gc_mode": mode}
                rows.setdefault(f"chain {n:,} nodes: ours, {engine}{gc_label}", []).append(
                    run(args.python, "workloads:chain", kw, ours, pure)
                )
    for engine, pure in [("compiled", False), ("pure", True)]:
        rows[f"chain 1,000,001 nodes: memory, {engine}"] = [
            run(args.python, "workloads:chain_memory", {"nodes": 1_000_001}, ours, pure)
        ]

    def median(label: str) -> float:
        return statistics.median(r["value"] for r in rows[label])

    for label, results in rows.items():
        values = ", ".join(f"{r['value']:.3g}" if "value" in r else str(r) for r in results)
        unit = next((r["unit"] for r in results if "unit" in r), "")
        print(f"  {label:36} {median(label):10.4g} {unit:10} ({values})")
    ran = {label: {r.get("compiled") for r in results} for label, results in rows.items()}
    print("which engine ran (compiled core?):", {k: sorted(map(str, v)) for k, v in ran.items()})
    print("goals:")
    gpt_rows = [rows[f"microgpt: {label}"] for label, _, _, _ in gpt]
    same = all(len({str(r.get("losses")) for r in rnd}) == 1 for rnd in zip(*gpt_rows))
    for engine, goal in (("compiled", 2.5), ("pure", 1.0)):
        ratio = median("microgpt: minimal Value") / median(f"microgpt: ours, {engine}")
        print(f"  microgpt, minimal / ours ({engine}) = {ratio:.2f}x (goal >= {goal}x)")
    print(f"  microgpt: the same losses on every row: {same}")
    for engine in ("compiled", "pure"):
        if f"moons: ours, {engine}" in rows:
            ratio = median("moons: karpathy 0.1.0") / median(f"moons: ours, {engine}")
            print(f"  moons, karpathy 0.1.0 / ours ({engine}) = {ratio:.1f}x (goal >= 50x)")
    if "moons: PyTorch (float64, 1 thread)" in rows:
        ratio = median("moons: ours, compiled") / median("moons: PyTorch (float64, 1 thread)")
        print(f"  moons, ours (compiled) / PyTorch = {ratio:.1f}x (PyTorch's lead)")
    if "moons: ours, compiled" not in rows:
        why = "no numpy or scikit-learn here" if not moons_ok else f"karpathy's package: {peer}"
        print(f"  moons: skipped ({why})")
    for engine in ("compiled", "pure"):
        growth = median(f"chain 1,000,001 nodes: ours, {engine}") / median(
            f"chain 1,001 nodes: ours, {engine}"
        )
        memory = median(f"chain 1,000,001 nodes: memory, {engine}")
        print(
            f"  chain ({engine}): cost per node 1e3 -> 1e6 {growth:.2f}x (goal <= 1.6x), ", end=""
        )
        print(f"memory {memory:.0f} bytes/node (goal <= 150)")
    print("the collector's policy (gc: young 1M against Python's; > 1x: the policy saves time):")
    for engine, _ in ENGINES:
        for kind in ("microgpt", "moons", "chain 1,000,001 nodes"):
            python, young = (f"{kind}: ours, {engine}, gc: {name}" for name, _ in GCS)
            if python in rows and young in rows:
                print(f"  {kind} ({engine}): {median(python) / median(young):.2f}x")
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_engine", main))
