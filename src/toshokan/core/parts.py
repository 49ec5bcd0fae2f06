"""What the core's own services (follows, kept copies) use of the core, named as a protocol.

They are built by :class:`~toshokan.core.service.Core` and reach sources through
it; naming only what they use, rather than the core's class, keeps the core's
modules free of import circles (the core imports them; they import this).
"""

from typing import Protocol

from toshokan.config import HostSettings
from toshokan.core.answers import Caller
from toshokan.core.database import Database
from toshokan.core.hosted import HostedSource, HostedSources
from toshokan.core.images.pipeline import ImagePipeline
from toshokan.core.progress import ProgressStore
from toshokan.core.visit import Visit


class CoreParts(Protocol):
    """The core as follows and kept copies see it."""

    @property
    def settings(self) -> HostSettings: ...

    @property
    def sources(self) -> HostedSources: ...

    @property
    def database(self) -> Database: ...

    @property
    def progress(self) -> ProgressStore: ...

    @property
    def images(self) -> ImagePipeline: ...

    def source(self, slug: str) -> HostedSource: ...

    async def visit(self, slug: str, caller: Caller) -> Visit: ...
