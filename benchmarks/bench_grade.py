"""Benchmark: `micrograd grade` on a class: 200 learners, each with the whole course (notebooks 1
to 6) filled in, in GitHub Classroom's layout (a folder per learner), graded as a teacher runs it:

    micrograd grade CLASS_DIR --jobs N --csv ... --summary ... --html ...

Most learners' answers are right (tests/test_notebooks.py's, which differ from the solutions);
every fifth has bugs (a halved slope, a Value that adds for *, a crash, a step that never zeroes
the grads), and one in ten has a slope that never returns (it hangs until its cell's time
limit, which comes from the course's own solutions unless --timeout gives one). The figure
is the wall time of the whole command (every notebook in the bubblewrap sandbox, where it is
installed), with the machine's load average before and after: on a shared machine the time
says as much about the other load as about the grader.

The CPU time the notebooks' runs used (the grader's last line reports it) is printed too:
divided by the jobs, it is about what the run takes on a machine with nothing else to do (the
other load cannot stretch CPU time much; the hang spins for its whole time limit, counted in).

`--engine kernel` grades the same class as the grader did before its warm workers: a Jupyter
kernel started for every notebook (`MICROGRAD_GRADE_ENGINE=kernel`), for the ratio.

    .venv/bin/python benchmarks/bench_grade.py [--learners 200] [--jobs N] [--timeout S]
        [--engine worker|kernel]
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def write_class(root: pathlib.Path, learners: int) -> dict[str, str]:
    """The class folder; returns learner -> "right", "buggy" or "hangs"."""
    import nbformat

    from tests.test_notebooks import FILLS, NAMES, _filled

    n1, n3 = "01_derivatives_and_value", "03_neuron_to_mlp"
    bugs = {
        n1: {
            "slope": "def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)",
            "value": FILLS[n1]["value"].replace("self.data * other.data", "self.data + other.data"),
            "step1": "L.grad = 1 / 0",
        },
        n3: {"step": FILLS[n3]["step"].replace("        p.grad = 0\n", "        pass\n")},
    }
    kinds = {}
    for k in range(learners):
        who = f"learner{k + 1:02d}"
        kind = "hangs" if k % 10 == 1 else "buggy" if k % 5 == 4 else "right"
        kinds[who] = kind
        for name in [n for n in NAMES if n[:2] <= "06"]:  # notebooks 1-6
            answers = dict(FILLS[name])
            if kind == "buggy":
                answers.update(bugs.get(name, {}))
            if kind == "hangs" and name == n1:
                answers["slope"] = "def slope(f, x, h=0.0001):\n    while True:\n        pass"
            folder = root / who
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(_filled(name, answers), folder / f"{name}.ipynb")
    return kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=None, help="every cell's limit")
    parser.add_argument("--engine", choices=("worker", "kernel"), default="worker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = pathlib.Path(tmp) / "class"
        kinds = write_class(root, args.learners)
        reports = pathlib.Path(tmp)
        limit = ["--timeout", f"{args.timeout:g}"] if args.timeout else []
        cmd = [
            *(sys.executable, "-m", "micrograd", "grade", str(root)),
            *("--jobs", str(args.jobs), *limit),
            "--csv",
            str(reports / "grades.csv"),
            "--summary",
            str(reports / "summary.csv"),
            "--html",
            str(reports / "grades.html"),
        ]
        load_before = os.getloadavg()
        import resource

        tree = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        env = {**os.environ, "MICROGRAD_GRADE_ENGINE": args.engine}
        done = subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        took = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        whole = (after.ru_utime + after.ru_stime) - (tree.ru_utime + tree.ru_stime)
        load_after = os.getloadavg()
        with open(reports / "summary.csv", newline="") as f:
            summary = {row["learner"]: row for row in csv.DictReader(f)}
        notebooks = sum(1 for _ in root.glob("*/*.ipynb"))
    core = subprocess.run(  # what the notebooks' Values run on (the grader's own Python's)
        [sys.executable, "-c", "import micrograd.core.compiled as c; print(c.COMPILED)"],
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    core = "the compiled core" if core == "True" else "the pure-Python engine"
    said = re.search(r"CPU time of the (?:kernels|notebooks): (\d+) s", done.stderr)
    cpu = float(said.group(1)) if said else float("nan")
    sandbox = "no sandbox" if "no sandbox" in done.stderr else "bubblewrap sandbox"
    right = [w for w, k in kinds.items() if k == "right"]
    all_right = all(
        summary[w]["failed"] == summary[w]["error"] == summary[w]["timeout"] == "0"
        and summary[w]["blocked"] == "0"
        for w in right
    )
    print(
        f"graded {args.learners} learners x 6 notebooks ({notebooks} notebooks; "
        f"{sum(k == 'buggy' for k in kinds.values())} learners buggy, "
        f"{sum(k == 'hangs' for k in kinds.values())} hanging) "
        f"with --jobs {args.jobs} {' '.join(limit) or '(limits from the course)'}, {sandbox}, "
        f"{'a warm worker per job' if args.engine == 'worker' else 'a kernel per notebook'}, "
        f"{core}: "
        f"{took:.0f} s "
        f"({took / 60:.1f} min), exit status {done.returncode}"
    )
    print(
        f"every right learner graded right: {all_right}; load average before "
        f"{load_before[0]:.1f}, after {load_after[0]:.1f} (on {os.cpu_count()} cores)"
    )
    print(
        f"CPU time of the notebooks' runs (as the grader reports "
        f"it): {cpu:.0f} s ({cpu / notebooks:.1f} s a notebook): on {args.jobs} idle cores, "
        f"about {cpu / args.jobs:.0f} s ({cpu / args.jobs / 60:.1f} min) of wall time"
    )
    own = whole  # the sandboxes' processes are reaped inside them: not counted here
    print(
        f"CPU time of the grader's own process (reading, composing, judging, the reports): "
        f"{own:.0f} s; with the notebooks', {(cpu + own) / args.learners:.1f} s a learner: for "
        f"200 learners on {args.jobs} idle cores, about "
        f"{(cpu + own) / args.learners * 200 / args.jobs / 60:.1f} min (CPU time measured under "
        f"load is longer than on an idle machine: an upper figure)"
    )
    return 0 if all_right else 1


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_grade", main))
