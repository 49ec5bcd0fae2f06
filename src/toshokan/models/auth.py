"""Authentication: the source's declared scheme, and the authenticate endpoint's answer."""

from enum import StrEnum

from pydantic import Field, model_validator

from toshokan.models.base import SpecModel


class AuthType(StrEnum):
    NONE = "none"
    BASIC = "basic"
    SESSION = "session"
    API_KEY = "api_key"
    BEARER = "bearer"
    COOKIE = "cookie"


#: The body fields the client sends to ``POST /:source/authenticate``, per type.
AUTH_FIELDS: dict[AuthType, tuple[str, ...]] = {
    AuthType.NONE: (),
    AuthType.BASIC: ("username", "password"),
    AuthType.SESSION: ("username", "password"),
    AuthType.API_KEY: ("apiKey",),
    AuthType.BEARER: ("token",),
    AuthType.COOKIE: ("cookie",),
}

#: The header each type's credentials travel in on later requests.
AUTH_HEADERS: dict[AuthType, tuple[str, ...]] = {
    AuthType.NONE: (),
    AuthType.BASIC: ("Authorization",),
    AuthType.SESSION: ("Cookie",),
    AuthType.API_KEY: ("X-API-Key",),
    AuthType.BEARER: ("Authorization",),
    AuthType.COOKIE: ("Cookie",),
}


class AuthConfig(SpecModel):
    type: AuthType = AuthType.NONE
    required: bool = False
    fields: list[str] | None = None

    @model_validator(mode="after")
    def _fields_follow_type(self) -> "AuthConfig":
        # The field list is a function of the type; deriving it keeps the two from disagreeing.
        self.fields = list(AUTH_FIELDS[self.type]) if self.type is not AuthType.NONE else None
        if self.type is AuthType.NONE and self.required:
            raise ValueError("auth type 'none' cannot be required")
        return self


class AuthError(SpecModel):
    code: str
    message: str


class AuthResponse(SpecModel):
    success: bool
    headers: dict[str, str] | None = Field(default=None)
    error: AuthError | None = None
