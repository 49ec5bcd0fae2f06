"""The fake MangaDex and its MangaDex@Home node on one loopback port, for hosts in processes of
their own: the node serves every page (a WebP) after ``delay`` seconds and counts what it served."""

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response

from tests.cluster.upstream import served
from tests.sources.mangadex.fake import FakeMangaDex
from tests.sources.mangadex.image_servers import webp


@dataclass
class Node:
    """What the node serves, and when it served each page (path, monotonic time)."""

    delay: float = 0.0
    body: bytes = field(default_factory=webp)
    served: list[tuple[str, float]] = field(default_factory=list)

    def pages_of(self, chapter_hash: str) -> int:
        return sum(1 for path, _ in self.served if f"/{chapter_hash}/" in path)


@contextmanager
def mangadex_with_node(fake: FakeMangaDex, node: Node) -> Iterator[str]:
    """Serve the fake API with its at-home node under ``/data/``; the base URL."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(("/data/", "/data-saver/")):
            await fake.app(scope, receive, send)
            return
        await asyncio.sleep(node.delay)
        node.served.append((path, time.monotonic()))
        response = Response(node.body, media_type="image/webp", headers={"X-Cache": "MISS"})
        await response(scope, receive, send)

    with served(app) as base:
        fake.at_home = base
        yield base


def chapter_hash(chapter_id: str) -> str:
    """The hash the fake's page list names a chapter's pages under."""
    return f"hash{chapter_id[:8]}"
