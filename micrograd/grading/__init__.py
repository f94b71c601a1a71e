"""`micrograd grade`: learners' notebooks run inside a sandbox, each exercise judged by the
course's own check cells (grade.py); the notebook that runs (graded_notebook.py), the sandbox
(sandbox.py: bubblewrap, limits), a warm worker per job that forks a child per notebook
(warm_worker.py, workers.py) or a kernel's client (runner.py), each result kept as it comes
(store.py), and the reports (class_report.py: CSV, summary, HTML; gradebook.py: an LMS's CSV)."""
