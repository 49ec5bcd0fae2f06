"""What the host's own JSON APIs under ``/_/`` (follows, downloads) share: who is asking, a body
read as a model, a bounded number from the query, and answers that are never cached.

They live in the core because two faces need them and no face imports another.
"""

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from toshokan.core.bodies import read_json
from toshokan.core.cache_control import NO_STORE
from toshokan.core.http import Entry, enter
from toshokan.core.readers import BY_HOST_SESSION
from toshokan.errors import InvalidRequest

M = TypeVar("M", bound=BaseModel)


def answer(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": NO_STORE})


async def entered(request: Request) -> tuple[Entry, str]:
    """The request entered (:func:`~toshokan.core.http.enter`), and the reader any of the host's
    ways of signing in names (the implicit one on an open host)."""
    entry = await enter(request, signing=BY_HOST_SESSION)
    assert entry.reader is not None  # a signing was given
    return entry, entry.reader


async def body_of(request: Request, model: type[M]) -> M:
    """The bounded JSON body as ``model``; the first thing wrong with it is a 400 naming where."""
    raw = await read_json(request)
    try:
        return model.model_validate({} if raw is None else raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        raise InvalidRequest(f"Invalid request body at {where}: {first['msg']}.") from None


def number(request: Request, name: str, default: int, least: int, most: int) -> int:
    """A whole number from the query within ``least``..``most``; anything else is a 400."""
    raw = request.query_params.get(name, str(default))
    if not (raw.isascii() and raw.isdigit() and least <= int(raw) <= most):
        raise InvalidRequest(f"{name} is a whole number from {least} to {most}.")
    return int(raw)
