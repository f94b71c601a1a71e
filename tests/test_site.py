"""`micrograd site`'s parts without a browser: the wheel it writes (pip installs it, and it is the
installed package), Pyodide's archive (integrity checked, cached, a missing npm in one line),
the command's lines and exit statuses, and the worker's Python side (`playground.worker.Host`)
answering the page's messages as the widget's protocol says. The site itself, in Chromium, is
tests/test_site_browser.py."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile
from typing import Any

import pytest

import micrograd
from micrograd.commands.cli import main
from micrograd.playground.serving.worker import WATCH_SECONDS, Host
from micrograd.playground.views import Tab
from micrograd.site import static_site as site

from .conftest import _unavailable

PACKAGE = pathlib.Path(micrograd.__file__).resolve().parent


# ------------------------------------------------------------------ the wheel


@pytest.mark.slow
def test_the_wheel_is_the_installed_package_and_pip_installs_it(tmp_path: pathlib.Path) -> None:
    name, data = site.package_wheel()
    assert name == f"micrograd_plus-{micrograd.__version__}-py3-none-any.whl"
    assert site.package_wheel()[1] == data  # the same package, the same bytes
    z = zipfile.ZipFile(io.BytesIO(data))
    installed = {
        f"micrograd/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not p.name.startswith(".")
        and p.suffix not in (".pyc", *site.NATIVE)  # (Pyodide runs the pure engine)
    }
    packaged = {n for n in z.namelist() if n.startswith("micrograd/")}
    assert packaged == installed
    for n in packaged:  # byte for byte what is installed
        assert z.read(n) == (PACKAGE.parent / n).read_bytes(), n
    # RECORD's hashes are the files' (pip checks them)
    info = f"micrograd_plus-{micrograd.__version__}.dist-info"
    for line in z.read(f"{info}/RECORD").decode().splitlines():
        path, digest, size = line.split(",")
        if path.endswith("RECORD"):
            continue
        body = z.read(path)
        want = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={want}" and int(size) == len(body), path

    wheel = tmp_path / name
    wheel.write_bytes(data)
    target = tmp_path / "target"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(target)}
    code = (
        "import micrograd, micrograd.playground.views as v, importlib.metadata as m; "
        "print(micrograd.__file__); print(m.version('micrograd-plus'))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    where, version = ran.stdout.split()
    assert where.startswith(str(target)) and version == micrograd.__version__


# ------------------------------------------------------------------ Pyodide's archive


def _fake_archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in site.PYODIDE_FILES:
            body = f"// {name}".encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def test_integrity_is_npms_sha512() -> None:
    # npm's integrity of an empty file, as `npm` and the Subresource Integrity spec write it
    assert site.integrity(b"") == (
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXys"
        "P+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
    )


def test_a_cached_archive_is_used_only_if_its_integrity_holds(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _fake_archive()
    cached = tmp_path / f"pyodide-{site.PYODIDE_VERSION}.tgz"
    cached.write_bytes(archive)
    monkeypatch.setattr(site, "PYODIDE_INTEGRITY", site.integrity(archive))
    assert site.pyodide_archive(tmp_path, log=pytest.fail) == (archive, "cache")
    assert set(site.pyodide_files(archive)) == set(site.PYODIDE_FILES)

    cached.write_bytes(archive[:-1])  # damaged: fetched again, which needs npm
    monkeypatch.setattr(site.shutil, "which", lambda name: None)
    said: list[str] = []
    with pytest.raises(site.SiteError) as err:
        site.pyodide_archive(tmp_path, log=said.append)
    assert said == [f"{cached} does not match its integrity; fetching it again"]
    msg = str(err.value)
    assert "\n" not in msg and "npm is needed" in msg and "apt install npm" in msg


def test_an_archive_that_is_not_the_pinned_one_is_refused(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """npm pack (here a stand-in script on PATH) hands over another archive: refused, not
    cached."""
    other = _fake_archive()
    fake = tmp_path / "bin" / "npm"
    fake.parent.mkdir()
    stash = tmp_path / "other.tgz"
    stash.write_bytes(other)
    fake.write_text(
        "#!/bin/sh\n# npm pack NAME --pack-destination DIR ...\n"
        f'cp {stash} "$4/pyodide-{site.PYODIDE_VERSION}.tgz"\necho "[]"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    cache = tmp_path / "cache"
    with pytest.raises(site.SiteError, match="is not the one this micrograd was built for"):
        site.pyodide_archive(cache, log=lambda line: None)
    assert not cache.exists() or not any(cache.iterdir())


# ------------------------------------------------------------------ the command


def test_the_command_says_in_one_line_why_it_cannot_write(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("not a folder")
    assert main(["site", str(a_file)]) == 1
    err = capsys.readouterr().err
    assert err == f"micrograd site: OUT_DIR {a_file} is a file, not a folder\n"


def test_ctrl_c_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "build_site", interrupted)
    assert main(["site", str(tmp_path / "s")]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("micrograd site: interrupted")


def test_the_pages_are_the_servers_pages_told_to_use_the_worker() -> None:

    from micrograd.playground.serving.pages import page_html

    for view in ("explorer", "train", "gpt"):
        page = site.page(view)
        assert page.replace(site.WORKER_META + "\n", "", 1) == page_html(view), view
        assert page.count(site.WORKER_META) == 1


# ------------------------------------------------------------------ the worker's Python side


class Clock:
    """A clock that moves `tick` seconds each time it is read (so a trainer's slice ends)."""

    def __init__(self, tick: float = 0.01) -> None:
        self.now, self.tick = 1000.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def say(host: Host, msg: Any) -> list[dict[str, Any]]:
    return json.loads(host.receive(json.dumps(msg)))


def test_the_site_has_every_file_of_static_and_its_pages_folders() -> None:
    # the pages' folders (static/explorer/, train/, gpt/) as the server serves them
    from importlib import resources

    static = pathlib.Path(str(resources.files("micrograd.playground") / "static"))
    files = site.page_files()
    assert {"index.html", "train.html", "gpt.html"} <= set(files)
    for path in static.rglob("*"):
        name = path.relative_to(static).as_posix()
        if path.is_dir() or name in site.NOT_SHIPPED or name in site.PAGES.values():
            assert f"static/{name}" not in files, name
        else:
            assert files[f"static/{name}"] == path.read_bytes(), name
    assert {"static/common.js", "static/train/train.js", "static/gpt/gpt-draw.js"} <= set(files)
    assert "static/index.html" not in files and "static/widget.js" not in files


def test_the_host_answers_actions_as_the_views_do() -> None:
    host = Host()
    (reply,) = say(
        host,
        {
            "id": 7,
            "view": "explorer",
            "action": "load",
            "body": {"program": "a = 2.0; b = -3.0; c = a*b"},
        },
    )
    assert reply["id"] == 7
    same = Tab(jit=False).call("explorer", "load", {"program": "a = 2.0; b = -3.0; c = a*b"})
    assert reply["answer"] == json.loads(json.dumps(same))
    (reply,) = say(host, {"id": 8, "view": "explorer", "action": "nope", "body": {}})
    assert reply == {"id": 8, "error": "the explorer view has no action 'nope'"}
    (reply,) = say(host, {"id": 9, "view": "train", "action": "config", "body": {"hidden": [99]}})
    assert reply["id"] == 9 and reply["error"].startswith("hidden layer 1 needs 1 to 32 neurons")
    assert say(host, [1, 2]) == [{"error": "a message must be a JSON object, got list"}]
    assert json.loads(host.receive("{oops"))[0]["error"].startswith("a message that is not JSON")


@pytest.mark.slow
def test_the_host_trains_only_when_advanced_and_sends_frames_to_a_page_that_wants_them() -> None:
    clock = Clock()
    host = Host(clock=clock)
    assert host.due_in() == -1.0 and host.advance(0.05) == "[]"  # nothing plays
    (reply,) = say(host, {"id": 1, "view": "train", "action": "config", "body": {}})
    assert reply["answer"]["frame"]["step"] == 0
    trainer = host.tab.train.trainer
    trainer.clock = clock
    (first,) = say(host, {"frames": True})  # the frame the page has not had yet
    assert first["frame"]["step"] == 0 and first["frame"]["history_reset"]
    assert say(host, {"frames": True}) == []  # asked again (still shown): nothing new
    reply, *now = say(
        host, {"id": 2, "view": "train", "action": "control", "body": {"action": "play"}}
    )
    assert reply["answer"]["frame"]["playing"] and host.due_in() == 0.0
    assert all(m["frame"]["playing"] and m["frame"]["step"] == 0 for m in now)  # if any
    frames = []
    for _ in range(200):  # each call trains for a slice; a frame comes when one is due
        frames += [m["frame"] for m in json.loads(host.advance(0.05))]
        if len(frames) >= 2:
            break
    assert len(frames) >= 2 and 0 < frames[0]["step"] < frames[1]["step"] == trainer.step_no
    assert frames[1]["history"][-1][0] == trainer.step_no - 1  # the curve up to that step
    say(host, {"frames": False})  # the page stops looking: no frames, training goes on
    steps = trainer.step_no
    for _ in range(50):
        assert host.advance(0.05) == "[]"
    assert trainer.step_no > steps
    say(host, {"id": 3, "view": "train", "action": "control", "body": {"action": "pause"}})
    assert host.due_in() == -1.0 and host.advance(0.05) == "[]"


def test_a_run_nobody_looks_at_pauses() -> None:
    clock = Clock(tick=0.0)
    host = Host(clock=clock)
    say(host, {"frames": True})
    say(host, {"id": 1, "view": "train", "action": "control", "body": {"action": "play"}})
    clock.now += WATCH_SECONDS - 1
    host.advance(0.01)
    assert host.tab.train.playing
    clock.now += 2  # no {frames: true} for longer than WATCH_SECONDS
    (msg,) = json.loads(host.advance(0.01))
    assert msg["frame"]["playing"] is False and not host.tab.train.playing
    assert math.isclose(host.due_in(), -1.0)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.slow
def test_the_site_trains_every_size_in_javascript_with_the_numbers_of_numpys_jit(
    optimizer: str,
) -> None:
    # The worker's Train view steps in JavaScript (micrograd.jit's JavaScript target; here in
    # Node.js, in the site in the browser's worker): the default network and the largest, with
    # no "not live" note, and the losses of CPython's numpy jit.
    from micrograd.playground.training.trainer import Trainer

    # Both targets add every sum in one order (jit_graph: how every sum adds): the largest
    # network with Adam, whose steps carry a difference in the last bit on, agrees too.
    host = Host()
    for hidden, steps in (([8, 8], 60), ([32] * 6, 60)):
        body = {"hidden": hidden, "optimizer": optimizer}
        (reply,) = say(host, {"id": 1, "view": "train", "action": "config", "body": body})
        meta = reply["answer"]["meta"]
        assert meta["engine"] == "javascript" and not meta.get("size_note")
        say(
            host,
            {
                "id": 2,
                "view": "train",
                "action": "control",
                "body": {"action": "step", "steps": steps},
            },
        )
        ours = host.tab.train.trainer
        ref = Trainer(ours.settings, use_jit="numpy")
        ref.step(steps)
        assert ours.step_no == ref.step_no == steps
        assert math.isclose(ours.loss, ref.loss, rel_tol=1e-12), (hidden, ours.loss, ref.loss)
        assert ours.accuracy == ref.accuracy


# ------------------------------------------------------------------ Python's saved start

# Every private call of Pyodide's the builds (static_site.SNAPSHOT_JS) and the pages that restore
# what they saved (worker.js, course-kernel.js) make, tried on the pinned Pyodide in Node.js: a
# Python saved and restored the way course-kernel.js restores it; the names of those missing out.
_PRIVATE_CALLS = """
const [dir, , out] = process.argv.slice(-4);
const py = await startToSave(dir);
py.runPython("probe = 6 * 7");
const missing = [];
const need = (ok, name) => { if (!ok) missing.push(name); };
need(typeof py._api?.sitepackages === "string", "_api.sitepackages");
need(typeof py._module?.growMemory === "function", "_module.growMemory");
const held = [];
const memory = save(py, { serializer: (o) => (held.push(o), [held.length - 1]) });
const { loadPyodide } = await import(url.pathToFileURL(`${dir}/pyodide.mjs`).href);
const asm = await import(url.pathToFileURL(`${dir}/pyodide.asm.mjs`).href);
let created = false;
let named = 0;
const back = await loadPyodide({
  indexURL: `${dir}/`,
  _loadSnapshot: memory,
  _snapshotDeserializer: ([i]) => (named++, held[i]),
  createPyodideModule: async (settings) => {
    created = true;
    const module = await asm.default(settings);
    module.growMemory(memory.length);
    return module;
  },
});
need(created, "createPyodideModule");
need(held.length === 0 || named > 0, "_snapshotDeserializer");
need(back.runPython("globals().get('probe')") === 42, "_loadSnapshot");
need(back._api?.packageIndexReady instanceof Promise, "_api.packageIndexReady");
await back._api?.packageIndexReady;
need(typeof back._api?.lockfile_packages === "object", "_api.lockfile_packages");
need(back._api?.packageManager?.defaultChannel !== undefined, "_api.packageManager.defaultChannel");
fs.writeFileSync(out, JSON.stringify(missing));
"""


@pytest.mark.slow
def test_the_pinned_pyodide_has_every_private_call_the_saved_starts_use() -> None:
    # Pyodide marks its snapshot API private: the day a Pyodide bump drops or renames one of
    # these, this fails naming it (the builds would quietly ship no saved start).
    if shutil.which("node") is None and shutil.which("nodejs") is None:
        _unavailable("Node.js is not installed (apt install nodejs)")
    try:
        archive, _ = site.pyodide_archive(site.default_cache(), log=lambda line: None)
    except site.SiteError as err:
        _unavailable(f"{err} (scripts/ensure-npm installs npm)")
    said: list[str] = []
    done = site.node_snapshot(
        _PRIVATE_CALLS,
        site.pyodide_files(archive),
        {},
        (),
        [""],
        "the probe",
        300,
        "none",
        said.append,
    )
    assert done is not None, f"Pyodide {site.PYODIDE_VERSION}: {said}"
    missing = json.loads(done[0])
    assert missing == [], f"Pyodide {site.PYODIDE_VERSION} lacks {', '.join(missing)}"


@pytest.mark.slow
@pytest.mark.parametrize("call", ["_makeSnapshot", "makeMemorySnapshot"])
def test_a_real_pyodide_without_a_snapshot_call_builds_no_saved_start(call: str) -> None:
    # the pinned Pyodide with one call renamed away, started in Node.js as the build starts it
    if shutil.which("node") is None and shutil.which("nodejs") is None:
        _unavailable("Node.js is not installed (apt install nodejs)")
    try:
        archive, _ = site.pyodide_archive(site.default_cache(), log=lambda line: None)
    except site.SiteError as err:
        _unavailable(f"{err} (scripts/ensure-npm installs npm)")
    pyodide = site.pyodide_files(archive)
    asm = pyodide["pyodide.asm.mjs"]
    assert asm.count(call.encode()) >= 1
    pyodide["pyodide.asm.mjs"] = asm.replace(call.encode(), call[:-1].encode() + b"X")
    said: list[str] = []
    assert site.python_memory(pyodide, site.package_wheel()[1], said.append) is None
    assert said == [
        f"Pyodide {site.PYODIDE_VERSION} lacks {call}: Python's start is not saved "
        "(the site's pages start it afresh)"
    ]


def test_without_nodejs_the_sites_pages_start_python_afresh_and_say_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(site.shutil, "which", lambda name: None)
    said: list[str] = []
    assert site.python_memory({}, b"", said.append) is None
    assert said == [
        "no Node.js here: Python's start is not saved (the site's pages start it afresh)"
    ]


@pytest.mark.parametrize("call", ["_makeSnapshot", "makeMemorySnapshot"])
def test_a_pyodide_without_its_snapshot_calls_leaves_pythons_start_out_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, call: str
) -> None:
    # what SNAPSHOT_JS throws on such a Pyodide, as Node.js prints it (the build's site.json
    # then names no memory, and the worker starts Python afresh: test_site_browser's "none")
    node = tmp_path / "node"
    node.write_text(
        f"#!/bin/sh\necho 'Error: this Pyodide lacks {call}' >&2\necho 'Node.js v22' >&2\nexit 1\n"
    )
    node.chmod(0o755)
    monkeypatch.setattr(site.shutil, "which", lambda name: str(node))
    said: list[str] = []
    assert site.python_memory({"pyodide.mjs": b""}, b"", said.append) is None
    assert said == [
        f"Pyodide {site.PYODIDE_VERSION} lacks {call}: Python's start is not saved "
        "(the site's pages start it afresh)"
    ]


