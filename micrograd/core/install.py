"""karpathy's micrograd and micrograd-plus share the import name `micrograd` (like PIL and Pillow:
micrograd-plus is a superset, and replaces his package in an environment). pip does not know
that: installing one over the other mixes their files in one folder, and uninstalling either
deletes files the other needs. This module names such a mix in one line, with what to run:

- his over ours (karpathy's installed after micrograd-plus): his micrograd/__init__.py,
  engine.py and nn.py replace ours, so only our other modules can say it: importing them
  (micrograd.core is the first any of them imports) raises ImportError, and the `micrograd`
  command exits with that line;
- ours over his (micrograd-plus after his): everything works until either is uninstalled:
  `import micrograd` says it once, as a MixedInstallWarning;
- his uninstalled after such a mix: our micrograd/__init__.py is gone with his files.

Only an installed micrograd-plus is looked at (his dist-info beside our package's folder, one
listing of site-packages); a clone is never mixed.
"""

from __future__ import annotations

import os
import warnings

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../micrograd
SITE = os.path.dirname(PACKAGE)  # site-packages, where pip put it (or a clone's folder)
REPAIR = "pip uninstall -y micrograd micrograd-plus && pip install micrograd-plus"


class MixedInstallWarning(UserWarning):
    """karpathy's micrograd is installed in the same folder as micrograd-plus."""


def _his() -> str | None:
    """The version of karpathy's micrograd installed beside ours (its dist-info), or None."""
    try:
        names = os.listdir(SITE)
    except OSError:
        return None
    for name in names:
        if name.startswith("micrograd-") and name.endswith((".dist-info", ".egg-info")):
            return name.removesuffix(".dist-info").removesuffix(".egg-info").split("-")[1]
    return None


def _ours_installed() -> bool:
    try:
        names = os.listdir(SITE)
    except OSError:
        return False
    return any(n.startswith("micrograd_plus-") and n.endswith(".dist-info") for n in names)


def mixed() -> tuple[str, str] | None:
    """None, or (what, the one line saying it and its repair): what is "his" (his files over
    ours), "ours" (ours over his) or "gone" (his uninstalled after a mix, with files of ours)."""
    if os.path.basename(SITE) not in ("site-packages", "dist-packages"):
        return None  # a clone (or an editable install of one): nothing listed, never mixed
    if not _ours_installed():
        return None
    init = os.path.join(PACKAGE, "__init__.py")
    if not os.path.exists(init):
        return (
            "gone",
            f"micrograd: micrograd-plus in {SITE} has lost micrograd/__init__.py (uninstalling "
            f"karpathy's micrograd deletes the files the two share): run {REPAIR}",
        )
    version = _his()
    if version is None:
        return None
    with open(init, encoding="utf-8", errors="replace") as f:
        ours = "__version__ =" in f.read()
    if not ours:
        return (
            "his",
            f"micrograd: karpathy's micrograd {version} was installed over micrograd-plus in "
            f"{SITE} and replaced its micrograd/__init__.py, engine.py and nn.py (one import "
            f"name, two packages): run {REPAIR}",
        )
    return (
        "ours",
        f"micrograd: karpathy's micrograd {version} is installed in {SITE} under micrograd-plus "
        f"(one import name: uninstalling either breaks the other; micrograd-plus does all his "
        f"does): run {REPAIR}",
    )


def check() -> None:
    """At import (micrograd.core): raise ImportError where his files replaced ours, warn once
    where ours are over his."""
    found = mixed()
    if found is None:
        return
    what, line = found
    if what == "ours":  # one line: no source line under it (line 0 of the package's folder)
        warnings.warn_explicit(line, MixedInstallWarning, PACKAGE, 0, module="micrograd")
    else:
        raise ImportError(line)
