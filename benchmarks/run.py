"""Benchmarks: our engine side by side with karpathy's micrograd 0.1.0 and PyTorch CPU.

Run from the repository root (about 2 minutes; `make bench` does it in the project venv):

    python benchmarks/run.py            # measure everything, print the table, write its section
                                        # of RESULTS.md (results.py)
    python benchmarks/run.py --quick    # smaller sizes, a smoke run; writes nothing
    python benchmarks/run.py --only chain --no-write

On first use it installs karpathy's micrograd into benchmarks/.peers/karpathy (git-ignored) with
``pip install --target``; his package is also called `micrograd`, so every row runs in its own
subprocess whose sys.path puts the implementation under test first. JAX is installed the same way
into benchmarks/.peers/jax (its rows are skipped, with the reason, where pip cannot install it).
PyTorch rows use the installed torch, or are skipped with a note. Every row runs with one BLAS
thread (OPENBLAS/MKL/OMP_NUM_THREADS=1), as PyTorch's rows ask for one thread. Times are CPU
seconds of the measuring process (`time.process_time`, gc pauses included), so other work on a
shared machine barely moves them.
Every figure is a cost: lower is better. The ratio columns divide a reference row's figure by
this row's, so "karpathy ÷ this = 40" means 40x cheaper than his; the reference is the first
karpathy (or torch, or numpy floor) row of the same table section that has a figure. What each
workload does is described in workloads.py.

Adding rows (the jit and numpy rows live in their own files): put a module `benchmarks/bench_*.py`
next to this one. run.py imports it and asks it for rows, through either

    ROWS: list[Row]                       # or
    def rows(quick: bool = False) -> list[Row]: ...

Build them with ``from run import Row``. A Row names a table section (`group`: reuse MOONS, CHAIN,
WIDE, MEMORY or DEPTH from here to compare against the peers there, or name a new one), a `label`,
and a function ``"module:function"`` (any module in benchmarks/) that run.py calls with `kwargs` in
a fresh process. The function returns ``{"value": float, "unit": str, "detail": str}``, or
``{"fails": str}`` for an expected failure shown as a cell; time it with `workloads.clock`, as
the core rows do. `needs` lists modules the row imports; if one is missing the row is shown as
skipped instead of failing. Keep the module's top level light (no numpy, no torch): run.py imports
it only to read the rows.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import inspect
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER = HERE / ".peers" / "karpathy"
PEER_REQUIREMENT = "micrograd==0.1.0"
JAX_PEER = HERE / ".peers" / "jax"
JAX_REQUIREMENTS = ("jax", "jaxlib")
# Rows whose implementation is a reference for a ratio column: impl -> the column's title.
REFERENCES = {"karpathy": "karpathy ÷ this", "torch": "torch ÷ this", "numpy": "floor ÷ this"}
COMMAND = "python benchmarks/run.py"

# `from run import Row` in a bench_*.py module must get this module, even when it runs as __main__.
sys.modules.setdefault("run", sys.modules[__name__])

MOONS = "moons training step (MLP 2-16-16-1, 100 samples, full batch)"
CHAIN = "deep chain y = y*w + c (build + backward, per node)"
WIDE = "wide sum of 200,000 leaves (sum + backward, per term)"
MEMORY = "memory of the chain (tracemalloc peak incl. backward, per node)"
DEPTH = "deepest chain backward() survives"


@dataclass(frozen=True)
class Row:
    group: str  # the table section; rows in one section share a unit
    label: str  # what is measured, as shown in the table
    func: str  # "module:function" in benchmarks/, called as function(**kwargs) in a new process
    kwargs: dict = field(default_factory=dict)
    # "karpathy": his package first on sys.path; "jax": the JAX peer first on sys.path;
    # "karpathy", "torch" and "numpy" (the numpy floor) are the references of the ratio columns
    impl: str = "ours"
    needs: tuple[str, ...] = ()  # modules the row imports; if one is missing the row is skipped
    timeout: float = 300.0  # seconds before the row is reported as timed out


def core_rows(quick: bool = False) -> list[Row]:
    big = 100_001 if quick else 1_000_001
    wide = 20_000 if quick else 200_000
    data = ("numpy", "sklearn")
    torch_ = ("torch",)
    rows = [
        Row(
            MOONS,
            "ours: micrograd.nn.MLP (fused neurons)",
            "workloads:moons",
            {"steps": 10 if quick else 100},
            needs=data,
        ),
        Row(
            MOONS,
            "ours, gc.freeze() after the imports",
            "workloads:moons",
            {"steps": 10 if quick else 100, "gc_mode": "freeze"},
            needs=data,
        ),
        Row(
            MOONS,
            "karpathy's micrograd 0.1.0",
            "workloads:moons",
            {"steps": 2 if quick else 4},
            impl="karpathy",
            needs=data,
        ),
        Row(
            MOONS,
            "PyTorch CPU, float64 tensors, 1 thread",
            "workloads:moons_torch",
            {"steps": 10 if quick else 100},
            impl="torch",
            needs=data + torch_,
        ),
    ]
    rows += [
        Row(CHAIN, f"ours, {n:,} nodes", "workloads:chain", {"nodes": n})
        for n in (501, 1_001, 10_001, 100_001, big)
    ]
    rows += [
        Row(
            CHAIN,
            f"ours, {n:,} nodes, gc.disable()",
            "workloads:chain",
            {"nodes": n, "gc_mode": "disable"},
        )
        for n in (1_001, big)
    ]
    rows += [
        Row(
            CHAIN,
            "karpathy, 501 nodes (his limit is ~1,000; per node, extrapolate)",
            "workloads:chain",
            {"nodes": 501},
            impl="karpathy",
        ),
        Row(CHAIN, "karpathy, 1,001 nodes", "workloads:chain", {"nodes": 1_001}, impl="karpathy"),
        Row(
            CHAIN,
            "PyTorch, 1,001 nodes",
            "workloads:chain_torch",
            {"nodes": 1_001},
            impl="torch",
            needs=torch_,
        ),
        Row(
            CHAIN,
            "PyTorch, 100,001 nodes",
            "workloads:chain_torch",
            {"nodes": 100_001},
            impl="torch",
            needs=torch_,
        ),
        Row(WIDE, f"ours, Python sum() of {wide:,}", "workloads:wide_sum", {"terms": wide}),
        Row(
            WIDE,
            f"ours, Value.sum() of {wide:,}",
            "workloads:wide_sum",
            {"terms": wide, "how": "Value.sum"},
        ),
        Row(
            WIDE,
            "karpathy, Python sum() of 500 (per term, extrapolate)",
            "workloads:wide_sum",
            {"terms": 500},
            impl="karpathy",
        ),
        Row(
            WIDE,
            f"karpathy, Python sum() of {wide:,}",
            "workloads:wide_sum",
            {"terms": wide},
            impl="karpathy",
        ),
        Row(
            WIDE,
            f"PyTorch, Python sum() of {wide:,}",
            "workloads:wide_sum_torch",
            {"terms": wide},
            impl="torch",
            needs=torch_,
        ),
        Row(
            WIDE,
            f"PyTorch, torch.stack(...).sum() of {wide:,}",
            "workloads:wide_sum_torch",
            {"terms": wide, "how": "stack"},
            impl="torch",
            needs=torch_,
        ),
        Row(MEMORY, "ours, 1,001 nodes", "workloads:chain_memory", {"nodes": 1_001}),
        Row(MEMORY, f"ours, {big:,} nodes", "workloads:chain_memory", {"nodes": big}),
        Row(
            MEMORY,
            "karpathy, 501 nodes (as deep as he goes)",
            "workloads:chain_memory",
            {"nodes": 501},
            impl="karpathy",
        ),
        Row(
            DEPTH,
            "ours (tried up to 1,000,001)",
            "workloads:deepest_chain",
            {"limit": 100_001 if quick else 1_000_001},
        ),
        Row(
            DEPTH,
            "karpathy (recursion limit as-is)",
            "workloads:deepest_chain",
            {"limit": 100_001},
            impl="karpathy",
        ),
    ]
    return rows


def extra_rows(quick: bool = False) -> list[Row]:
    """Rows from benchmarks/bench_*.py modules (see the protocol at the top of this file)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    rows: list[Row] = []
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(path.stem)
        if hasattr(module, "rows"):
            takes_quick = "quick" in inspect.signature(module.rows).parameters
            found = module.rows(quick=quick) if takes_quick else module.rows()
        elif hasattr(module, "ROWS"):
            found = module.ROWS
        else:  # a stand-alone script that has not joined the table yet
            print(f"note: {path.name} has no ROWS or rows(); not in the table", file=sys.stderr)
            continue
        rows += [r if isinstance(r, Row) else Row(**r) for r in found]
    return rows


