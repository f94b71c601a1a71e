"""The course notebooks' set-up cell where micrograd is installed: one line. In the repository
the cell (tagged "setup", below each title) installs micrograd-plus where it is missing (Colab, a
Jupyter of one's own); the learner's copies `micrograd course` writes and the browser's course
have micrograd already, and get `installed_setup`'s one line instead.
"""

from __future__ import annotations

import json

INSTALLED_SETUP = "import micrograd.check   # set-up"  # one line: installed here


def installed_setup(text: str) -> str:
    """The notebook (JSON text) with its set-up cell (tagged "setup": pip, for Colab or a clone)
    as the one line it needs where micrograd is installed (these copies, the browser's course)."""
    nb = json.loads(text)
    for c in nb["cells"]:
        if "setup" in c.get("metadata", {}).get("tags", []):
            c["source"] = INSTALLED_SETUP
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
