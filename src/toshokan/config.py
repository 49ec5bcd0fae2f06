"""Deployment configuration: one TOML file, overridden by environment variables.

Precedence, highest first: command-line flags, ``TOSHOKAN_*`` environment
variables, the TOML file, built-in defaults. Nested keys use ``__`` in
environment names: ``TOSHOKAN_SERVER__PORT=9000`` sets ``[server] port``,
``TOSHOKAN_SOURCES__LOCAL__ROOT=/srv/comics`` sets ``[sources.local] root``.
List values are given as JSON (``TOSHOKAN_SERVER__TRUSTED_PROXIES='["10.0.0.1"]'``).
"""

import difflib
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from toshokan.models.host import LOWER_AZ_2_50, SourceStatus

#: Environment variables that set configuration keys start with this.
ENV_PREFIX = "TOSHOKAN_"


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "toshokan"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HostSection(Section):
    name: str = Field(
        "toshokan", pattern=LOWER_AZ_2_50, description="Host name shown to readers (a-z, 2-50)."
    )
    author: str = Field("toshokan", pattern=LOWER_AZ_2_50, description="Maintainer (a-z, 2-50).")
    repository: str = Field(
        "https://github.com/toshokan-host/toshokan",
        description="URL of the host's code repository. The Alethia app takes two hosts "
        "with the same repository for one: give each host you run its own.",
    )
    public_url: str | None = Field(
        None,
        description="The address readers reach the host at (https://comics.example.org). "
        "Used for links the host builds; when unset, each request's own origin is used, "
        "or the listen address for links made outside a request (a source's icon).",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir, description="Where indexes and state live."
    )
    secret: str | None = Field(
        None,
        description="Key for signed page URLs. Set the same value on every replica; when unset, "
        "one is generated once and kept in data_dir.",
    )
    link_ttl: int = Field(
        3600,
        ge=60,
        le=7 * 86400,
        description="Seconds a signed image link (sources that require authentication) stays "
        "valid; keep it above [cache] manga so cached details never carry an expired cover.",
    )

    @field_validator("public_url")
    @classmethod
    def _no_trailing_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else None


class ServerSection(Section):
    host: str = Field("127.0.0.1", description="Listen address (0.0.0.0 for every interface).")
    port: int = Field(8000, ge=0, le=65535, description="Listen port.")
    tls_cert: Path | None = Field(None, description="PEM certificate: serve HTTPS directly.")
    tls_key: Path | None = Field(None, description="PEM private key for tls_cert.")
    trusted_proxies: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "::1"],
        description="Addresses or networks whose X-Forwarded-For/-Proto/-Host are believed.",
    )
    upstream_timeout: float = Field(15.0, gt=0, description="Seconds an upstream has to answer.")
    workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Worker processes on the one port. Without [cluster] redis each worker "
        "counts rate limits and upstream budgets and caches alone; with it they share them.",
    )
    header_timeout: float = Field(
        10.0, gt=0, le=300, description="Seconds a client has to send a request's headers."
    )
    body_timeout: float = Field(
        15.0, gt=0, le=300, description="Seconds a client has to send a request's body."
    )
    keep_alive_timeout: float = Field(
        5.0, gt=0, le=300, description="Seconds an idle keep-alive connection stays open."
    )
    max_connections: int = Field(
        2048, ge=1, description="Open connections at most; more are answered 503 and closed."
    )
    max_connections_per_client: int = Field(
        64,
        ge=1,
        description="Open connections per client address (trusted proxies excepted); "
        "more are answered 503 and closed.",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="Log lines as text, or one JSON object a line carrying the request id "
        "(X-Request-Id) that the access line and the host's own lines of a request share.",
    )


class CorsSection(Section):
    origins: list[str] = Field(
        default_factory=lambda: ["*"], description="Allowed origins; '*' is any."
    )
    tools_origin: str | None = Field(
        None,
        description="Origin of the companion migration tool; always allowed when origins are restricted.",
    )