def ensure_peer() -> str | None:
    """Install karpathy's micrograd into benchmarks/.peers/karpathy once; None, or why it failed."""
    if (PEER / "micrograd" / "engine.py").exists():
        return None
    print(f"installing {PEER_REQUIREMENT} into {PEER.relative_to(ROOT)} ...", file=sys.stderr)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--target",
        str(PEER),
        PEER_REQUIREMENT,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return f"pip install {PEER_REQUIREMENT} failed: {done.stderr.strip().splitlines()[-1:]}"
    return None


def ensure_jax() -> str | None:
    """Install JAX for the CPU into benchmarks/.peers/jax once; None, or why it failed."""
    if (JAX_PEER / "jax" / "__init__.py").exists() and (JAX_PEER / "jaxlib").exists():
        return None
    print(
        f"installing {' '.join(JAX_REQUIREMENTS)} into {JAX_PEER.relative_to(ROOT)} ...",
        file=sys.stderr,
    )
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--target",
        str(JAX_PEER),
        *JAX_REQUIREMENTS,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"JAX is not installable here (pip install {' '.join(JAX_REQUIREMENTS)}: {why})"
    return None


def run_row(row: Row, peer_problem: str | None, jax_problem: str | None = None) -> dict:
    """The row's result dict, measured in a fresh interpreter."""
    missing = [m for m in row.needs if find_spec(m) is None]
    if missing:
        return {"skipped": f"needs {', '.join(missing)} (not installed)"}
    if row.impl == "karpathy":
        if peer_problem:
            return {"skipped": peer_problem}
        path = [str(PEER), str(HERE)]
    elif row.impl == "jax":
        if jax_problem:
            return {"skipped": jax_problem}
        path = [str(JAX_PEER), str(HERE)]
    else:
        path = [str(ROOT), str(HERE)]
    spec = json.dumps({"func": row.func, "kwargs": row.kwargs, "path": path})
    cmd = [sys.executable, str(HERE / "_worker.py"), spec]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=row.timeout, cwd=HERE, env=env
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {row.timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"worker exited {done.returncode}: {tail}"}
    expected = PEER if row.impl == "karpathy" else ROOT
    where = result.get("micrograd")
    if where and not Path(where).resolve().is_relative_to(expected):
        return {"error": f"measured the wrong micrograd: {where}"}
    return result


