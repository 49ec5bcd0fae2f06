"""The host's services as the MangaDex adapter's tests give them: upstream clients that reach
the fake instead of the network."""

from typing import Any

import httpx

from toshokan.sdk import HostServices, UpstreamClient

USER_AGENT = "toshokan/0.1.0 (+https://github.com/toshokan/toshokan)"


class FakeServices(HostServices):
    """The host's services, with upstream clients wired to the fake instead of the network."""

    fake_transport: httpx.AsyncBaseTransport | None = None

    def http_client(self, base_url: str = "", **options: Any) -> UpstreamClient:
        options.setdefault("transport", self.fake_transport)
        return super().http_client(base_url, **options)
