"""Connections to the shared Redis: short timeouts, no retries, and one breaker per address.

Every call to Redis is made under :data:`SOCKET_TIMEOUT` (connect and each
operation) and never retried by the client: a Redis that does not answer costs a
request half a second once, then the :class:`~toshokan.core.shared.breaker.Breaker`
sends everyone to per-process state until a background probe finds it again.
"""

from typing import Any
from urllib.parse import urlsplit

from toshokan.core.host import ConfigurationError

#: Seconds to connect to Redis, and for each operation: a request never waits longer on it.
SOCKET_TIMEOUT = 0.5


def require_redis(setting: str) -> None:
    """A configuration error naming the missing package, when ``redis`` is not installed."""
    try:
        import redis  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            f"{setting} needs the redis package: pip install 'toshokan[redis]'"
        ) from None


def redis_errors() -> tuple[type[BaseException], ...]:
    """What a Redis that is down, slow or restarting raises (its own errors, and the socket's)."""
    from redis.exceptions import RedisError

    return (RedisError, OSError, TimeoutError)


def client_options() -> dict[str, Any]:
    """Options for ``redis.asyncio.Redis.from_url``: bounded waits and no client-side retries."""
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    return {
        "socket_timeout": SOCKET_TIMEOUT,
        "socket_connect_timeout": SOCKET_TIMEOUT,
        "retry": Retry(NoBackoff(), 0),
        "health_check_interval": 0,
    }


def connect(url: str) -> Any:
    """A ``redis.asyncio.Redis`` client for ``url`` (connections are made when first used)."""
    from redis.asyncio import Redis

    return Redis.from_url(url, **client_options())


def shown(url: str) -> str:
    """``url`` as a log line or a ``detail`` may show it: host and port, never a password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
