"""`micrograd grade`: learners' notebooks run in fresh kernels inside a sandbox, each
exercise judged by the course's own check cells (grade.py); the sandbox (sandbox.py:
bubblewrap, limits), the kernel's client inside it (runner.py) and the reports (report.py:
CSV, summary, HTML)."""
