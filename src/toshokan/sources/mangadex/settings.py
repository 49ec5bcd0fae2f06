"""The ``[sources.<slug>]`` table of a MangaDex source.

Every knob an operator may reasonably want is here, and nothing the adapter
can decide for itself. The base URLs exist so a mirror, a caching proxy or a
local fake can stand in for MangaDex without touching code.
"""

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: MangaDex's language codes: ISO 639-1, optionally with a region (``pt-br``, ``es-la``,
#: ``zh-hk``) or romanised (``ja-ro``, ``ko-ro``, ``zh-ro``).
LANGUAGE_CODE = re.compile(r"[a-z]{2}(?:-[a-z]{2})?")
#: MangaDex's own content rating vocabulary.
ContentRating = Literal["safe", "suggestive", "erotica", "pornographic"]
#: What to do with chapters MangaDex only links to (hosted on the publisher's site).
ExternalHandling = Literal["exclude", "mark"]


def _default_ratings() -> list[ContentRating]:
    return ["safe", "suggestive"]


class Settings(BaseModel):
    """Settings of the MangaDex adapter (all optional)."""

    model_config = ConfigDict(extra="forbid")

    api_url: str = Field(
        default="https://api.mangadex.org",
        description="Base URL of the MangaDex API (no trailing slash); a mirror or fake may stand in.",
    )
    uploads_url: str = Field(
        default="https://uploads.mangadex.org",
        description="Base URL that serves cover images (`{uploads_url}/covers/{manga}/{file}`).",
    )
    report_url: str = Field(
        default="https://api.mangadex.network/report",
        description="Where page images fetched from MangaDex@Home nodes are reported (URL, "
        "success, bytes, duration, cached), as MangaDex asks of its clients; empty: no reports.",
    )
    languages: list[str] = Field(
        default_factory=lambda: ["en"],
        min_length=1,
        description="Chapter languages to list (MangaDex codes such as `en`, `pt-br`, `es-la`).",
    )
    title_languages: list[str] = Field(
        default_factory=lambda: ["en", "ja-ro", "ja"],
        description="Preferred languages for the display title and synopsis, best first; "
        "the remaining titles become alternative titles.",
    )
    content_ratings: list[ContentRating] = Field(
        default_factory=_default_ratings,
        min_length=1,
        description="Content ratings searched when a search has no `contentRating` filter; "
        "the source is declared nsfw when this includes erotica or pornographic.",
    )
    search_available_languages_only: bool = Field(
        default=True,
        description="Without a `translatedLanguage` filter, only find works that have chapters "
        "in `languages` (so every result is readable).",
    )
    data_saver: bool = Field(
        default=False,
        description="Serve MangaDex's compressed `data-saver` page images instead of full quality.",
    )
    requests_per_second: float = Field(
        default=5.0,
        gt=0,
        le=20,
        description="Ceiling on API requests per second for the whole process, or the whole "
        "host with [cluster] redis (MangaDex allows about 5 per IP).",
    )
    at_home_per_minute: int = Field(
        default=40,
        gt=0,
        le=120,
        description="Ceiling on `/at-home/server` requests (page lists) per minute "
        "(MangaDex allows 40).",
    )
    external_chapters: ExternalHandling = Field(
        default="exclude",
        description="Chapters hosted off-site (official publisher links, no pages on MangaDex): "
        "`exclude` leaves them out of chapter lists; `mark` lists them with an `[External]` "
        "title prefix and the publisher URL as `url` (their page list is CHAPTER_NOT_FOUND).",
    )

    @field_validator("api_url", "uploads_url", "report_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("languages", "title_languages")
    @classmethod
    def _language_codes(cls, value: list[str]) -> list[str]:
        codes = [code.strip().lower() for code in value if code.strip()]
        # MangaDex would answer a wrong code with nothing at all, not an error: say so here.
        wrong = [code for code in codes if not LANGUAGE_CODE.fullmatch(code)]
        if wrong:
            raise ValueError(
                f"not a MangaDex language code: {', '.join(map(repr, wrong))} (codes are two "
                "letters, ISO 639-1, with an optional region or romanisation: 'en', 'pt-br', "
                "'es-la', 'zh-hk', 'ja-ro')"
            )
        return codes
