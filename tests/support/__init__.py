"""Helpers the tests share (no tests here): the op table (optable.py), the lecture's code and
graphs (lecture.py, lecture_code.py), learners' engines (learner.py, corpus.py), jit's random
programs (jit_programs.py), JupyterLab and the browser's Predict steps (jupyterlab.py,
predict_browser.py), and building the wheel (building.py)."""