#: How a Redis URL starts (redis-py's ``from_url``).
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class LimitsSection(Section):
    rate_limit: int = Field(
        100, ge=0, description="Requests per minute per client address; 0 disables."
    )
    image_rate_limit: int = Field(
        1000,
        ge=0,
        description="Page images, covers and web reader assets per minute per client address, "
        "a budget apart from rate_limit; 0 disables.",
    )
    max_body_bytes: int = Field(
        64 * 1024, ge=1024, le=16 * 1024 * 1024, description="Largest request body (413 beyond)."
    )
    max_header_bytes: int = Field(
        16 * 1024, ge=1024, le=1024 * 1024, description="Largest request head (431 beyond)."
    )
    max_headers: int = Field(100, ge=10, le=1000, description="Most request headers (431 beyond).")
    auth_attempts: int = Field(
        10,
        ge=1,
        description="Failed credential checks (authenticate, content requests, forged link "
        "signatures) per client and source per minute.",
    )
    storage: str | None = Field(
        None,
        description="Where rate-limit and credential-attempt counters live: memory:// for one "
        "process, redis://host:6379 to share them between replicas. Default: [cluster] redis "
        "when it is set, else memory://.",
    )

    @field_validator("storage")
    @classmethod
    def _storage_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("memory://", *REDIS_SCHEMES)):
            raise ValueError(f"counters live in memory:// or {', '.join(REDIS_SCHEMES)}")
        return value


class CacheSection(Section):
    configuration: int = Field(3600, ge=0, description="Seconds source metadata is cached.")
    search: int = Field(120, ge=0, description="Seconds search results are cached.")
    manga: int = Field(900, ge=0, description="Seconds manga details are cached.")
    chapters: int = Field(120, ge=0, description="Seconds chapter lists are cached.")
    max_entries: int = Field(
        10_000, ge=0, description="Entries kept per kind; 0 disables the cache."
    )


class ClusterSection(Section):
    redis: str | None = Field(
        None,
        description="redis://host:6379/0: one Redis every process and replica of the host shares "
        "for its result cache and the coalescing of identical requests, invalidation, rate "
        "limits, upstream budgets, readers' upstream sessions and the library scan's lease. "
        "Unset: each process keeps its own. Needs the redis package (toshokan[redis]).",
    )

    @field_validator("redis")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(REDIS_SCHEMES):
            raise ValueError(f"a Redis URL starts with {', '.join(REDIS_SCHEMES)}")
        return value or None

    database: str | None = Field(
        None,
        description="postgresql://user@host/db: one PostgreSQL holding readers, progress and "
        "the local library's slug claims and chapter dates for every replica. Unset: SQLite in "
        "data_dir. Needs psycopg and Alembic (toshokan[postgresql]).",
    )

    @field_validator("database")
    @classmethod
    def _postgresql_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("a PostgreSQL URL starts with postgresql://")
        return value or None


class ReadersSection(Section):
    registration: bool = Field(
        False,
        description="Whether KOReader's Register button may create readers "
        "(POST /_/kosync/users/create); otherwise readers are added with `toshokan readers add`.",
    )


class MetricsSection(Section):
    enabled: bool = Field(
        True,
        description="Serve the host's figures in Prometheus' format at /_/metrics (restrict "
        "that path at the proxy); false: no figures are kept and the path answers 404.",
    )


#: Seconds between two checks of a followed series at the least (``[follows] interval``).
MIN_CHECK_INTERVAL = 60


class FollowsSection(Section):
    enabled: bool = Field(
        True,
        description="Check followed series for new chapters in the background, announce them "
        "and keep the schedule; false: follows are kept but nothing is checked.",
    )
    interval: int = Field(
        6 * 3600,
        ge=MIN_CHECK_INTERVAL,
        description="Seconds between two checks of one followed series (60 at least); "
        "[sources.<slug>] follow_interval overrides it for one source.",
    )
    jitter: float = Field(
        0.1,
        ge=0,
        le=0.5,
        description="Each series' next check is moved by up to this fraction of the interval, "
        "at random, so checks spread out rather than come in bursts.",
    )
    settled_after: int = Field(
        30,
        ge=1,
        description="Days a Completed or Cancelled series must go unchanged before it is "
        "checked settled_factor times less often.",
    )
    settled_factor: int = Field(
        4, ge=1, le=100, description="How many times less often a settled series is checked."
    )
    round: int = Field(
        60,
        ge=1,
        le=3600,
        description="Seconds between two looks at what is due (a round: one notification per "
        "reader and target at most); a divisor of 60 or a multiple of it.",
    )
    concurrency: int = Field(
        4, ge=1, le=64, description="Background jobs (checks, deliveries) one process runs at once."
    )

    @field_validator("round")
    @classmethod
    def _round_fits_a_minute(cls, value: int) -> int:
        if 60 % value and value % 60:
            raise ValueError("a round is a divisor of 60 seconds or a whole number of minutes")
        return value


