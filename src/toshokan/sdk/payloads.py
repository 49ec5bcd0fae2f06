"""Guards on what an upstream sends: JSON of bounded depth in the shape the adapter reads.

An adapter describes the payloads it reads as Pydantic models (or
``TypedDict``s, validated through a ``TypeAdapter``), with bounds on the
numbers and lists it relies on. :func:`parse_payload` validates the raw body
against that shape in one pass of pydantic's JSON parser, whose nesting
limit turns a body nested a hundred thousand deep into a validation error
rather than a ``RecursionError``. Anything that does not fit, of whatever
shape, becomes ``UPSTREAM_ERROR`` with a short message naming where the
payload went wrong, never the upstream's bytes.
"""

from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel, TypeAdapter, ValidationError

from toshokan.errors import UpstreamError

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
#: Characters of an error location kept in a message.
_MAX_WHERE = 80


def parse_json(body: bytes, what: str = "data") -> Any:
    """Any JSON value, with the parser's nesting bound; anything else is ``UPSTREAM_ERROR``."""
    try:
        return pydantic_core.from_json(body)
    except ValueError:
        raise UpstreamError(f"The upstream sent {what} that is not readable JSON.") from None


def parse_payload(body: bytes, shape: TypeAdapter[T], what: str) -> T:
    """``body`` validated as ``shape``; a body of any other shape is ``UPSTREAM_ERROR``."""
    try:
        return shape.validate_json(body)
    except ValidationError as error:
        raise UpstreamError(f"The upstream sent {what} {problem(error)}.") from None


def parse_model(body: bytes, model: type[M], what: str) -> M:
    """``body`` validated as ``model``; see :func:`parse_payload`."""
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        raise UpstreamError(f"The upstream sent {what} {problem(error)}.") from None


def problem(error: ValidationError) -> str:
    """Where and how a payload went wrong, short and free of the payload's own text."""
    first = error.errors(include_url=False, include_input=False, include_context=False)[0]
    if first["type"] in ("json_invalid", "json_type"):
        return "that is not readable JSON"
    where = ".".join(str(part) for part in first["loc"])[:_MAX_WHERE]
    reason = first["msg"].rstrip(".")
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"that does not have the expected shape: {where or 'body'}: {reason}{more}"
