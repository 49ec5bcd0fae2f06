"""Komga's own OpenAPI document (1.26.3), as a check of every JSON answer a client received.

``komga-openapi-1.26.3.json`` beside this file is a copy, byte for byte, of
gotson/komga ``komga/docs/openapi.json`` at version 1.26.3 (as kept in the
project's ``shared/thirdparty``). It is OpenAPI 3.1, whose schemas are JSON
Schema 2020-12: each answer is validated against the schema its operation
declares for its status, found by the path templates (the most literal one
first, as Spring matches ``/books/ondeck`` before ``/books/{bookId}``).

One adaptation, which changes nothing a document must be: Komga's Jackson
writes every property, ``null`` included, while the document leaves a nullable
property out of ``required`` rather than typing it ``null``; so a ``null``
value is read as the property left out. Formats (``date-time``, ``date``) are
checked.
"""

import json
import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .okhttp_session import Exchange

DOCUMENT = Path(__file__).with_name("komga-openapi-1.26.3.json")
URI = "urn:komga:openapi"
#: Where the face lives on the host; Komga's paths start after it.
PREFIX = "/_/komga"


@cache
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


@cache
def _registry() -> Registry[Any]:
    return Registry().with_resource(URI, Resource.from_contents(document(), DRAFT202012))


def _path_regex(path: str) -> re.Pattern[str]:
    return re.compile(
        "".join(
            "[^/]+" if part.startswith("{") else re.escape(part)
            for part in re.split(r"(\{[^/]+?\})", path)
        )
    )


@cache
def _operations() -> list[tuple[re.Pattern[str], str]]:
    def literal_segments(path: str) -> int:
        return sum(1 for segment in path.split("/") if segment and "{" not in segment)

    paths = sorted(document()["paths"], key=literal_segments, reverse=True)
    return [(_path_regex(path), path) for path in paths]


def template_of(url: str) -> str:
    """The document's path that a request's URL is an instance of."""
    path = urlsplit(url).path.removeprefix(PREFIX)
    for pattern, template in _operations():
        if pattern.fullmatch(path):
            return template
    raise AssertionError(f"Komga's document has no path for {path}")


def schema_of(method: str, url: str, status: int) -> dict[str, Any] | None:
    """The schema the document declares for this answer; None for an answer of no JSON body."""
    operation = document()["paths"][template_of(url)].get(method.lower())
    assert operation is not None, f"Komga's document has no {method} {template_of(url)}"
    declared = operation["responses"].get(str(status))
    assert declared is not None, f"{method} {template_of(url)} is not declared to answer {status}"
    for media, content in (declared.get("content") or {}).items():
        if "json" in media or media == "*/*":
            schema: dict[str, Any] | None = content.get("schema")
            return schema
    return None


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def errors(schema: dict[str, Any], body: Any) -> list[str]:
    validator = Draft202012Validator(
        _resolved(schema),
        registry=_registry(),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in validator.iter_errors(_without_nulls(body))
    ]


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema of the document with its local references made absolute."""
    text = json.dumps(schema).replace('"#/components/', f'"{URI}#/components/')
    resolved: dict[str, Any] = json.loads(text)
    return resolved


def assert_answers_as_documented(exchanges: list[Exchange]) -> int:
    """Every JSON answer of the exchanges valid by Komga's document; how many were checked."""
    checked = 0
    for exchange in exchanges:
        response = exchange.response
        if response is None or not (response.header("content-type") or "").startswith(
            "application/json"
        ):
            continue
        schema = schema_of(exchange.method, exchange.url, exchange.status_code)
        if schema is None:
            continue
        found = errors(schema, json.loads(response.content))
        assert not found, (exchange.method, exchange.url, found[:10])
        checked += 1
    return checked
