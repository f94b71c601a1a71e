"""What engine.py stands on: the op registry (each rule read on floats, numpy, Values
and names), the numbers policy, the graph walk, the fast paths of + and *, the
garbage-collector policy, copying a graph of any depth; and atomic writes, the one way
every part of micrograd writes a file."""

from . import install as _install

_install.check()  # karpathy's micrograd mixed with this one (same import name): one line, a repair
