"""Connections to the shared Redis: short timeouts, no retries, and one breaker per address.

Every call to Redis is made under :data:`SOCKET_TIMEOUT` (connect and each
operation) and retried once at most, at once, on a new connection (a Redis that
restarted leaves its clients' pooled connections dead): a Redis that does not
answer costs one request a second at most, once, then the :class:`~toshokan.core.shared.breaker.Breaker`
sends everyone to per-process state until a background probe finds it again.
"""

import importlib
from typing import Any
from urllib.parse import urlsplit

from toshokan.core.hosted import ConfigurationError

#: Seconds to connect to Redis, and for each operation: a request never waits longer on it.
SOCKET_TIMEOUT = 0.5


def require_packages(setting: str, *packages: str) -> None:
    """A configuration error naming the first of ``packages`` that is not installed."""
    for package in packages:
        try:
            importlib.import_module(package)
        except ImportError:
            raise ConfigurationError(
                f"{setting} needs the {package} package: pip install 'toshokan[redis]'"
            ) from None


def redis_errors() -> tuple[type[BaseException], ...]:
    """What a Redis that is down, slow or restarting raises (its own errors, and the socket's)."""
    from redis.exceptions import RedisError

    return (RedisError, OSError, TimeoutError)


def client_options() -> dict[str, Any]:
    """Options for ``redis.asyncio.Redis.from_url``: bounded waits, one immediate retry."""
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    return {
        "socket_timeout": SOCKET_TIMEOUT,
        "socket_connect_timeout": SOCKET_TIMEOUT,
        "retry": Retry(NoBackoff(), 1),
        "health_check_interval": 0,
    }


def connect(url: str) -> Any:
    """A ``redis.asyncio.Redis`` client for ``url`` (connections are made when first used)."""
    from redis.asyncio import Redis

    return Redis.from_url(url, **client_options())


def redis_address(url: str) -> str:
    """``url`` as a log line or a ``detail`` may show it: host and port, never a password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
