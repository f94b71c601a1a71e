# Set-up: installs micrograd-plus with what these notebooks import (never Jupyter itself) where
# it is missing (Colab, a Jupyter of your own); where it is installed this does nothing.
# `pip install micrograd` would be karpathy's micrograd 0.1.0, which has no `check`.
import importlib, importlib.util, pathlib, subprocess, sys
try:
    import micrograd.check
except ImportError:
    REPO = 'OWNER/REPO'   # the GitHub repository these notebooks come from
    clone = pathlib.Path.cwd().parent   # in a clone of it, notebooks/ is the working folder
    if (clone / 'micrograd' / 'check').is_dir():
        where = clone.as_uri()
    elif REPO == 'OWNER/' + 'REPO':
        raise SystemExit("micrograd-plus is not installed, and this copy does not say where "
                         "from (REPO above is a placeholder): pip install "
                         "'micrograd-plus[lessons]' in this kernel's Python, then run "
                         "this cell again")
    else:
        where = f'git+https://github.com/{REPO}'
    if importlib.util.find_spec('micrograd'):   # karpathy's (one import name): ours replaces it
        print("this Python's micrograd has no micrograd.check: karpathy's micrograd (or a mix "
              "of his and micrograd-plus, one import name). Replacing it: pip uninstall -y "
              "micrograd micrograd-plus, then pip install micrograd-plus[lessons]")
        subprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-q', '-y', 'micrograd',
                        'micrograd-plus'])
    pip = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q',
                          f'micrograd-plus[lessons] @ {where}'], capture_output=True, text=True)
    if pip.returncode:
        said = ([line for line in pip.stderr.splitlines() if line.strip()] or ['no reason'])[-1]
        raise SystemExit(f'could not install micrograd-plus from {where} (no network?): {said}')
    for name in [m for m in sys.modules if m.split('.')[0] == 'micrograd']:
        del sys.modules[name]
    importlib.invalidate_caches()
    import micrograd.check