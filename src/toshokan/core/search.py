"""Checking a raw search body against a source's declared search, as DECISIONS.md rules.

The host does this, not the adapter, so every source rejects the same bad
input with the same code and a message naming the field and what is allowed.
"""

import hashlib
from collections.abc import Hashable
from typing import Any

from pydantic import ValidationError

from toshokan.errors import InvalidRequest, MissingFields
from toshokan.models import FILTER_TYPES, FilterKey, SearchConfig, SearchRequest
from toshokan.models.search import (
    MAX_FILTER_CHARS,
    MAX_FILTER_ITEMS,
    MAX_FILTER_NUMBER,
    MAX_LIMIT,
    MAX_PAGE,
    MAX_QUERY_CHARS,
)

REQUIRED = ("page", "sort")
#: Longer query and filter texts are keyed by their digest, so a cache entry's key stays small.
MAX_KEY_TEXT = 256
KNOWN_FIELDS = ("query", "page", "limit", "sort", "direction", "filters")


def search_of(body: Any, search: SearchConfig) -> tuple[SearchRequest, tuple[Hashable, ...]]:
    """The search ``body`` asks of a source that declares ``search``, checked, and the key its
    answer is cached under (long wording keyed by its digest)."""
    request = parse_search(body, search)
    filters = request.filters.model_dump_json(exclude_none=True)
    wording = bounded_key(request.query, filters)
    return request, (request.page, request.limit, request.sort, request.direction, *wording)


def bounded_key(*texts: str) -> tuple[str, ...]:
    """``texts`` as a cache key part of bounded size: themselves when short, else one digest."""
    if sum(len(text) for text in texts) <= MAX_KEY_TEXT:
        return texts
    digest = hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    return (digest,)


def parse_search(body: Any, search: SearchConfig) -> SearchRequest:
    if not isinstance(body, dict):
        raise InvalidRequest("The search body must be a JSON object.")
    missing = [f for f in REQUIRED if body.get(f) is None]
    if missing:
        raise MissingFields(f"Missing required field(s): {', '.join(missing)}.")
    # Fields the spec does not define are ignored, as a reader written for another host may send some.
    body = {k: v for k, v in body.items() if k in KNOWN_FIELDS}
    _check_scalars(body)
    allowed_sorts = [s.value for s in search.sort]
    if body["sort"] not in allowed_sorts:
        raise InvalidRequest(
            f"sort {body['sort']!r} is not supported; allowed: {', '.join(allowed_sorts)}."
        )
    filters = body.get("filters", {})
    if filters is None:
        filters = {}
    if not isinstance(filters, dict):
        raise InvalidRequest("filters must be a JSON object.")
    # A null filter is one left out, as the published schema says (clients and generated
    # examples send every optional key, null when unused).
    filters = {key: value for key, value in filters.items() if value is not None}
    _check_filters(filters, search)
    try:
        return SearchRequest.model_validate({**body, "filters": filters})
    except ValidationError as error:  # everything was checked above; this is a safety net
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidRequest(f"{where}: {first['msg']}.") from None


def _is_int(value: Any) -> bool:
    # JSON has one number type; 2.0 is a whole number, true is not.
    return not isinstance(value, bool) and (
        isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    )


def _check_scalars(body: dict[str, Any]) -> None:
    if not _is_int(body["page"]) or not 1 <= body["page"] <= MAX_PAGE:
        raise InvalidRequest(f"page must be a whole number from 1 to {MAX_PAGE}.")
    limit = body.get("limit", 20)
    if not _is_int(limit) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be a whole number from 1 to {MAX_LIMIT}.")
    if not isinstance(body["sort"], str):
        raise InvalidRequest("sort must be a string.")
    if body.get("direction", "desc") not in ("asc", "desc"):
        raise InvalidRequest("direction must be 'asc' or 'desc'.")
    query = body.get("query", "")
    if query is not None and not isinstance(query, str):
        raise InvalidRequest("query must be a string.")
    if query and len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"query must be at most {MAX_QUERY_CHARS} characters.")
    _check_text("query", query or "")


def _check_text(field: str, value: str) -> None:
    # A lone surrogate parses from JSON but cannot be encoded for a database or a URL.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(f"{field} is not valid Unicode text.") from None


def _check_filters(filters: dict[str, Any], search: SearchConfig) -> None:
    declared = [f.value for f in search.filters]
    tags = {t.slug for t in search.tags}
    for key, value in filters.items():
        if key not in declared:
            raise InvalidRequest(
                f"filter {key!r} is not supported by this source; allowed: {', '.join(declared) or 'none'}."
            )
        expected = FILTER_TYPES[FilterKey(key)]
        if expected is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidRequest(f"filters.{key} must be an array of strings.")
            if len(value) > MAX_FILTER_ITEMS:
                raise InvalidRequest(f"filters.{key} may hold at most {MAX_FILTER_ITEMS} items.")
            for item in value:
                _check_filter_text(key, item)
        elif expected is int:
            if not _is_int(value) or not -MAX_FILTER_NUMBER <= value <= MAX_FILTER_NUMBER:
                raise InvalidRequest(
                    f"filters.{key} must be a whole number from {-MAX_FILTER_NUMBER} "
                    f"to {MAX_FILTER_NUMBER}."
                )
        elif not isinstance(value, str):
            raise InvalidRequest(f"filters.{key} must be a string.")
        else:
            _check_filter_text(key, value)
        if key in (FilterKey.INCLUDE_TAG, FilterKey.EXCLUDE_TAG):
            unknown = [slug for slug in value if slug not in tags]
            if unknown:
                raise InvalidRequest(
                    f"filters.{key}: unknown tag slug(s) {', '.join(map(repr, unknown))}; "
                    "the source's tags are listed in GET /:source under search.tags."
                )


def _check_filter_text(key: str, value: str) -> None:
    if len(value) > MAX_FILTER_CHARS:
        raise InvalidRequest(
            f"filters.{key}: values must be at most {MAX_FILTER_CHARS} characters."
        )
    _check_text(f"filters.{key}", value)
