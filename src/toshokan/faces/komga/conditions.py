"""Komga's search conditions (``POST /api/v1/series/list``, ``/books/list``), as Aidoku sends them.

Newer clients search with a body: ``{"condition": {"allOf": [...]}, "fullTextSearch":
"..."}``, where each leaf names a field, an operator and a value
(``{"libraryId": {"operator": "is", "value": "local"}}``) and ``allOf``/``anyOf``
nest. The face reads the fields it can ask sources about (library, genre, tag,
status, publisher, author, and a book's series) and the read status, with the
``is`` operator, the values of an ``anyOf`` taken together; every other leaf
(``deleted``, dates, ``isNot``) narrows nothing here and is passed over, as the query
parameters of the older listing are. The tree is bounded by the host's body
limits (size and depth) and by a count of leaves.
"""

from dataclasses import replace
from typing import Any

from starlette.datastructures import QueryParams

from toshokan.errors import InvalidRequest
from toshokan.faces.komga.listing import SeriesQuery, read_statuses, series_query
from toshokan.models.search import MAX_FILTER_CHARS, MAX_FILTER_ITEMS, MAX_QUERY_CHARS

#: Komga's field names, and the query parameter of the older listing each one is.
FIELDS = {
    "libraryId": "library_id",
    "genre": "genre",
    "tag": "tag",
    "status": "status",
    "publisher": "publisher",
    "author": "author",
    "seriesId": "series_id",
    "readStatus": "read_status",
}
#: The most leaves one search may hold: each value is one leaf, so this also bounds the values
#: of any one field, as the older listing's parameters are bounded.
MAX_LEAVES = MAX_FILTER_ITEMS


def _leaves(node: Any, found: list[tuple[str, Any]]) -> None:
    if not isinstance(node, dict):
        raise InvalidRequest("A search condition is a JSON object.")
    for key, value in node.items():
        if key in ("allOf", "anyOf"):
            if not isinstance(value, list):
                raise InvalidRequest(f"{key} holds a list of conditions.")
            for child in value:
                _leaves(child, found)
        else:
            found.append((key, value))
        if len(found) > MAX_LEAVES:
            raise InvalidRequest(f"A search holds at most {MAX_LEAVES} conditions.")


def _value(field: str, leaf: Any) -> str | None:
    """The value an ``is`` leaf asks for, as the older listing's parameter would carry it."""
    if not isinstance(leaf, dict) or leaf.get("operator") != "is":
        return None
    value = leaf.get("value")
    if field == "author" and isinstance(value, dict):
        value = value.get("name")
    if not isinstance(value, str) or len(value) > MAX_FILTER_CHARS:
        raise InvalidRequest(f"{field} takes a text of at most {MAX_FILTER_CHARS} characters.")
    return value


def condition_values(body: Any) -> dict[str, list[str]]:
    """Every value the condition asks, by the older listing's parameter name."""
    if not isinstance(body, dict):
        raise InvalidRequest("The body is a search: a JSON object.")
    leaves: list[tuple[str, Any]] = []
    if body.get("condition") is not None:
        _leaves(body["condition"], leaves)
    values: dict[str, list[str]] = {}
    for field, leaf in leaves:
        name = FIELDS.get(field)
        value = _value(field, leaf) if name is not None else None
        if name is not None and value is not None:
            values.setdefault(name, []).append(value)
    return values


def series_search(params: QueryParams, body: Any) -> SeriesQuery:
    """The listing a body asks for, with the page, size and sort of the query string."""
    values = condition_values(body)
    text = body.get("fullTextSearch") or ""
    if not isinstance(text, str) or len(text) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"fullTextSearch is a text of at most {MAX_QUERY_CHARS} characters.")
    query = series_query(params)
    return replace(
        query,
        search=text.strip(),
        libraries=frozenset(values.get("library_id", ())),
        tags=(*values.get("genre", []), *values.get("tag", [])),
        statuses=tuple(values.get("status", ())),
        publishers=tuple(values.get("publisher", ())),
        authors=tuple(values.get("author", ())),
        read_statuses=read_statuses(tuple(values.get("read_status", ()))),
    )


def series_of_books_search(body: Any) -> str:
    """The one series a books search asks for: the host lists books a series at a time."""
    series = condition_values(body).get("series_id", [])
    if len(series) != 1:
        raise InvalidRequest("A books search names one series (seriesId is ...).")
    return series[0]
