"""What every route handler reaches through ``request.app.state``."""

from dataclasses import dataclass

from starlette.requests import Request

from toshokan.app.cache import ResultCache
from toshokan.app.host import Host
from toshokan.app.ratelimit import Limiter
from toshokan.config import HostSettings


@dataclass
class AppState:
    settings: HostSettings
    host: Host
    cache: ResultCache
    auth_attempts: Limiter


def app_state(request: Request) -> AppState:
    return request.app.state.toshokan


def base_url(request: Request) -> str:
    """The host's public address: configured, or this request's own origin."""
    configured = app_state(request).settings.host.public_url
    if configured:
        return configured
    host = request.headers.get("host") or f"{request.url.hostname}:{request.url.port}"
    return f"{request.url.scheme}://{host}"
