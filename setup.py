"""The build's one addition to pyproject.toml: the optional compiled core of the engine
(micrograd/core/cvalue.c). `optional=True`: where it cannot build (no C compiler), the install
goes on and the engine is the pure-Python one (micrograd/core/compiled.py chooses at import)."""

import sys

from setuptools import Extension, setup

# no fused multiply-add: the compiled core gives the pure engine's bits (tests/test_compiled.py)
flags = [] if sys.platform == "win32" else ["-ffp-contract=off"]
setup(
    ext_modules=[
        Extension(
            "micrograd.core.cvalue",
            ["micrograd/core/cvalue.c"],
            optional=True,
            extra_compile_args=flags,
        )
    ]
)
