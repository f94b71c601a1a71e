"""Run one benchmark row in this fresh process and print its result as JSON (for run.py).

    python benchmarks/_worker.py '{"func": "workloads:chain", "kwargs": {...}, "path": [...]}'

`path` entries go first on sys.path, so `import micrograd` finds the implementation under test
(ours, or karpathy's 0.1.0 in benchmarks/.peers/karpathy: both packages are named `micrograd`).
The last line of stdout is the JSON result; an exception becomes {"error": ...}.
"""

import importlib
import json
import sys
import traceback


def main() -> None:
    spec = json.loads(sys.argv[1])
    sys.path[:0] = spec.get("path", [])
    module_name, func_name = spec["func"].split(":")
    try:
        result = getattr(importlib.import_module(module_name), func_name)(**spec.get("kwargs", {}))
        if "micrograd" in sys.modules:  # say which micrograd was measured
            result["micrograd"] = sys.modules["micrograd"].__file__
            core = sys.modules.get("micrograd.core.compiled")  # ours: which engine ran
            result["compiled"] = getattr(core, "COMPILED", None)
    except Exception as e:  # one broken row must not sink the suite: report it as a cell
        traceback.print_exc()
        result = {"error": f"{type(e).__name__}: {e}"}
    sys.stdout.flush()
    print("\n" + json.dumps(result))


if __name__ == "__main__":
    main()
