"""The wheels from PyPI the course's JupyterLite app ships, pinned: `WHEELS` (name -> file and
the sha256 of that file on PyPI), `wheel(name, cache)` (from the cache, else ``pip download``,
checked against its sha256, then cached atomically) and `all_wheels(cache)`. `course_app` builds
the app's Pyodide lock from them.
"""

from __future__ import annotations

import hashlib
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Callable

from ..core.atomic import atomic_write
from .static_site import SiteError

# Every wheel from PyPI the app ships: name -> (file, sha256 of that file on PyPI). The kernel's
# (micropip .. typing-extensions) at the versions of Pyodide PYODIDE_VERSION's own lock; the
# widgets' (comm .. jupyterlab_widgets) at versions that work together. jupyterlab_widgets is
# only the widget manager's front end (never loaded by the kernel).
WHEELS = {
    "micropip": (
        "micropip-0.11.1-py3-none-any.whl",
        "768de165adb8e66906039d8fec4127a57f522dfdf8e6fbff877a4616941ecfd3",
    ),
    "ipython": (
        "ipython-9.12.0-py3-none-any.whl",
        "0f2701e8ee86e117e37f50563205d36feaa259d2e08d4a6bc6b6d74b18ce128d",
    ),
    "asttokens": (
        "asttokens-3.0.1-py3-none-any.whl",
        "15a3ebc0f43c2d0a50eeafea25e19046c68398e487b9f1f5b517f7c0f40f976a",
    ),
    "decorator": (
        "decorator-5.2.1-py3-none-any.whl",
        "d316bb415a2d9e2d2b3abcc4084c6502fc09240e292cd76a76afc106a1c8e04a",
    ),
    "executing": (
        "executing-2.2.1-py2.py3-none-any.whl",
        "760643d3452b4d777d295bb167ccc74c64a81df23fb5e08eff250c425a4b2017",
    ),
    "matplotlib-inline": (
        "matplotlib_inline-0.2.1-py3-none-any.whl",
        "d56ce5156ba6085e00a9d54fead6ed29a9c47e215cd1bba2e976ef39f5710a76",
    ),
    "prompt-toolkit": (
        "prompt_toolkit-3.0.52-py3-none-any.whl",
        "9aac639a3bbd33284347de5ad8d68ecc044b91a762dc39b7c21095fcd6a19955",
    ),
    "pure-eval": (
        "pure_eval-0.2.3-py3-none-any.whl",
        "1db8e35b67b3d218d818ae653e27f06c3aa420901fa7b081ca98cbedc874e0d0",
    ),
    "pygments": (
        "pygments-2.20.0-py3-none-any.whl",
        "81a9e26dd42fd28a23a2d169d86d7ac03b46e2f8b59ed4698fb4785f946d0176",
    ),
    "six": (
        "six-1.17.0-py2.py3-none-any.whl",
        "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274",
    ),
    "stack-data": (
        "stack_data-0.6.3-py3-none-any.whl",
        "d5558e0c25a4cb0853cddad3d77da9891a08cb85dd9f9f91b9f8cd66e511e695",
    ),
    "traitlets": (
        "traitlets-5.14.3-py3-none-any.whl",
        "b74e89e397b1ed28cc831db7aea759ba6640cb3de13090ca145426688ff1ac4f",
    ),
    "wcwidth": (
        "wcwidth-0.6.0-py3-none-any.whl",
        "1a3a1e510b553315f8e146c54764f4fb6264ffad731b3d78088cdb1478ffbdad",
    ),
    "jedi": (
        "jedi-0.19.2-py2.py3-none-any.whl",
        "a8ef22bde8490f57fe5c7681a3c83cb58874daf72b4784de3cce5b6ef6edb5b9",
    ),
    "parso": (
        "parso-0.8.6-py2.py3-none-any.whl",
        "2c549f800b70a5c4952197248825584cb00f033b29c692671d3bf08bf380baff",
    ),
    "packaging": (
        "packaging-26.1-py3-none-any.whl",
        "5d9c0669c6285e491e0ced2eee587eaf67b670d94a19e94e3984a481aba6802f",
    ),
    "typing-extensions": (
        "typing_extensions-4.15.0-py3-none-any.whl",
        "f0fa19c6845758ab08074a0cfa8b7aecb71c999ca73d62883bc25cc018c4e548",
    ),
    "comm": (
        "comm-0.2.3-py3-none-any.whl",
        "c615d91d75f7f04f095b30d1c1711babd43bdc6419c1be9886a85f2f4e489417",
    ),
    "ipywidgets": (
        "ipywidgets-8.1.9-py3-none-any.whl",
        "f2b8cbcaae10252b809fbe4d7470db75c09b769a32cbf816d20e5ca6d3c5a79d",
    ),
    "anywidget": (
        "anywidget-0.11.0-py3-none-any.whl",
        "c574d9acc6503ad27b37a9acea48f957a8ba7c9c9876cfcb37898931c098ce9d",
    ),
    "psygnal": (
        "psygnal-0.16.1-py3-none-any.whl",
        "93b96894d8c46f0a3c0bfaaf8abe73f0d6db2c20cc6d303624cf08f85abc3c92",
    ),
    "jupyterlab-widgets": (
        "jupyterlab_widgets-3.0.17-py3-none-any.whl",
        "40ac1e9955acf116c4d995d9bfa082d86ad9ec6d91c4f134827cf5e0a5eb75e0",
    ),
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wheel(name: str, cache_dir: pathlib.Path, log: Callable[[str], None] = print) -> bytes:
    """WHEELS[name], checked: from the cache, else from PyPI by ``pip download`` (then cached)."""
    file_name, want = WHEELS[name]
    cached = cache_dir / "wheels" / file_name
    if cached.is_file():
        data = cached.read_bytes()
        if sha256(data) == want:
            return data
        log(f"{cached} does not match its sha256; fetching it again")
    version = file_name.split("-")[1]
    with tempfile.TemporaryDirectory(prefix="micrograd-pip-") as tmp:
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "--only-binary=:all:",
                    "--python-version",
                    "3.14",
                    "--implementation",
                    "py",
                    "--abi",
                    "none",
                    "--platform",
                    "any",
                    "-d",
                    tmp,
                    f"{name}=={version}",
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
        except subprocess.TimeoutExpired:
            raise SiteError(
                f"pip download {name}=={version} took more than 10 minutes; is PyPI reachable?"
            ) from None
        got_file = pathlib.Path(tmp, file_name)
        if done.returncode != 0 or not got_file.is_file():
            lines = [
                ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")
            ]
            why = lines[-1][:200] if lines else f"no {file_name}"
            raise SiteError(f"pip download {name}=={version} for the course failed: {why}")
        data = got_file.read_bytes()
    got = sha256(data)
    if got != want:
        raise SiteError(
            f"PyPI's {file_name} is not the one this micrograd was built for: sha256 "
            f"{got[:16]}..., expected {want[:16]}..."
        )
    (cache_dir / "wheels").mkdir(parents=True, exist_ok=True)
    atomic_write(cached, data)
    return data


def all_wheels(cache_dir: pathlib.Path, log: Callable[[str], None] = print) -> dict[str, bytes]:
    """Every wheel of WHEELS, by name (fetched once, in one line of the log)."""
    missing = [n for n, (f, h) in WHEELS.items() if not (cache_dir / "wheels" / f).is_file()]
    if missing:
        log(f"fetching the course's {len(missing)} wheels from PyPI with pip (about 5 MB, once)...")
    return {name: wheel(name, cache_dir, log) for name in WHEELS}
