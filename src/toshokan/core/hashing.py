"""Deterministic content hashes, as DECISIONS.md rules them."""

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no insignificant whitespace: the same object always gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def content_hash(obj: dict[str, Any]) -> str:
    """Lowercase hex SHA-256 of ``obj`` without its own ``hash`` field."""
    return hashlib.sha256(canonical_json({k: v for k, v in obj.items() if k != "hash"})).hexdigest()


def etag_of(body: bytes) -> str:
    """A strong ETag for ``body``: the same on every replica, changed exactly when the body is."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
