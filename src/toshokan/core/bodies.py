"""Request bodies as JSON, bounded in size and depth before any face or source reads them.

The size bound is ``[limits] max_body_bytes``, the one the edge enforces before the
application runs; it is checked here again for a body read past the edge.
"""

import json
from typing import Any

from starlette.requests import Request

from toshokan.config import HostSettings
from toshokan.errors import InvalidRequest, PayloadTooLarge

#: JSON nested deeper than this is refused: no search or credential needs more than three levels.
MAX_JSON_DEPTH = 16


async def read_json(request: Request) -> Any:
    """The body as JSON, bounded in size and depth; ``None`` when it is empty."""
    limit = max_body_bytes(request)
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise _too_large(limit)
    if not raw.strip():
        return None
    try:
        body = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError):
        raise InvalidRequest("The request body is not valid JSON.") from None
    if _depth(body) > MAX_JSON_DEPTH:
        raise _too_deep()
    return body


def max_body_bytes(request: Request) -> int:
    """The operator's ``[limits] max_body_bytes``."""
    settings: HostSettings = request.app.state.core.settings
    return settings.limits.max_body_bytes


def _too_deep() -> InvalidRequest:
    return InvalidRequest(f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than the host's limit of {limit} bytes.")


def _depth(value: Any) -> int:
    """How deeply ``value`` nests arrays and objects, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if level + 1 > MAX_JSON_DEPTH:
                    return level + 1
                stack.append((child, level + 1))
        deepest = max(deepest, level)
    return deepest
