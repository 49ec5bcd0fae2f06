"""A real calibre-server on loopback, serving a library made with ``calibredb add``.

Used by the live test and by ``bench/opds_first_read.py``. Needs Debian's
``calibre`` package (``calibredb``, ``calibre-server`` on PATH); :func:`available`
says whether it is there.
"""

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from tests.sources.opds.fakes import cbz
from tests.sources.opds.live import stop

BOOKS = (("Moon Letters", "Ann Ink", 3), ("Star Atlas", "Bo Pen", 4), ("Sun Diary", "Cy Quill", 2))


def available() -> bool:
    return bool(shutil.which("calibredb") and shutil.which("calibre-server"))


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        QT_QPA_PLATFORM="offscreen",
        HOME=str(home),
        CALIBRE_CONFIG_DIRECTORY=str(home / "config"),
        CALIBRE_TEMP_DIR=str(home / "tmp"),
    )
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def make_library(folder: Path) -> Path:
    """A calibre library of three CBZ books (page ``n`` painted with red ``n + 10*index``)."""
    library, home = folder / "library", folder / "home"
    library.mkdir(parents=True)
    for index, (title, author, pages) in enumerate(BOOKS, start=1):
        book = folder / f"{title}.cbz"
        book.write_bytes(cbz(pages, seed=index * 10))
        subprocess.run(
            ["calibredb", "add", "--library-path", str(library), "--title", title,
             "--authors", author, "--tags", "Comics", str(book)],
            check=True, capture_output=True, env=_env(home), timeout=120,
        )  # fmt: skip
    return library


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def calibre_server(folder: Path, *, timeout: float = 90.0) -> Iterator[str]:
    """Serve a fresh library; yields the OPDS root URL. The server is stopped on exit."""
    library = make_library(folder)
    port = _free_port()
    command = [
        "calibre-server", "--listen-on", "127.0.0.1", "--port", str(port),
        "--disable-use-bonjour", str(library),
    ]  # fmt: skip
    log = (folder / "calibre-server.log").open("wb")
    server = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=_env(folder / "home")
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"calibre-server did not start: {(folder / 'calibre-server.log').read_text()[-2000:]}"
                )
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/opds"
    finally:
        stop(server, grace=10)
        log.close()
