"""The README and the pages under docs/ hold to what they say: the shell blocks marked runnable
run as written, no block tells a user to type a `toshokan` that is not on their PATH, and every
page or picture they link to is there.

A block is runnable when its fence's info string is `sh runnable`. Each page's runnable blocks
run in order, in a folder of their own (the checkout's `.venv` and `examples/` beside them,
`HOME` inside it, so the host's default data directory is there too), with `curl` failing on
an HTTP error as `--fail` makes it. Blocks that ask a host at `127.0.0.1:8000` get one:
`toshokan serve` on a free port, with the embedded default library, the port rewritten in the
blocks. Nothing here touches port 8000 or the user's home.
"""

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.serving import REPO, running_host

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
SHELLS = {"sh", "bash", "shell", "console"}
DOCUMENTED_HOST = "127.0.0.1:8000"
#: A line that runs `toshokan` as a bare command (after any `sudo` or VAR=value before it).
BARE = re.compile(r"^\s*(?:\$\s+)?(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*toshokan\s")
#: An inline code span that is a `toshokan` command: the program, then a word of its own.
BARE_INLINE = re.compile(r"`(?:sudo\s+)?toshokan (?:-|[a-z])[^`]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: list[str]
    text: str

    @property
    def runnable(self) -> bool:
        return self.info[:1] == ["sh"] and "runnable" in self.info[1:]

    @property
    def shell(self) -> bool:
        return bool(self.info) and self.info[0] in SHELLS

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text.count("\n", 0, found.start()) + 1, found[1].split(), found[2])
        for found in FENCE.finditer(text)
    ]


RUNNABLE = {page: [b for b in blocks(page) if b.runnable] for page in PAGES}


def test_the_readme_and_the_docs_have_runnable_blocks() -> None:
    """The marker is in use where a newcomer starts, and on the pages that run something."""
    with_blocks = {page.relative_to(REPO).as_posix() for page, found in RUNNABLE.items() if found}
    assert {"README.md", "docs/interface.md", "docs/readers.md"} <= with_blocks
    assert {"docs/configuration.md", "docs/local-library.md"} <= with_blocks


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A folder as a checkout looks to a user's shell: `.venv` and `examples/` at hand."""
    for name in (".venv", "examples"):
        (tmp_path / name).symlink_to(REPO / name)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".curlrc").write_text("fail\nshow-error\nmax-time = 30\n")
    return tmp_path


def environment(place: Path) -> dict[str, str]:
    """A user's shell: the system's PATH (so `toshokan` is not on it), HOME in ``place``."""
    home = place / "home"
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "LANG": "C.UTF-8",
    }


@pytest.fixture(scope="module")
def documented_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The host the pages' blocks ask at 127.0.0.1:8000: `toshokan serve` with its embedded
    default (the sample library), its home a temporary folder, on a free port."""
    place = tmp_path_factory.mktemp("documented-host")
    with running_host([], "/local/health", env=environment(place), timeout=120) as address:
        yield address.removeprefix("http://")


@pytest.mark.parametrize(
    "page", [p for p, found in RUNNABLE.items() if found], ids=lambda p: p.name
)
def test_a_pages_runnable_blocks_run_as_written(
    page: Path, place: Path, documented_host: str
) -> None:
    assert (REPO / ".venv" / "bin" / "toshokan").exists(), "run the tests with python3 run.py test"
    for block in RUNNABLE[page]:
        ran = subprocess.run(
            [
                "bash",
                "-euo",
                "pipefail",
                "-c",
                block.text.replace(DOCUMENTED_HOST, documented_host),
            ],
            cwd=place,
            env=environment(place),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert ran.returncode == 0, f"{block} failed:\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}"


def test_no_page_tells_a_user_to_type_a_toshokan_that_is_not_on_their_path() -> None:
    """From a checkout the command is `.venv/bin/toshokan` (or `python3 run.py ...`)."""
    bare = [
        f"{block}: {line.strip()}"
        for page in PAGES
        for block in blocks(page)
        if block.shell
        for line in block.text.splitlines()
        if BARE.match(line)
    ]
    prose = [
        f"{page.relative_to(REPO)}: {span}"
        for page in PAGES
        for span in BARE_INLINE.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
    ]
    assert bare == [] and prose == []


def test_every_page_and_picture_linked_is_in_the_repository() -> None:
    missing = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                missing.append(f"{page.relative_to(REPO)} -> {target}")
    assert missing == []


def test_the_readme_is_a_page_a_newcomer_reads_in_five_minutes() -> None:
    """Its two commands as ever, each reader app, and where to go next; the rest is in docs/."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 120
    assert "python3 run.py serve" in readme and "python3 run.py test" in readme
    for face in ("/_/opds", "/_/komga", "/_/kosync", "/_/alethia", "/_/"):
        assert face in readme
    linked = set(LINK.findall(readme))
    assert {f"docs/{page.name}" for page in (REPO / "docs").glob("*.md")} <= linked
    assert os.path.exists(REPO / "docs" / "interface.md")
