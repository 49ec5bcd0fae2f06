"""A host around the test catalog, plus one that serves page images of its own."""

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from tests.core.catalog import Catalog, CatalogSettings
from toshokan.logs import LOG_FORMAT, BatchedLines
from toshokan.testing import ServedHost, serve_host


class Illustrated(Catalog):
    """The catalog with page images under ``/_/<slug>/pages/{n}``."""

    def routes(self) -> Sequence[BaseRoute]:
        return [Route("/pages/{n}", self.page, methods=["GET"], name="page")]

    async def page(self, request: Request) -> Response:
        return Response(b"\x89PNG fake", media_type="image/png")


@pytest.fixture
def make_host(tmp_path: Path) -> Callable[..., Any]:
    """``async with make_host(**settings) as host``: source ``catalog``, client 203.0.113.7."""

    @asynccontextmanager
    async def factory(
        client_ip: str = "203.0.113.7", auth: str = "none", required: bool = False, **settings: Any
    ) -> AsyncIterator[ServedHost]:
        options = CatalogSettings(auth=auth, required=required)
        async with serve_host(
            {"catalog": (Illustrated, options)},
            data_dir=tmp_path,
            client_ip=client_ip,
            base_url="http://testhost",
            **settings,
        ) as served:
            yield served

    return factory


@pytest.fixture
def access_lines() -> Iterator[tuple[list[str], BatchedLines]]:
    """What the access log writes, through the host's own handler and format."""
    lines: list[str] = []
    handler = BatchedLines(write=lines.append)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger = logging.getLogger("toshokan.access")
    logger.addHandler(handler)
    try:
        yield lines, handler
    finally:
        logger.removeHandler(handler)
