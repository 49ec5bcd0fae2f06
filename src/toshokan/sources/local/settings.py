"""The ``[sources.<slug>]`` table of a local library, validated.

Every field carries a description because the host's README and ``--help``
show them. Secrets may be given in plaintext (kept only as a salted hash in
memory), as a precomputed hash (``toshokan hash-secret``), or through
environment variables ``TOSHOKAN_<SLUG>_USERNAME``, ``..._PASSWORD``,
``..._PASSWORD_HASH``, ``..._API_KEY`` and ``..._API_KEY_HASH`` so they stay
out of the configuration file.
"""

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class LocalSettings(BaseModel):
    """Settings of a local library source."""

    model_config = ConfigDict(extra="forbid")

    root: Path = Field(
        description="Library folder: one sub-folder per series holding chapter archives "
        "(.cbz/.zip, .cb7/.7z, .cbr/.rar), PDFs, fixed-layout EPUBs or image folders; an "
        "archive directly in it is a "
        "one-chapter series."
    )
    name: str = Field(
        default="Local Library",
        min_length=2,
        max_length=50,
        description="Display name of the source in reader apps.",
    )
    index_path: Path | None = Field(
        default=None,
        description="SQLite index file. Default: <data_dir>/local/<slug>-<key of the root>"
        ".sqlite3, one per library folder, which is also where `toshokan scan DIR --slug "
        "<slug>` builds it ahead of time. An index serves one library folder and one host.",
    )
    watch: bool = Field(
        default=True,
        description="Watch the folder while the host runs and re-index changed series "
        "(additions, removals, renames) within seconds.",
    )
    scan_on_start: bool = Field(
        default=True,
        description="Bring the index up to date at start-up (only changed files are re-read).",
    )
    start_wait: float = Field(
        default=1.0,
        ge=0,
        le=3600,
        description="Seconds start-up waits for that scan before serving; a longer scan "
        "(a large library's first) goes on in the background while the host answers "
        "with what is indexed so far.",
    )
    default_language: str = Field(
        default="en",
        min_length=2,
        max_length=20,
        description="Language of chapters whose ComicInfo.xml gives no LanguageISO.",
    )
    nsfw: bool = Field(
        default=False, description="Mark the whole source as NSFW in its configuration."
    )
    auth: Literal["none", "basic", "api_key"] = Field(
        default="none",
        description="Authentication readers must present: none, basic (username and "
        "password) or api_key (X-API-Key header). `readers` is the host's: the host's "
        "readers sign in, and the library serves them open.",
    )
    username: str | None = Field(default=None, description="User name for auth = 'basic'.")
    password: SecretStr | None = Field(
        default=None, description="Password for auth = 'basic' (plaintext; prefer password_hash)."
    )
    password_hash: SecretStr | None = Field(
        default=None,
        description="Hash of the password as printed by `toshokan hash-secret` "
        "(scrypt$... or pbkdf2_sha256$...).",
    )
    api_key: SecretStr | None = Field(
        default=None, description="API key for auth = 'api_key' (plaintext; prefer api_key_hash)."
    )
    api_key_hash: SecretStr | None = Field(
        default=None, description="Hash of the API key as printed by `toshokan hash-secret`."
    )
    max_comicinfo_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Largest ComicInfo.xml read; larger ones are refused as hostile.",
    )
    scan_workers: int | None = Field(
        default=None,
        ge=0,
        le=64,
        description="Processes that open chapters during a large scan (2,000 or more to "
        "read), while the scan writes the index. Default: one per CPU, at most 8; 0 or 1 "
        "reads them in the scan's own thread.",
    )
    render_cache_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=0,
        description="Disk space for rendered PDF pages (under <data_dir>/local/<slug>-renders); "
        "least recently used pages are dropped past it.",
    )
    thumbnail_cache_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=0,
        description="Disk space for cover thumbnails shown in lists (under "
        "<data_dir>/local/<slug>-thumbnails); least recently used dropped past it.",
    )

    @field_validator("root")
    @classmethod
    def _readable_folder(cls, value: Path) -> Path:
        # Refused up front: serving a vanished library would answer from a stale index.
        value = value.expanduser()
        if not value.is_dir():
            raise ValueError(f"{value} does not exist or is not a folder")
        if not os.access(value, os.R_OK | os.X_OK):
            raise ValueError(f"{value} is not readable")
        return value
