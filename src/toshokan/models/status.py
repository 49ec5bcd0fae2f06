"""Small status objects: health, ping and the error body."""

from typing import Literal

from toshokan.models.base import SpecModel


class Health(SpecModel):
    status: Literal["ok"] = "ok"


class Ping(SpecModel):
    status: Literal["ok", "down"]
    latencyMs: float
    error: str | None = None


class ErrorBody(SpecModel):
    code: str
    message: str


class ErrorResponse(SpecModel):
    error: ErrorBody
