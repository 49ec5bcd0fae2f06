"""Rendering a PDF page costs bounded memory and time, whatever the file holds
(issue 13, point 2): image pixels are counted before drawing, and drawing happens
in a child process capped in memory and time."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sources.local.helpers import pdf
from toshokan.sdk.archives import ArchiveError, PdfReader, Renderer, pdfrender

from .archive_files import image_pdf


def test_a_page_drawing_a_20000_pixel_square_image_is_refused(tmp_path: Path) -> None:
    """About 380 KB of compressed zeros that PDFium would decode to 400 million pixels."""
    hostile = image_pdf(tmp_path / "huge.pdf", 20_000, 20_000)
    assert hostile.stat().st_size < 1_000_000
    with PdfReader(hostile) as reader, pytest.raises(ArchiveError, match="20000 x 20000"):
        reader.read("00001.jpg", 10**8)


def test_the_pixel_budget_counts_what_the_page_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = image_pdf(tmp_path / "page.pdf", 400, 300)
    with PdfReader(path) as reader:
        assert reader.read("00001.jpg", 10**8).startswith(b"\xff\xd8\xff")
    monkeypatch.setattr(pdfrender, "MAX_PDF_IMAGE_PIXELS", 400 * 300 - 1)
    with PdfReader(path) as reader, pytest.raises(ArchiveError, match="pixels"):
        reader.read("00001.jpg", 10**8)


def test_a_render_past_the_memory_cap_is_refused_and_the_next_one_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the pixel count cannot see is caught by the child's address-space cap."""
    path = pdf(tmp_path / "ok.pdf", [(600, 800, (200, 0, 0))])
    renderer = Renderer(memory=64 * 2**20)  # less than the interpreter already holds
    monkeypatch.setattr(pdfrender, "RENDERER", renderer)
    try:
        with PdfReader(path) as reader, pytest.raises(ArchiveError, match="memory"):
            reader.read("00001.jpg", 10**8)
        renderer.memory = None  # the default cap: a fresh child renders
        with PdfReader(path) as reader:
            assert reader.read("00001.jpg", 10**8).startswith(b"\xff\xd8\xff")
    finally:
        renderer.close()


def test_a_render_past_the_deadline_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = pdf(tmp_path / "ok.pdf", [(600, 800, (200, 0, 0))])
    renderer = Renderer(seconds=0.001)  # less than the child takes to start
    monkeypatch.setattr(pdfrender, "RENDERER", renderer)
    try:
        with PdfReader(path) as reader, pytest.raises(ArchiveError, match="longer than"):
            reader.read("00001.jpg", 10**8)
        renderer.seconds = None
        with PdfReader(path) as reader:
            assert reader.read("00001.jpg", 10**8).startswith(b"\xff\xd8\xff")
    finally:
        renderer.close()


def test_a_process_that_rendered_a_page_stops_its_render_child_when_it_exits(
    tmp_path: Path,
) -> None:
    """The render child is stopped and waited for at exit, not left running (Python
    says so with a ResourceWarning when a child it started outlives its Popen)."""
    path = pdf(tmp_path / "ok.pdf", [(600, 800, (200, 0, 0))])
    lines = [
        "import sys",
        "from pathlib import Path",
        "from toshokan.sdk.archives import PdfReader",
        "with PdfReader(Path(sys.argv[1])) as reader:",
        "    assert reader.read('00001.jpg', 10**8).startswith(b'\\xff\\xd8\\xff')",
    ]
    command = [sys.executable, "-W", "always::ResourceWarning", "-c", "\n".join(lines), str(path)]
    ran = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    assert "ResourceWarning" not in ran.stderr, ran.stderr
