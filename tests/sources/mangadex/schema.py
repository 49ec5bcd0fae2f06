"""MangaDex's documented response schemas, taken from ``hondana``'s typed dicts.

hondana (a maintained MangaDex client) types every API response as a
``TypedDict``. Pydantic cannot use them directly on Python 3.11 (they are
``typing.TypedDict`` with annotations that only exist under
``TYPE_CHECKING``), so this module rebuilds each one as a
``typing_extensions.TypedDict`` from hondana's own annotation strings, with
``extra="forbid"``: a fake payload carrying a field the schema does not know
fails as surely as one missing a required field.

Three documented facts hondana's types leave out are added: a relationship
that was not expanded with ``includes[]`` is only ``{id, type, related?}``;
an error object carries ``context``; a chapter's ``volume`` and ``chapter``
are nullable (a oneshot has neither).
"""

import importlib
import typing
from enum import Enum
from typing import Any

import hondana.enums
import typing_extensions
from pydantic import ConfigDict, TypeAdapter

_MODULES = (
    "common",
    "artist",
    "author",
    "chapter",
    "cover",
    "manga",
    "scanlator_group",
    "tags",
    "user",
    "errors",
)
_EXTRA_ALLOWED = {"ErrorType"}  # hondana omits the documented `context` of an error object
#: Fields whose type the OpenAPI document states differently from hondana.
_OVERRIDES = {
    ("ChapterAttributesResponse", "volume"): "str | None",
    ("ChapterAttributesResponse", "chapter"): "str | None",
}

_namespace: dict[str, Any] = {
    "Literal": typing.Literal,
    "NotRequired": typing_extensions.NotRequired,
}
for _name in dir(hondana.enums):
    _value = getattr(hondana.enums, _name)
    if isinstance(_value, type) and issubclass(_value, Enum):
        _namespace[_name] = _namespace[f"_{_name}"] = _value


def _text(annotation: Any) -> Any:
    """An annotation as text to resolve here (hondana's are forward refs, or real types in errors.py)."""
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    if typing_extensions.is_typeddict(annotation):
        return annotation.__name__
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return f"list[{_text(item)}]" if typing_extensions.is_typeddict(item) else annotation
    return annotation


def _rebuild(cls: Any) -> Any:
    # hondana's annotations are forward references into its own modules; keep only their text,
    # so they resolve against this module's rebuilt types.
    fields = {
        name: _OVERRIDES.get((cls.__name__, name), _text(ref))
        for name, ref in cls.__annotations__.items()
    }
    factory: Any = (
        typing_extensions.TypedDict
    )  # called with runtime names, which type checkers cannot follow
    rebuilt = factory(cls.__name__, fields, total=cls.__total__)
    rebuilt.__module__ = __name__
    rebuilt.__pydantic_config__ = ConfigDict(
        extra="allow" if cls.__name__ in _EXTRA_ALLOWED else "forbid"
    )
    return rebuilt


for _module_name in _MODULES:
    _module = importlib.import_module(f"hondana.types_.{_module_name}")
    for _name in getattr(_module, "__all__", ()):
        _value = getattr(_module, _name)
        if typing_extensions.is_typeddict(_value):
            _namespace[_name] = _rebuild(_value)
        else:
            _namespace[_name] = _value  # LanguageCode and other aliases


class MinimalRelationship(typing_extensions.TypedDict):
    """A relationship without reference expansion: just what it points at."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    id: str
    type: str
    related: typing_extensions.NotRequired[str]


_namespace["MinimalRelationship"] = MinimalRelationship
_namespace["RelationshipResponse"] = typing.Union[  # noqa: UP007 - built from names at runtime
    tuple(
        _namespace[n]
        for n in (
            "ArtistResponse",
            "AuthorResponse",
            "ChapterResponse",
            "CoverResponse",
            "MangaResponse",
            "ScanlationGroupResponse",
            "UserResponse",
            "MinimalRelationship",
        )
    )
]
globals().update(_namespace)


def adapter(name: str) -> TypeAdapter[Any]:
    """A validator for one of hondana's response types, e.g. ``MangaSearchResponse``."""
    return _adapters.setdefault(name, TypeAdapter(_namespace[name]))


_adapters: dict[str, TypeAdapter[Any]] = {}

#: Which documented response type each fake endpoint serves.
ENDPOINTS = {
    "manga_list": "MangaSearchResponse",
    "manga": "GetMangaResponse",
    "feed": "GetMultiChapterResponse",
    "chapter": "GetSingleChapterResponse",
    "at_home": "GetAtHomeResponse",
    "covers": "GetMultiCoverResponse",
    "authors": "GetMultiAuthorResponse",
    "tags": "GetTagListResponse",
    "error": "APIError",
}


def validate(endpoint: str, payload: Any) -> None:
    """Raise ``pydantic.ValidationError`` unless ``payload`` fits the endpoint's documented schema."""
    adapter(ENDPOINTS[endpoint]).validate_python(payload, strict=False)