def cell(result: dict) -> str:
    if "value" in result:
        v = result["value"]
        text = f"{v:,.0f}" if v >= 100 else f"{v:.3g}"
        return f"{text} {result['unit']}"
    for key in ("fails", "skipped", "error"):
        if key in result:
            return f"{key}: {result[key]}" if key != "fails" else f"fails: {result[key]}"
    return "?"


def ratio(ref: dict | None, result: dict) -> str:
    if not ref or "value" not in result or "value" not in ref or not result["value"]:
        return ""
    if ref.get("unit") != result.get("unit"):
        return ""
    r = ref["value"] / result["value"]
    return f"{r:,.0f}x" if r >= 100 else f"{r:.3g}x"


def table(results: list[tuple[Row, dict]]) -> str:
    """A markdown table, one section per group, in order of first appearance."""
    groups: dict[str, list[tuple[Row, dict]]] = {}
    for row, result in results:
        groups.setdefault(row.group, []).append((row, result))
    titles = " | ".join(REFERENCES.values())
    lines = [f"| what | figure | {titles} | detail |", "|---" * (3 + len(REFERENCES)) + "|"]
    for group, members in groups.items():
        refs = {
            impl: next((res for r, res in members if r.impl == impl and "value" in res), None)
            for impl in REFERENCES
        }
        lines.append(f"| **{group}** |" + " |" * (2 + len(REFERENCES)))
        for row, result in members:
            detail = result.get("detail", "").replace("|", "/")
            ratios = " | ".join(ratio(refs[impl], result) for impl in REFERENCES)
            lines.append(f"| {row.label} | {cell(result)} | {ratios} | {detail} |")
    return "\n".join(lines)


def machine() -> dict:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "nproc": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if hasattr(os, "getloadavg"):  # other work on the machine skews every figure: record it
        info["load average at start"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    for name in ("torch", "numpy"):
        try:
            info[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return info


def write_results(text: str, info: dict, seconds: float, path: Path) -> None:
    """The table as section `run` of RESULTS.md (results.py: the rest of the file is kept)."""
    from results import heading, write_section

    head = [
        heading(COMMAND, info.get("load average at start", "not available here")),
        f"It took {seconds:.0f} s. Every figure is a cost, lower",
        'is better; "karpathy ÷ this" is how many times cheaper than karpathy\'s micrograd 0.1.0',
        "(his first measured row in the section). Each row ran in its own process. Times are CPU",
        "time of that process (`time.process_time`), so other load on the machine barely moves",
        "them; they include Python's garbage collector as it runs by default, except in rows that",
        "say otherwise. The workloads are described in `benchmarks/workloads.py`.",
        "",
        "Machine: " + "; ".join(f"{k} {v}" for k, v in info.items()) + ".",
        "",
        "",
    ]
    write_section("run", "\n".join(head) + text, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes; implies --no-write")
    parser.add_argument("--only", metavar="TEXT", help="only rows whose section or label has TEXT")
    parser.add_argument("--no-write", action="store_true", help="do not write RESULTS.md")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    rows = core_rows(args.quick) + extra_rows(args.quick)
    if args.only:
        rows = [r for r in rows if args.only.lower() in (r.group + " " + r.label).lower()]
    peer_problem = ensure_peer() if any(r.impl == "karpathy" for r in rows) else None
    jax_problem = ensure_jax() if any(r.impl == "jax" for r in rows) else None
    info = machine()
    start = time.perf_counter()
    results = []
    for row in rows:
        t0 = time.perf_counter()
        result = run_row(row, peer_problem, jax_problem)
        print(f"{time.perf_counter() - t0:6.1f} s  {row.label}: {cell(result)}", file=sys.stderr)
        results.append((row, result))
    seconds = time.perf_counter() - start
    text = table(results)
    print(text)
    if not (args.quick or args.no_write or args.only):
        write_results(text, info, seconds, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
