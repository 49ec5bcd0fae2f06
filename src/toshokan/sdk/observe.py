"""What the SDK tells the host about upstream traffic and scans, for the host to count.

Adapters import only the SDK, so the SDK cannot know how the host keeps its
figures (Prometheus, today). It reports events to :class:`Observers`, one
object per host that the host's metrics subscribe to
(:meth:`Observers.add`): each upstream request an
:class:`~toshokan.sdk.UpstreamClient` sends and how it ended, each wait for
an upstream budget, and how far a source's scan of its content is. With no
observer, reporting costs a loop over an empty list.

``source`` is always the operator's source slug (or the host's own name for
the upstream requests it makes itself, such as the image pipeline's), never
anything a client sent, so it is safe as a metric label.
"""

from typing import Protocol


class Observer(Protocol):
    def upstream_request(self, source: str, error: str | None) -> None:
        """One request sent upstream; ``error`` is the host's error code when it failed."""

    def budget_wait(self, source: str, seconds: float) -> None:
        """A request waited ``seconds`` for its upstream budget before it was sent."""

    def scan_progress(self, source: str, done: int, total: int, running: bool) -> None:
        """A scan of ``source``'s content has read ``done`` of ``total`` items."""


class Observers:
    """Every observer of one host; what clients and sources report to."""

    def __init__(self) -> None:
        self._observers: list[Observer] = []

    def add(self, observer: Observer) -> None:
        self._observers.append(observer)

    def upstream_request(self, source: str, error: str | None = None) -> None:
        for observer in self._observers:
            observer.upstream_request(source, error)

    def budget_wait(self, source: str, seconds: float) -> None:
        for observer in self._observers:
            observer.budget_wait(source, seconds)

    def scan_progress(self, source: str, done: int, total: int, running: bool) -> None:
        for observer in self._observers:
            observer.scan_progress(source, done, total, running)
