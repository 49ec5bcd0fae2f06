"""The sources a host serves (each an adapter and its validated configuration), built from
the settings, started and stopped together, and the manifest that lists them."""

import contextlib
import logging
import os
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toshokan import __version__
from toshokan.config import ENV_PREFIX, HostSettings, SourceSection, explain
from toshokan.core.data_dir import SECRET_NAME, DataDirError, user
from toshokan.core.database import open_database
from toshokan.core.database.claims import DatabaseClaims
from toshokan.core.hashing import content_hash
from toshokan.errors import SourceNotFound
from toshokan.models import (
    AuthConfig,
    AuthType,
    HostManifest,
    SourceConfiguration,
    SourceManifestEntry,
    SourceStatus,
)
from toshokan.models.base import SOURCE_SLUG
from toshokan.registry import AdapterLoadError, adapter
from toshokan.sdk.context import HostServices
from toshokan.sdk.source import Source
from toshokan.sdk.urls import host_path

log = logging.getLogger("toshokan.host")


class ConfigurationError(Exception):
    """The configuration cannot be served; the message names the source and the problem."""


@dataclass
class HostedSource:
    slug: str
    status: SourceStatus
    source: Source[Any]
    #: ``auth = "readers"``: the host's readers open it, checked by the core; the adapter
    #: serves it as an open source and never sees their credentials.
    accepts_readers: bool = False

    def configuration(self) -> SourceConfiguration:
        """The adapter's configuration with version and hash filled in, validated."""
        try:
            config = self.source.configuration()
            config = SourceConfiguration.model_validate(config.model_dump())
        except ValidationError as error:
            raise ConfigurationError(describe(self.slug, error)) from None
        if config.slug != self.slug:
            raise ConfigurationError(
                f"source {self.slug!r}: configuration declares slug {config.slug!r}; "
                "it must use the slug the host gave it"
            )
        if self.accepts_readers:
            if config.auth.required:
                raise ConfigurationError(
                    f"source {self.slug!r}: auth = 'readers' needs an adapter that is open "
                    "itself; this one requires credentials of its own"
                )
            # Spec clients see a Basic sign-in: a reader's name and password or API key.
            config.auth = AuthConfig(type=AuthType.BASIC, required=True)
        config.version = self.source.version
        config.hash = content_hash(config.model_dump(mode="json", exclude_none=True))
        return config


def describe(slug: str, error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'configuration'}: {e['msg']}"
        for e in error.errors()
    )
    return f"source {slug!r}: {problems}"


class HostedSources:
    """The host's sources by slug, with the services they were given: builds the adapters from
    the settings, starts and stops them, and answers what the manifest needs."""

    def __init__(self, settings: HostSettings, services: HostServices, sources: list[HostedSource]):
        self.settings = settings
        self.services = services
        self.by_slug = {s.slug: s for s in sources}

    @classmethod
    def from_settings(
        cls,
        settings: HostSettings,
        services: HostServices | None = None,
        *,
        face_names: Collection[str] = frozenset(),
    ) -> "HostedSources":
        """The configured sources; ``face_names`` are the names the faces take under ``/_/``
        (:func:`toshokan.core.face.names_of`), which no source slug may be."""
        services = services or host_services(settings)
        hosted, problems = [], []
        for slug, section in settings.sources.items():
            if not section.enabled:
                continue
            try:
                hosted.append(build_source(slug, section, services, face_names))
            except ConfigurationError as error:  # each source's problems, all in one line
                problems.append(str(error))
        if problems:
            raise ConfigurationError("; ".join(problems))
        return cls(settings, services, hosted)

    async def startup(self) -> None:
        """Start every adapter and validate its configuration; any failure stops the host."""
        started: list[HostedSource] = []
        try:
            for hosted in self.serving():
                try:
                    await hosted.source.startup()
                except Exception as error:
                    raise ConfigurationError(
                        f"source {hosted.slug!r} failed to start: {error}"
                    ) from error
                started.append(hosted)
                hosted.configuration()
        except BaseException:
            for hosted in reversed(started):
                await hosted.source.shutdown()
            await self.services.aclose()
            raise

    async def shutdown(self) -> None:
        for hosted in reversed(list(self.serving())):
            try:
                await hosted.source.shutdown()
            except Exception:
                log.exception("source %s failed to shut down cleanly", hosted.slug)
        await self.services.aclose()

    def serving(self) -> list[HostedSource]:
        return [s for s in self.by_slug.values() if s.status is not SourceStatus.REMOVED]

    def get(self, slug: str) -> HostedSource:
        hosted = self.by_slug.get(slug)
        if hosted is None:
            raise SourceNotFound(f"No source has the slug {slug!r}.")
        if hosted.status is SourceStatus.REMOVED:
            raise SourceNotFound(f"The source {slug!r} has been removed from this host.")
        return hosted

    def manifest(self) -> HostManifest:
        entries = {}
        for slug, hosted in sorted(self.by_slug.items()):
            if hosted.status is SourceStatus.REMOVED:
                digest = content_hash(
                    {"slug": slug, "status": "removed", "version": hosted.source.version}
                )
            else:
                digest = hosted.configuration().hash
            entries[slug] = SourceManifestEntry(
                version=hosted.source.version, hash=digest, status=hosted.status
            )
        manifest = HostManifest(
            name=self.settings.host.name,
            author=self.settings.host.author,
            repository=self.settings.host.repository,
            version=__version__,
            sources=[s.slug for s in self.serving()],
            manifest=entries,
        )
        manifest.hash = content_hash(manifest.model_dump(mode="json"))
        return manifest


