"""Demo libraries on disk, a fresh copy for each test that asks (a fixture of every folder,
registered by the root conftest)."""

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toshokan.sources.local import write_demo_library
from toshokan.sources.local.index import Index

DemoLibrary = Callable[..., Path]


@pytest.fixture(scope="session")
def demo_templates(tmp_path_factory: pytest.TempPathFactory) -> DemoLibrary:
    """Demo libraries written once a session for each shape asked for (writing one takes a
    while; copying one is quick)."""
    written: dict[tuple[int, int, int], Path] = {}

    def template(series: int, chapters: int, pages: int) -> Path:
        shape = (series, chapters, pages)
        if shape not in written:
            root = tmp_path_factory.mktemp("demo-library") / "library"
            write_demo_library(root, series=series, chapters=chapters, pages=pages)
            written[shape] = root
        return written[shape]

    return template


@pytest.fixture
def demo_library(tmp_path: Path, demo_templates: DemoLibrary) -> DemoLibrary:
    """``demo_library(series=6, chapters=4, pages=3)``: a copy of that demo library under
    ``tmp_path``, the test's own to change (the same copy when asked again)."""

    def copy(series: int = 6, chapters: int = 4, pages: int = 3) -> Path:
        root = tmp_path / f"library-{series}x{chapters}x{pages}"
        if not root.exists():
            template = demo_templates(series, chapters, pages)
            shutil.copytree(template, root, copy_function=shutil.copy2)
        return root

    return copy


@pytest.fixture
def chapter_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every look at one chapter's row in a library's index, by series and chapter slug."""
    looked: list[tuple[str, str]] = []
    original: Callable[..., Any] = Index.chapter

    def chapter(index: Index, series_slug: str, chapter_slug: str) -> Any:
        looked.append((series_slug, chapter_slug))
        return original(index, series_slug, chapter_slug)

    monkeypatch.setattr(Index, "chapter", chapter)
    return looked