def test_the_snapshot_bakes_the_calls_a_fresh_page_makes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from micrograd.playground.explore.explorer import EXAMPLES

    baked = site.snapshot(log=lambda line: None)
    assert [(e["view"], e["action"], e["body"]) for e in baked] == [
        ("explorer", "examples", {}),
        ("explorer", "load", {"program": EXAMPLES[0]["program"], "layout": "auto"}),
        ("train", "options", {}),
        ("train", "config", {}),
    ]
    shown = baked[1]["answer"]
    assert shown["drawing"] and shown["program"] == EXAMPLES[0]["program"]
    config = baked[3]["answer"]
    assert config["meta"]["engine"] == "javascript" and config["frame"]["step"] == 0
    assert baked[2]["answer"]["jit"] is False  # the browser's Python has no numpy
    # without Node.js the Train view's first frame cannot be computed here: it waits for Python
    real_which = site.shutil.which
    no_node = lambda name: None if name in ("node", "nodejs") else real_which(name)  # noqa: E731
    monkeypatch.setattr(site.shutil, "which", no_node)
    said: list[str] = []
    baked = site.snapshot(log=said.append)
    assert [e["view"] for e in baked] == ["explorer", "explorer"]
    assert said == [
        "no Node.js here: the Train view's first frame is not baked (it waits for Python)"
    ]