class KeepSection(Section):
    enabled: bool = Field(
        True,
        description="Keep copies of followed series a reader asks to keep (false: nothing is "
        "queued or downloaded; what was kept stays).",
    )
    sources: list[str] | None = Field(
        None, description="Sources whose series may be kept (default: every served source)."
    )
    readers: list[str] | None = Field(
        None, description="Readers who may keep series (default: every reader)."
    )
    operators: list[str] = Field(
        default_factory=list,
        description="Readers who see and steer the whole download queue on the web and the "
        "/_/downloads API (on a host without readers, everyone does).",
    )
    concurrency: int = Field(
        2, ge=1, le=32, description="Chapters downloaded at once by the whole host."
    )
    source_concurrency: int = Field(
        2, ge=1, le=32, description="Chapters of one source downloaded at once by the whole host."
    )
    attempts: int = Field(
        5,
        ge=1,
        le=20,
        description="Tries of a chapter whose upstream fails (retry_after seconds apart, then "
        "doubling, an hour at most) before it is marked failed.",
    )
    retry_after: int = Field(
        60, ge=1, le=3600, description="Seconds before a failed chapter is tried again."
    )
    folder: Path | None = Field(
        None,
        description="Where kept copies of followed series are written, one folder per series: "
        "the root of a local library source, which then serves them like any chapter. "
        "Default: the root of the host's local library.",
    )
    max_image_bytes: int = Field(
        32 * 1024 * 1024, ge=1024, description="Largest page image kept, in bytes."
    )
    max_chapter_bytes: int = Field(
        512 * 1024 * 1024, ge=1024 * 1024, description="Largest chapter kept, in bytes."
    )
    max_image_pixels: int = Field(
        60_000_000,
        ge=1_000_000,
        le=200_000_000,
        description="Pixels a kept page may have (checked before it is decoded).",
    )


#: ``[sources.<slug>] auth`` that makes the host's readers the source's accounts.
READERS_AUTH = "readers"


class SourceSection(BaseModel):
    """One ``[sources.<slug>]`` table: the host's keys; every other key goes to the adapter."""

    model_config = ConfigDict(extra="allow")

    adapter: str | None = Field(None, description="Installed adapter name; defaults to the slug.")
    status: SourceStatus = SourceStatus.ACTIVE
    enabled: bool = True
    auth: Any = Field(
        None,
        description='"readers": the host\'s readers sign in to the source (their name and '
        "password or API key, or a face's session), checked by the host on every face while "
        "the adapter serves it open; any other value is the adapter's own setting.",
    )
    follow_interval: int | None = Field(
        None,
        ge=MIN_CHECK_INTERVAL,
        description="Seconds between two checks of a followed series of this source "
        "([follows] interval otherwise).",
    )

    @property
    def accepts_readers(self) -> bool:
        return bool(self.auth == READERS_AUTH)

    def adapter_settings(self) -> dict[str, Any]:
        settings = dict(self.model_extra or {})
        if self.auth is not None and not self.accepts_readers:
            settings["auth"] = self.auth
        return settings


class HostSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )

    host: HostSection = Field(default_factory=HostSection)
    server: ServerSection = Field(default_factory=ServerSection)
    cors: CorsSection = Field(default_factory=CorsSection)
    limits: LimitsSection = Field(default_factory=LimitsSection)
    cache: CacheSection = Field(default_factory=CacheSection)
    readers: ReadersSection = Field(default_factory=ReadersSection)
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    metrics: MetricsSection = Field(default_factory=MetricsSection)
    follows: FollowsSection = Field(default_factory=FollowsSection)

    keep: KeepSection = Field(default_factory=KeepSection)
    sources: dict[str, SourceSection] = Field(default_factory=dict)

    def counter_storage(self) -> str:
        """Where rate-limit and credential-attempt counters live (``[limits] storage``)."""
        return self.limits.storage or self.cluster.redis or "memory://"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = _LOAD.get("path")
        toml = (TomlConfigSettingsSource(settings_cls, toml_file=toml_file),) if toml_file else ()
        chosen = (init_settings, env_settings, *toml)
        aside: Keys = _LOAD.get("without") or frozenset()
        return tuple(Without(source, aside) for source in chosen) if aside else chosen


