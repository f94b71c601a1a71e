"""Differential test at scale: thousands of random programs run by micrograd.jit and eagerly.

Each program (tests/support/jit_programs.py: random ops of the shared op table, fused `Value.dot`
and `Value.sum`, shared sub-expressions, captured parameters, constants, Python branches on `.data`)
runs on a small random batch both ways. jit must give the eager per-sample values and parameter
gradients (to 1e-9), or -- when some sample takes another path through the branches than the traced
one -- raise TraceError naming such a sample. Never a silent wrong answer. The normal test suite
runs the first few hundred seeds; this script runs as many as you ask.

    python benchmarks/fuzz_jit.py [--programs 5000] [--first 0]

Prints how many programs agreed, how many jit rightly refused, the time taken, and every
failing seed (rerun one with ``--first SEED --programs 1``). Exit code 1 if any failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=5000, help="how many random programs")
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    try:
        from tests.support.jit_programs import check
    except ImportError as e:
        print(f"fuzz_jit: needs numpy and the test extras ({e})", file=sys.stderr)
        return 1
    counts: Counter[str] = Counter()
    failed = []
    start = time.perf_counter()
    try:
        for seed in range(args.first, args.first + args.programs):
            try:
                counts[check(seed)] += 1
            except Exception as e:  # noqa: BLE001 - report every kind of failure, go on
                failed.append(seed)
                print(f"seed {seed}: {type(e).__name__}: {str(e)[:300]}")
    except KeyboardInterrupt:
        print(f"interrupted after {sum(counts.values()) + len(failed)} programs")
        return 130
    seconds = time.perf_counter() - start
    print(
        f"{args.programs} random programs in {seconds:.1f} s: {counts['same']} equal eager, "
        f"{counts['refused']} rightly refused (a sample on another path), {len(failed)} failed"
        + (f": seeds {failed[:20]}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
