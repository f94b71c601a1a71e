"""`micrograd.widgets`: the playground in a notebook cell (`explore(L)`, `train(...)`), at the
import path the lecture's notebooks use. The widgets are a transport of the playground's views and
live with them, in `micrograd/playground/serving/widgets.py`; this name is that module itself (not a
copy of its names), so ``micrograd.widgets.explore`` and anything set on it are the playground's.
"""

import sys

from .playground.serving import widgets

sys.modules[__name__] = widgets