#: Keys or tables of a configuration by their path: ``("server", "port")``, ``("sever",)``.
Keys = frozenset[tuple[str, ...]]
# The file and the keys set aside are chosen per load; pydantic-settings reads its sources
# from the class, hence this slot.
_LOAD: dict[str, Any] = {}


class Without(PydanticBaseSettingsSource):
    """Another source's values without some keys: what is left of a configuration once the
    keys that failed are set aside, so the others can still be checked."""

    def __init__(self, inner: PydanticBaseSettingsSource, aside: Keys):
        super().__init__(inner.settings_cls)
        self.inner, self.aside = inner, aside

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        return _without(self.inner(), self.aside)


def _without(values: dict[str, Any], aside: Keys) -> dict[str, Any]:
    """``values`` (nested tables) less the keys at the paths ``aside`` names."""
    kept = dict(values)
    here = {path[0] for path in aside if len(path) == 1}
    deeper = {path[0] for path in aside if len(path) > 1} - here
    for key in here:
        kept.pop(key, None)
    for key in deeper:
        if isinstance(kept.get(key), dict):
            kept[key] = _without(kept[key], frozenset(p[1:] for p in aside if p[0] == key))
    return kept


class ConfigFileError(Exception):
    """The configuration file cannot be read; the message names the file and the place."""


def load_settings(
    config_file: Path | None = None, *, without: Keys = frozenset(), **overrides: Any
) -> HostSettings:
    """Read the configuration: flags (``overrides``) over environment over file over defaults;
    the keys ``without`` names are left out (at their defaults; a source's table, absent)."""
    if config_file is not None:
        try:
            tomllib.loads(config_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigFileError(f"configuration file {config_file} does not exist") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigFileError(f"{config_file}: cannot be read ({error})") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigFileError(f"{config_file}: {error}") from None
    _LOAD.update(path=config_file, without=without)
    try:
        return HostSettings(**overrides)
    finally:
        _LOAD.clear()


def failed_keys(error: ValidationError) -> Keys:
    """The keys a validation error is about, by their path (a list by its key, not an item)."""
    paths = set()
    for problem in error.errors():
        path = []
        for part in problem["loc"]:
            if not isinstance(part, str):
                break
            path.append(part)
        if path:
            paths.add(tuple(path))
    return frozenset(paths)


def settings_and_problems(load: Callable[[Keys], HostSettings]) -> tuple[HostSettings, list[str]]:
    """The settings ``load`` reads, and the problems of every table in one go: the keys that
    fail are named, then set aside (left at their defaults) and the rest read again, so that
    what depends on the rest (each source's own settings, the data directory) is checked in
    the same run."""
    try:
        return load(frozenset()), []
    except ValidationError as error:
        problems = [explain(error, HostSettings, ENV_PREFIX)]
        try:
            return load(failed_keys(error)), problems
        except ValidationError:
            raise error from None


def explain(error: ValidationError, model: type[BaseModel] | None, env_prefix: str) -> str:
    """A validation error as one line a user can act on.

    Each problem names its key; a misspelt key or section gets the closest name
    ``model`` knows, and a bad value that came from an environment variable
    (``env_prefix`` plus the key's path joined by ``__``) names that variable,
    since it wins over the file and is easy to forget.
    """
    variables = {name.upper(): name for name in os.environ}
    problems = []
    for problem in error.errors():
        where = tuple(str(part) for part in problem["loc"])
        text = f"{'.'.join(where) or 'configuration'}: {problem['msg']}"
        if problem["type"] == "extra_forbidden" and model is not None and where:
            close = difflib.get_close_matches(where[-1], _keys(model, where[:-1]), n=1)
            if close:
                text += f" (did you mean {close[0]!r}?)"
        # The longest path with a variable: a list item's is its list's, a section may be JSON.
        for end in range(len(where), 0, -1):
            variable = variables.get((env_prefix + "__".join(where[:end])).upper())
            if variable:
                text += f" (from the environment variable {variable})"
                break
        problems.append(text)
    return "; ".join(problems)


def _keys(model: type[BaseModel], path: tuple[str, ...]) -> list[str]:
    """The keys the table at ``path`` of ``model`` accepts (none known below a free-form table)."""
    for part in path:
        field = model.model_fields.get(part)
        inner = field.annotation if field else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return []
        model = inner
    return list(model.model_fields)
