"""Request bodies as JSON, bounded in size and depth before any face or source reads them."""

import json
from typing import Any

from starlette.requests import Request

from toshokan.errors import InvalidRequest, PayloadTooLarge

#: A search or authentication body larger than this is refused before it is parsed.
MAX_BODY_BYTES = 64 * 1024
#: JSON nested deeper than this is refused: no search or credential needs more than three levels.
MAX_JSON_DEPTH = 16


async def read_json(request: Request) -> Any:
    """The body as JSON, bounded in size and depth; ``None`` when it is empty."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise _too_large()
    if not raw.strip():
        return None
    too_deep = InvalidRequest(f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")
    try:
        body = json.loads(raw)
    except RecursionError:
        raise too_deep from None
    except (ValueError, UnicodeDecodeError):
        raise InvalidRequest("The request body is not valid JSON.") from None
    if _depth(body) > MAX_JSON_DEPTH:
        raise too_deep
    return body


def _too_large() -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than {MAX_BODY_BYTES // 1024} KiB.")


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
