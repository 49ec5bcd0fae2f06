"""The Alethia app's decoding rules, as strict as its Swift decoders and its host contract.

Every function raises ``Undecodable`` where the app's ``JSONDecoder`` (or
the reference host's strict zod contract) would fail: a missing or extra
key, a wrong type, an enum value the app does not know, a date in another
form than the two it reads, a chapter URL ``URL(string:)`` cannot parse.
"""

import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

AUTH_TYPES = {"none", "basic", "session", "apiKey", "bearer", "cookie"}
SORTS = {
    "title",
    "year",
    "createdAt",
    "updatedAt",
    "relevance",
    "popularity",
    "rating",
    "chapters",
    "follows",
}
FILTERS = {
    "year",
    "includeTag",
    "excludeTag",
    "status",
    "originalLanguage",
    "translatedLanguage",
    "contentRating",
    "minChapters",
}
DIRECTIONS = {"asc", "desc"}
#: yyyy-MM-dd'T'HH:mm:ssZZZZZ, and the same with exactly three fractional digits and Z.
_SECONDS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})")
_MILLIS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
#: RFC 3986 characters: what Foundation's URL(string:) parses without percent-encoding.
_URL = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")


class Undecodable(AssertionError):
    """The app would fail to decode this."""


def _keys(obj: Any, required: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise Undecodable(f"expected an object, got {obj!r}")
    missing, extra = required - obj.keys(), obj.keys() - required - optional
    if missing or extra:
        raise Undecodable(f"keys: missing {sorted(missing)}, unknown {sorted(extra)}")
    return obj


def _of(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    # bool is an int in Python, never in Swift.
    if isinstance(value, bool) and kind is not bool:
        raise Undecodable(f"{what}: a boolean where {kind} was expected")
    if not isinstance(value, kind):
        raise Undecodable(f"{what}: {value!r} is not {kind}")
    return value


def _strings(value: Any, what: str) -> list[str]:
    return [_of(v, str, what) for v in _of(value, list, what)]


def date(value: Any) -> datetime:
    text = _of(value, str, "date")
    if not (_SECONDS.fullmatch(text) or _MILLIS.fullmatch(text)):
        raise Undecodable(f"date {text!r} is in neither of the app's two formats")
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def absolute_url(value: Any) -> str:
    text = _of(value, str, "url")
    parts = urlsplit(text)
    if not _URL.fullmatch(text) or parts.scheme not in ("http", "https") or not parts.hostname:
        raise Undecodable(f"{text!r} is not an absolute URL the app can force-unwrap")
    return text


def filter_value(value: Any, what: str) -> None:
    if isinstance(value, list):
        _strings(value, what)
    elif not isinstance(value, str | int | bool):
        raise Undecodable(f"{what}: {value!r} is not a string, list of strings, integer or bool")


def preset(obj: Any) -> dict[str, Any]:
    _keys(obj, {"name", "request"}, frozenset({"description"}))
    _of(obj["name"], str, "preset name")
    if obj.get("description") is not None:
        _of(obj["description"], str, "preset description")
    request = _keys(
        obj["request"], {"query", "page", "limit", "sort", "direction"}, frozenset({"filters"})
    )
    _of(request["query"], str, "query")
    _of(request["page"], int, "page")
    _of(request["limit"], int, "limit")
    if request["sort"] not in SORTS:
        raise Undecodable(f"preset sort {request['sort']!r}")
    if request["direction"] not in DIRECTIONS:
        raise Undecodable(f"preset direction {request['direction']!r}")
    if request.get("filters") is not None:
        # The app drops filter keys it does not know; their values must still decode.
        for key, value in _of(request["filters"], dict, "filters").items():
            filter_value(value, key)
    return obj


def source(obj: Any) -> dict[str, Any]:
    keys = {"name", "slug", "icon", "languages", "nsfw", "url", "referer", "auth", "search"}
    _keys(obj, keys | {"presets"})
    for key in ("name", "slug", "icon", "url", "referer"):
        _of(obj[key], str, key)
    _strings(obj["languages"], "languages")
    _of(obj["nsfw"], bool, "nsfw")
    auth = _keys(obj["auth"], {"type", "required"})
    if auth["type"] not in AUTH_TYPES:
        raise Undecodable(f"auth type {auth['type']!r}")
    _of(auth["required"], bool, "auth.required")
    search = _keys(obj["search"], {"sort", "filters", "tags"})
    for sort in _of(search["sort"], list, "sort"):
        if sort not in SORTS:
            raise Undecodable(f"sort {sort!r}")
    for key in _of(search["filters"], list, "filters"):
        if key not in FILTERS:
            raise Undecodable(f"filter {key!r}")
    for tag in _of(search["tags"], list, "tags"):
        _keys(tag, {"slug", "name", "nsfw"})
        _of(tag["nsfw"], bool, "tag nsfw")
    for item in _of(obj["presets"], list, "presets"):
        preset(item)
    return obj


def host(obj: Any) -> dict[str, Any]:
    _keys(obj, {"name", "author", "repository", "sources"})
    for key in ("name", "author", "repository"):
        _of(obj[key], str, key)
    for item in _of(obj["sources"], list, "sources"):
        source(item)
    return obj


def search_response(obj: Any) -> dict[str, Any]:
    _keys(obj, {"results", "page", "more"})
    _of(obj["page"], int, "page")
    _of(obj["more"], bool, "more")
    for entry in _of(obj["results"], list, "results"):
        _keys(entry, {"slug", "title"}, frozenset({"cover"}))
        _of(entry["slug"], str, "slug")
        _of(entry["title"], str, "title")
        if entry.get("cover") is not None:
            _of(entry["cover"], str, "cover")
    return obj


def manga(obj: Any) -> dict[str, Any]:
    strings = {"slug", "title", "synopsis", "classification", "publication", "url"}
    lists = {"authors", "alternativeTitles", "tags", "covers"}
    _keys(obj, strings | lists | {"createdAt", "updatedAt"})
    for key in strings:
        _of(obj[key], str, key)
    for key in lists:
        _strings(obj[key], key)
    date(obj["createdAt"])
    date(obj["updatedAt"])
    return obj


def chapter(obj: Any) -> dict[str, Any]:
    _keys(obj, {"slug", "title", "number", "scanlator", "language", "url", "date"})
    for key in ("slug", "title", "scanlator", "language"):
        _of(obj[key], str, key)
    _of(obj["number"], (int, float), "number")
    absolute_url(obj["url"])
    date(obj["date"])
    return obj


def chapters(obj: Any) -> list[dict[str, Any]]:
    return [chapter(item) for item in _of(obj, list, "chapters")]


def pages(obj: Any) -> list[str]:
    return _strings(obj, "pages")
