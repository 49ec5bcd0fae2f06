"""What the download queue uses of the core, named as a protocol (as :mod:`toshokan.core.parts`
names the follows' and kept copies'), so the core's modules import no circle."""

from typing import Protocol

from toshokan.core.follows import Follows
from toshokan.core.keeping import Keeper
from toshokan.core.parts import CoreParts


class QueueParts(CoreParts, Protocol):
    """The core as the download queue sees it: the core's parts, its follows and its keeper."""

    @property
    def follows(self) -> Follows: ...

    @property
    def keeper(self) -> Keeper: ...
