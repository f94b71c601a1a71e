"""makemore's names.txt as a user gets it: `micrograd.data.names()` reads MICROGRAD_NAMES_FILE, a
build's copy, the user's cache, or downloads it once, checks its sha256 and caches it atomically.

The downloads are served by a local HTTP server on 127.0.0.1 (the shared copy, a corrupted
copy, a body cut short); "no network" is a port where nothing listens. No test touches the
internet (conftest's `_names_isolated` points every test's download at a refused port)."""

from __future__ import annotations

import http.server
import os
import pathlib
import threading
from collections.abc import Iterator

import pytest

from micrograd import data
from micrograd.commands import cli
from micrograd.core import download

from .conftest import needs_names


class _Names(http.server.BaseHTTPRequestHandler):
    """/names.txt: the real file; /corrupt.txt: one byte changed; /cut.txt: the full length
    announced, half of it sent, then the connection closed; anything else: 404."""

    body = b""
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.asked.append(self.path)
        body = self.body
        if self.path == "/corrupt.txt":
            body = body[:100] + b"X" + body[101:]
        elif self.path not in ("/names.txt", "/cut.txt"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if self.path == "/cut.txt" else body)
        self.wfile.flush()
        if self.path == "/cut.txt":
            self.close_connection = True

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """The base address of a server of names.txt, and the list of paths asked of it."""
    handler = type("Handler", (_Names,), {"body": needs_names().read_bytes(), "asked": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.asked
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "data" / "micrograd"  # not made yet: the download makes it
    monkeypatch.setenv("MICROGRAD_DATA", str(folder))
    return folder


def _one_line_naming_the_way_out(message: str, url: str, cache: pathlib.Path) -> None:
    assert "\n" not in message
    assert url in message and str(cache / "names.txt") in message
    assert "MICROGRAD_NAMES_FILE" in message


def test_downloads_once_checks_and_caches(monkeypatch, server, cache, capsys) -> None:
    base, asked = server
    monkeypatch.setenv("MICROGRAD_NAMES_URL", f"{base}/names.txt")
    docs = data.names()
    assert len(docs) == 32033 and docs[:3] == ["emma", "olivia", "ava"] and docs[-1] == "zzyzx"
    assert (cache / "names.txt").read_bytes() == needs_names().read_bytes()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(cache / "names.txt") in err and "sha256" in err
    assert data.names() == docs and asked == ["/names.txt"]  # the second call reads the cache
    assert capsys.readouterr().err == ""
    assert sorted(p.name for p in cache.iterdir()) == ["names.txt"]


@pytest.mark.parametrize(
    "path, why",
    [
        ("/corrupt.txt", "not makemore's names.txt (sha256"),
        ("/cut.txt", "the connection closed after 114,072 of 228,145 bytes"),
        ("/gone.txt", "HTTP 404"),
    ],
)
def test_a_bad_download_caches_nothing_and_says_so_in_one_line(
    monkeypatch, server, cache, path, why
) -> None:
    base, asked = server
    monkeypatch.setenv("MICROGRAD_NAMES_URL", base + path)
    with pytest.raises(FileNotFoundError) as e:
        data.names()
    _one_line_naming_the_way_out(str(e.value), base + path, cache)
    assert why in str(e.value)
    assert not cache.exists() or list(cache.iterdir()) == []  # nothing half-written
    with pytest.raises(FileNotFoundError):
        data.names()
    assert asked == [path, path]  # nothing was cached, so it was asked again


def test_no_network_is_one_line(monkeypatch, cache) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/names.txt"
    monkeypatch.setenv("MICROGRAD_NAMES_URL", url)
    with pytest.raises(FileNotFoundError) as e:
        data.names()
    _one_line_naming_the_way_out(str(e.value), url, cache)
    assert "refused" in str(e.value)


def test_a_damaged_cache_is_downloaded_again(monkeypatch, server, cache) -> None:
    base, asked = server
    monkeypatch.setenv("MICROGRAD_NAMES_URL", f"{base}/names.txt")
    cache.mkdir(parents=True)
    (cache / "names.txt").write_text("emma\nolivia\n")  # cut short by hand
    assert len(data.names()) == 32033 and asked == ["/names.txt"]


def test_the_file_the_environment_names_comes_first(monkeypatch, tmp_path, cache) -> None:
    copy = tmp_path / "elsewhere.txt"
    copy.write_text("zoe\nmia\n")
    monkeypatch.setenv(data.NAMES_ENV, str(copy))
    assert data.names() == ["zoe", "mia"]
    given = tmp_path / "given.txt"
    given.write_text("  ava \r\n\nbob\n")
    assert data.names(given) == ["ava", "bob"]  # a path given wins, stripped, blanks left out
    monkeypatch.setenv(data.NAMES_ENV, str(tmp_path / "missing.txt"))
    with pytest.raises(FileNotFoundError) as e:
        data.names()
    assert "MICROGRAD_NAMES_FILE" in str(e.value) and "missing.txt" in str(e.value)
    assert "\n" not in str(e.value) and not cache.exists()  # never a download instead


def test_a_build_that_carries_the_file_reads_it(monkeypatch, tmp_path, cache) -> None:
    carried = tmp_path / "datasets" / "names.txt"
    carried.parent.mkdir()
    carried.write_text("ada\n")
    monkeypatch.setattr(data, "NAMES_FILE", carried)
    assert data.names() == ["ada"] and not cache.exists()


def test_in_a_browser_it_says_to_upload_a_copy(monkeypatch, cache) -> None:
    monkeypatch.setattr(data.sys, "platform", "emscripten")
    with pytest.raises(FileNotFoundError, match=r"browser cannot download it.*names\('names"):
        data.names()


@pytest.mark.parametrize(
    "platform, env, want",
    [
        ("linux", {}, "HOME/.cache/micrograd"),
        ("linux", {"XDG_CACHE_HOME": "/x"}, "/x/micrograd"),
        ("darwin", {}, "HOME/Library/Caches/micrograd"),
        ("win32", {"LOCALAPPDATA": "/L"}, "/L/micrograd/Cache"),
        ("linux", {"MICROGRAD_CACHE": "/m"}, "/m"),
    ],
)
def test_the_cache_is_the_platforms(monkeypatch, tmp_path, platform, env, want) -> None:
    for name in ("MICROGRAD_CACHE", "XDG_CACHE_HOME", "LOCALAPPDATA", "MICROGRAD_DATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(download.sys, "platform", platform)
    monkeypatch.setattr(pathlib.Path, "home", classmethod(lambda cls: pathlib.Path("/HOME")))
    assert download.cache_dir().as_posix() == want.replace("HOME", "/HOME").replace("//", "/")
    assert download.data_dir() == download.cache_dir()  # the data sets' folder, by default
    monkeypatch.setenv("MICROGRAD_DATA", "/d")
    assert download.data_dir().as_posix() == "/d"


def test_the_shared_copy_is_makemores(names_file) -> None:
    docs = data.names()
    assert data.names_file() == names_file
    assert len(docs) == 32033 and docs[:3] == ["emma", "olivia", "ava"] and docs[-1] == "zzyzx"


# ------------------------------------------------ `micrograd gpt`, as a user runs it


def test_the_command_without_names_or_network_is_one_line_and_status_2(capsys, cache) -> None:
    status = cli.main(["gpt", "--steps", "2"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "MICROGRAD_NAMES_FILE" in err and "127.0.0.1:9" in err


def test_the_command_downloads_once_then_trains(monkeypatch, server, cache, capsys) -> None:
    base, asked = server
    monkeypatch.setenv("MICROGRAD_NAMES_URL", f"{base}/names.txt")
    for _ in range(2):
        status = cli.main(["gpt", "--steps", "2", "--samples", "1"])
        out, _err = capsys.readouterr()
        assert status == 0 and "step 2 / 2" in out
    assert asked == ["/names.txt"] and (cache / "names.txt").is_file()
    assert os.listdir(cache) == ["names.txt"]


def test_no_test_sees_the_users_names_setting_or_the_internet() -> None:
    # conftest's hermetic start: a user's MICROGRAD_NAMES_FILE (or .ci/run's) is read once to find
    # the shared copy, then removed, so a test that needs the names absent finds them absent
    assert "MICROGRAD_NAMES_FILE" not in os.environ
    assert os.environ["MICROGRAD_NAMES_URL"].startswith("http://127.0.0.1:")
    assert not any(pathlib.Path(os.environ["MICROGRAD_DATA"]).iterdir())