def host_services(settings: HostSettings, **overrides: Any) -> HostServices:
    """The facilities the host hands its adapters, for ``settings``.

    With ``[cluster] database`` this opens it (for the shared slug claims), so it raises
    :class:`~toshokan.core.database.DatabaseUnavailable` when PostgreSQL cannot be reached.
    """
    options: dict[str, Any] = {
        "user_agent": f"toshokan/{__version__} (+{settings.host.repository})",
        "data_dir": settings.host.data_dir,
        "public_url": settings.host.public_url or listen_url(settings),
        "http_timeout": settings.server.upstream_timeout,
        **overrides,
    }
    if "secret" not in options:
        options["secret"] = host_secret(settings)
    if "claims" not in options and settings.cluster.database:
        options["claims"] = DatabaseClaims(open_database(settings))
    return HostServices(**options)


def build_source(
    slug: str, section: SourceSection, services: HostServices, face_names: Collection[str]
) -> HostedSource:
    if not SOURCE_SLUG.fullmatch(slug):
        raise ConfigurationError(f"source {slug!r}: a source slug is lowercase letters a-z only")
    if slug in face_names:
        # A source's own routes mount at /_/<slug> and would shadow the face's.
        raise ConfigurationError(
            f"source {slug!r}: the host serves {host_path(slug)} itself; choose another slug "
            f"(not one of {', '.join(sorted(face_names))})"
        )
    name = section.adapter or slug
    try:
        cls = adapter(name)
    except AdapterLoadError as error:
        raise ConfigurationError(f"source {slug!r}: {error}") from None
    try:
        settings = cls.Settings.model_validate(section.adapter_settings())
    except ValidationError as error:
        problems = explain(error, cls.Settings, f"{ENV_PREFIX}SOURCES__{slug}__")
        raise ConfigurationError(f"source {slug!r}: settings {problems}") from None
    try:
        source = cls(slug, settings, services.for_source(slug))
    except Exception as error:  # an adapter refusing its settings is a configuration problem
        raise ConfigurationError(f"source {slug!r}: {error}") from error
    return HostedSource(
        slug=slug, status=section.status, source=source, accepts_readers=section.accepts_readers
    )


#: Listening on every interface: the machine itself is the address that surely answers.
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def listen_url(settings: HostSettings) -> str:
    """Where the host listens, as a URL: the best guess at its address when none is configured."""
    server = settings.server
    host = "localhost" if server.host in WILDCARDS else server.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    scheme = "https" if server.tls_cert else "http"
    return f"{scheme}://{host}:{server.port}"


def host_secret(settings: HostSettings) -> bytes:
    """The signing key: configured, or generated once and kept beside the indexes."""
    if settings.host.secret:
        return settings.host.secret.encode()
    path: Path = settings.host.data_dir / SECRET_NAME
    try:
        if not path.is_file():
            generate_secret(path)
        return path.read_bytes().strip()
    except OSError as error:
        raise DataDirError(
            f"the secret file {path} cannot be {'read' if path.is_file() else 'written'} "
            f"({error.strerror or error}) by {user()}: make it theirs (chown {user()} {path}), "
            "or set [host] secret (TOSHOKAN_HOST__SECRET)"
        ) from None


def generate_secret(path: Path) -> None:
    """Write a new secret at ``path``, readable by this user only, whole or not at all: the
    first of several processes starting at once to link its file into place wins, and the
    others read that one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(secrets.token_hex(32).encode())
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    finally:
        aside.unlink(missing_ok=True)
