"""The ``[sources.<slug>]`` table of one OPDS catalogue.

One table per server: several catalogues are several tables, each its own
source. The operator's credentials are either HTTP Basic
(``username``/``password``) or a key carried in the URL, as Kavita does: write
``{api_key}`` where the key goes in ``url`` and put the key in ``api_key``, so
it never appears in what the host shows (configuration, slugs, errors, logs).
With ``auth = "basic"`` there are no operator credentials: each reader signs
in with their own account on the catalogue (see :mod:`.accounts`).
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator


class Settings(BaseModel):
    """Settings of the OPDS adapter."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="The catalogue's root feed (OPDS 1.2 Atom or OPDS 2.0 JSON), "
        "e.g. `https://komga.example/opds/v1.2/catalog`; `{api_key}` marks where a key goes.",
    )
    name: str = Field(
        default="OPDS catalogue", min_length=2, max_length=50, description="Display name."
    )
    icon: str = Field(
        default="", description="URL of the source's icon; default: the server's favicon."
    )
    languages: list[str] = Field(
        default_factory=lambda: ["en"],
        min_length=1,
        description="Languages of the catalogue; the first is each book's language when it "
        "declares none.",
    )
    nsfw: bool = Field(default=False, description="Whether the catalogue holds adult content.")
    auth: Literal["none", "basic"] = Field(
        default="none",
        description="`basic`: the source requires authentication, and each reader signs in with "
        "their own account on the catalogue (HTTP Basic), checked against it and used for that "
        "reader's requests; `username` and `password` are then left unset.",
    )
    username: str = Field(default="", description="HTTP Basic user name for the catalogue.")
    password: SecretStr = Field(default=SecretStr(""), description="HTTP Basic password.")
    api_key: SecretStr = Field(
        default=SecretStr(""), description="Key substituted for `{api_key}` in `url`."
    )
    browse: str = Field(
        default="",
        description="Title of the root navigation entry to browse when a search names no shelf "
        "(default: the one that looks like all series, else the first).",
    )
    page_max_width: int = Field(
        default=2000, ge=100, le=10000, description="`{maxWidth}` sent for streamed page images."
    )
    max_feed_pages: int = Field(
        default=50,
        ge=1,
        le=1000,
        description="Most upstream pages followed for one answer (a long series' book list).",
    )
    feed_cache_seconds: float = Field(
        default=120, ge=0, le=3600, description="How long a fetched catalogue page is reused."
    )
    archive_cache_mb: int = Field(
        default=1024, ge=16, description="Disk space for downloaded books without page streaming."
    )
    render_cache_mb: int = Field(
        default=256,
        ge=0,
        description="Disk space for pages rendered from downloaded PDFs; least recently used "
        "pages are dropped past it.",
    )
    max_archive_mb: int = Field(
        default=300, ge=1, description="Largest single book download accepted."
    )
    answer_seconds: float = Field(
        default=60,
        gt=0,
        le=600,
        description="Longest a search, details, chapters or page list may take, every upstream "
        "request included (a book download for its page list too).",
    )
    requests_per_second: float = Field(
        default=10, gt=0, le=100, description="Ceiling on requests to this catalogue's server."
    )

    @field_validator("languages")
    @classmethod
    def _codes(cls, value: list[str]) -> list[str]:
        return [code.strip().lower() for code in value if code.strip()] or ["en"]

    @model_validator(mode="after")
    def _key_has_a_place(self) -> "Settings":
        if self.api_key.get_secret_value() and "{api_key}" not in self.url:
            raise ValueError("api_key is set but url has no '{api_key}' to put it in")
        if "{api_key}" in self.url and not self.api_key.get_secret_value():
            raise ValueError("url has '{api_key}' but api_key is not set")
        if self.max_archive_mb > self.archive_cache_mb:
            raise ValueError("max_archive_mb must not exceed archive_cache_mb")
        if self.auth == "basic" and (self.username or self.password.get_secret_value()):
            raise ValueError(
                "with auth = 'basic' each reader signs in with their own account: "
                "leave username and password unset"
            )
        if not self.url.startswith(("http://", "https://")):
            raise ValueError("url must be an http:// or https:// address")
        return self

    def root_url(self) -> str:
        """The root feed's real address, key included: for requests only, never for display."""
        return self.url.replace("{api_key}", self.api_key.get_secret_value())

    def redact(self, text: str, *more: str) -> str:
        """``text`` with the key, the password and ``more`` taken out, for anything shown or logged."""
        for secret in (self.api_key.get_secret_value(), self.password.get_secret_value(), *more):
            if secret:
                text = text.replace(secret, "***")
        return text
