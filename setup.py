"""The build's one addition to pyproject.toml: the optional compiled core of the engine
(micrograd/core/cvalue.c). `optional=True`: where it cannot build (no C compiler), the install
goes on and the engine is the pure-Python one (micrograd/core/compiled.py chooses at import)."""

import os
import sys

from setuptools import Extension, setup

# no fused multiply-add: the compiled core gives the pure engine's bits (tests/test_compiled.py)
flags = [] if sys.platform == "win32" else ["-ffp-contract=off"]
core = Extension(
    "micrograd.core.cvalue", ["micrograd/core/cvalue.c"], optional=True, extra_compile_args=flags
)
# MICROGRAD_PURE_PYTHON=1 at build time: no compiled core, a wheel for every platform
# (py3-none-any: what `make dist` builds for PyPI; the sdist still carries cvalue.c)
pure = os.environ.get("MICROGRAD_PURE_PYTHON") == "1"
setup(ext_modules=[] if pure else [core])
