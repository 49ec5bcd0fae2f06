"""Small status objects: health, ping and the error body."""

from typing import Literal

from toshokan.models.base import SpecModel


class Health(SpecModel):
    status: Literal["ok"] = "ok"
    #: What the source is busy with (a first scan's progress); absent when idle.
    detail: str | None = None


class Ping(SpecModel):
    status: Literal["ok", "down"]
    latencyMs: float
    error: str | None = None
    #: What the source is busy with (a first scan's progress); absent when idle.
    detail: str | None = None


class ErrorBody(SpecModel):
    code: str
    message: str


class ErrorResponse(SpecModel):
    error: ErrorBody
