# Set-up: installs micrograd, with what these notebooks use, where it is missing (Colab, a fresh
# Jupyter); where it is installed this does nothing. `pip install micrograd` would be karpathy's
# micrograd 0.1.0, which has no `check`: this course's is micrograd-plus.
import importlib, importlib.util, pathlib, subprocess, sys
try:
    import micrograd.check
except ImportError:
    REPO = 'OWNER/REPO'   # the GitHub repository these notebooks come from
    clone = pathlib.Path.cwd().parent   # in a clone of it, notebooks/ is the working folder
    where = (clone.as_uri() if (clone / 'micrograd' / 'check').is_dir()
             else f'git+https://github.com/{REPO}')
    pip = [sys.executable, '-m', 'pip', 'install', '-q']
    if importlib.util.find_spec('micrograd'):   # karpathy's: ours takes its place
        subprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-q', '-y', 'micrograd'])
    subprocess.run([*pip, f'micrograd-plus[course] @ {where}'], check=True)
    for name in [m for m in sys.modules if m.split('.')[0] == 'micrograd']:
        del sys.modules[name]
    importlib.invalidate_caches()
    import micrograd.check