"""The ``toshokan`` command."""

import errno
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from toshokan import __version__
from toshokan.config import (
    ConfigFileError,
    HostSettings,
    Keys,
    load_settings,
    settings_and_problems,
)
from toshokan.exits import or_exit as _or_exit
from toshokan.registry import (
    adapter_commands,
    embedded_default,
    installed_adapters,
)
from toshokan.sdk.commands import SERVICES_KEY
from toshokan.sdk.context import SERVE_ID, HostServices

if TYPE_CHECKING:  # imported when a command checks a configuration, not for --version
    from toshokan.preflight import Problems

#: Where the group's ``--config`` is kept for the subcommands that read it themselves.
CONFIG_KEY = "toshokan.config"

CONFIG_HELP = """\b
Configuration: one TOML file (--config), overridden by environment variables
TOSHOKAN_<SECTION>__<KEY> (nested keys joined by "__"), overridden by flags.

\b
  [host]    name, author, repository, public_url, data_dir, secret
  [server]  host, port, tls_cert, tls_key, trusted_proxies, upstream_timeout,
            workers (processes), header_timeout, body_timeout,
            keep_alive_timeout (seconds), max_connections,
            max_connections_per_client, log_format (text|json)
  [cors]    origins, tools_origin
  [limits]  rate_limit (per minute per client, 0 = off), image_rate_limit
            (page images and covers per minute per client, 0 = off),
            max_body_bytes, max_header_bytes, max_headers, auth_attempts,
            storage (memory:// per process, redis://... shared;
            default: [cluster] redis when set)
  [cluster] redis (redis://host:6379/0: cache, coalescing, invalidation,
            rate limits, upstream budgets, sessions and the scan lease
            shared by every process and replica; unreachable: each
            process keeps its own, and health and ping say so),
            database (postgresql://user@host/db: readers, progress, slug
            claims and chapter dates shared by every replica; unset =
            SQLite in data_dir; unreachable at start-up: serve stops,
            one line)
  [cache]   configuration, search, manga, chapters (seconds), max_entries
  [readers] registration (KOReader's Register button may create readers)
  [metrics] enabled (Prometheus figures at /_/metrics; restrict it at the proxy)
  [follows] enabled (check followed series in the background), interval
            (seconds between checks of a series, 60 at least; default 6 h),
            jitter (share of it a next check moves by, at random),
            settled_after (days) and settled_factor (a Completed/Cancelled
            series unchanged that long is checked that many times less
            often), round (seconds between looks at what is due), concurrency
            (background jobs a process runs at once); see `toshokan follows`
  [keep]    folder (where kept copies of followed series go: the root of a
            local library source, which serves them; default: the local
            library's root), max_image_bytes, max_chapter_bytes,
            max_image_pixels, enabled, sources and readers (who and what
            may be kept; default all), operators (readers who steer the
            whole queue), concurrency and source_concurrency (chapters
            at once, whole host), attempts and retry_after (an upstream
            failing a chapter); see `toshokan downloads`
  [sources.<slug>]  adapter, status (active|deprecated|removed), enabled,
            auth ("readers": the host's readers sign in to the source, on
            every face; any other value is the adapter's), follow_interval
            (this source's [follows] interval), and the adapter's own
            settings (see `toshokan sources --settings`)

\b
With neither --config nor --library, toshokan serves the local library at
DATA_DIR/library, writing sample content there on first run.
"""


class ToshokanGroup(click.Group):
    """The ``toshokan`` command: its own subcommands, and the installed adapters' ones.

    Adapters are imported only when a subcommand is looked up or listed, so
    ``toshokan --version`` or ``toshokan serve --help`` loads none of them.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *adapter_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, name) or adapter_commands().get(name)


@click.group(
    cls=ToshokanGroup,
    help=f"toshokan {__version__}: a content host for reader apps.\n\n{CONFIG_HELP}",
)
@click.version_option(__version__, prog_name="toshokan")
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="TOML configuration file for every subcommand (`toshokan --config F serve`, "
    "`toshokan --config F readers add NAME`, an adapter's `toshokan --config F scan DIR`).",
)
@click.pass_context
def main(ctx: click.Context, config: Path | None) -> None:
    def services() -> HostServices:
        from toshokan.core.hosted import host_services

        settings = _settings(lambda without: load_settings(config, without=without))
        _or_exit(lambda: check_data_dir(settings.host.data_dir))
        services: HostServices = _or_exit(lambda: host_services(settings))
        return services

    ctx.meta[SERVICES_KEY] = services
    ctx.meta[CONFIG_KEY] = config


def resolve_settings(
    config: Path | None, library: Path | None, without: Keys = frozenset(), **flags: Any
) -> HostSettings:
    """Settings from file, environment and flags; the embedded default when none name a source.
    The keys ``without`` names are left out (see :func:`toshokan.config.load_settings`)."""
    overrides: dict[str, Any] = {}
    server = {
        k: v
        for k, v in flags.items()
        if k in ("host", "port", "workers", "log_format") and v is not None
    }
    if server:
        overrides["server"] = server
    if flags.get("rate_limit") is not None:
        overrides["limits"] = {"rate_limit": flags["rate_limit"]}
    settings = load_settings(config, without=without, **overrides)
    if settings.sources and library is None:
        return settings
    if config is not None and library is None:
        raise ConfigFileError(f"{config}: no source is configured; add a [sources.<slug>] table")
    found = embedded_default(settings.host.data_dir, library)
    if found is None:
        raise ConfigFileError("no installed adapter can serve without a configuration")
    name, options = found
    return load_settings(
        config, without=without, **overrides, sources={name: {"adapter": name, **options}}
    )


@main.command(help=f"Start the host.\n\n{CONFIG_HELP}")
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="TOML configuration file.",
)
@click.option(
    "--library",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Serve this folder with the embedded default source (the local library); "
    "no config file needed.",
)
@click.option("--host", help="Listen address (default 127.0.0.1; [server] host).")
@click.option("--port", type=int, help="Listen port (default 8000; [server] port).")
@click.option(
    "--rate-limit", type=click.IntRange(min=0), help="Requests per minute per client; 0 disables."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    help="Worker processes on the one port (default 1; [server] workers). Without "
    "[cluster] redis each counts rate limits and budgets and caches alone; with it they share.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="At info, one access line per request (no query strings, no credentials).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    help="Log lines as text, or one JSON object a line with the request id "
    "(default text; [server] log_format).",
)
def serve(
    config: Path | None,
    library: Path | None,
    host: str | None,
    port: int | None,
    rate_limit: int | None,
    workers: int | None,
    log_level: str,
    log_format: str | None,
) -> None:
    # `toshokan --config F serve` names the file as every other subcommand takes it.
    config = config or click.get_current_context().meta.get(CONFIG_KEY)
    settings, problems = _or_exit(
        lambda: settings_and_problems(
            lambda without: resolve_settings(
                config,
                library,
                without,
                host=host,
                port=port,
                rate_limit=rate_limit,
                workers=workers,
                log_format=log_format,
            )
        )
    )
    if problems:  # the rest of the configuration's problems too, for one line naming them all
        _stop(problems, _or_exit(lambda: configuration_problems(settings)))
    _or_exit(lambda: check_data_dir(settings.host.data_dir))
    from toshokan.serving import run, served_app, share_metrics_between_processes

    if settings.server.workers > 1 and settings.metrics.enabled:
        # Before the faces import prometheus-client, which reads where the workers' figures go.
        share_metrics_between_processes(settings.host.data_dir)
    from toshokan.faces import FACES
    from toshokan.logs import configure_logging

    configure_logging(log_level, settings.server.log_format)
    # Before anything starts (a library scan can take minutes) or is announced.
    if problem := listen_problem(settings.server.host, settings.server.port):
        click.echo(f"toshokan: cannot serve: {problem}", err=True)
        sys.exit(1)
    # Built here even for several workers: a configuration error stops the command at once.
    app = _or_exit(lambda: served_app(settings))
    for face in FACES:
        if face.announce is None:
            continue
        if settings.server.log_format == "json":  # a log collector reads every line as JSON
            logging.getLogger("toshokan").info("%s", face.announce(settings))
        else:
            click.echo(f"toshokan: {face.announce(settings)}")
    os.environ[SERVE_ID] = str(os.getpid())  # its workers inherit it: one host
    run(settings, log_level, app)


def shared_state_warnings(settings: HostSettings) -> list[str]:
    """One line per configured Redis that does not answer now; a missing package is an error.

    Not answering now is only a warning: the host serves with per-process state until it does.
    """
    import asyncio

    from toshokan.core.shared.cluster import Cluster

    return asyncio.run(Cluster(settings).unreachable())


def listen_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (in use, not allowed...), or None.

    Tried with a socket bound the way uvicorn binds it (``SO_REUSEADDR``), then closed.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        reason = error.strerror or str(error)
        hint = (
            "; choose another with --port or [server] port"
            if error.errno == errno.EADDRINUSE
            else ""
        )
        return f"cannot listen on {host}:{port}: {reason}{hint}"
    return None


@main.command(name="sources", help="List the installed source adapters.")
@click.option(
    "--settings", "show_settings", is_flag=True, help="Also list each adapter's settings."
)
def list_sources(show_settings: bool) -> None:
    adapters, broken = installed_adapters()
    for name, problem in sorted(broken.items()):
        click.echo(f"{name:<12} BROKEN   {problem}")
    for name, cls in sorted(adapters.items()):
        click.echo(
            f"{name:<12} {cls.version:<8} {cls.__module__}.{cls.__qualname__}  {cls.summary}"
        )
        if show_settings:
            for field, info in cls.Settings.model_fields.items():
                default = (
                    "required"
                    if info.is_required()
                    else f"default {info.get_default(call_default_factory=True)!r}"
                )
                click.echo(f"    {field}: {info.description or ''} ({default})")


@main.command(name="check-config", help="Validate a configuration file without serving.")
@click.argument("config_file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
def check_config(config_file: Path) -> None:
    settings, problems = _or_exit(
        lambda: settings_and_problems(lambda without: load_settings(config_file, without=without))
    )
    if not settings.sources and not problems:
        problems.append(f"{config_file}: no source is configured")
    # Read-only: a throwaway signing key, no adapter started (nothing scanned or written),
    # and the database only asked whether it answers (no migration).
    found = _or_exit(lambda: configuration_problems(settings))
    if problems or found:
        _stop(problems, found)
    for warning in _or_exit(lambda: shared_state_warnings(settings)):
        click.echo(f"toshokan: warning: {warning}", err=True)
    click.echo(
        f"{config_file}: OK ({len(settings.sources)} source(s): {', '.join(settings.sources) or 'none'})"
    )


@main.group(
    name="readers",
    help="The host's readers: with none, the host is open and keeps one implicit reader's "
    "progress; with readers, each signs in (KOReader with the name and password).",
)
def readers_group() -> None:
    pass


def _accounts() -> Any:
    """The readers' database of the host ``toshokan --config FILE`` configures."""
    from toshokan.core.database import open_database
    from toshokan.core.readers import Readers
    from toshokan.core.readers.gate import READERS
    from toshokan.core.shared.generations import announce_change

    config = click.get_current_context().find_root().params.get("config")
    settings = _settings(lambda without: load_settings(config, without=without))
    if not settings.cluster.database:
        _or_exit(lambda: check_data_dir(settings.host.data_dir))
    database = _or_exit(lambda: open_database(settings))
    click.get_current_context().call_on_close(database.close)
    readers = Readers(database)
    redis = settings.cluster.redis
    if redis:
        # Replicas remember whether the host has readers: a change made here reaches them.
        readers.on_change(lambda: announce_change(redis, READERS))
    return readers


def _account_change(action: Any) -> Any:
    from toshokan.core.readers import AccountError

    try:
        return action()
    except AccountError as error:
        click.echo(f"toshokan: {error}", err=True)
        sys.exit(1)


PASSWORD = click.option(
    "--password",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="Asked when omitted. At least 8 characters, and not the reader's name.",
)


@readers_group.command(name="add", help="Add a reader; prints their first API key, last.")
@click.argument("name")
@PASSWORD
def readers_add(name: str, password: str) -> None:
    key = _account_change(lambda: _accounts().add(name, password))
    click.echo(f"reader {name} added; API key (shown once):")
    click.echo(key)


@readers_group.command(name="list", help="List the readers.")
def readers_list() -> None:
    for account in _accounts().accounts():
        password = "password" if account.has_password else "KOReader key only"
        click.echo(f"{account.name:<24} {account.keys} API key(s), {password}")


@readers_group.command(
    name="remove",
    help="Remove a reader and all that is theirs: their API keys and their place in every "
    "chapter, on every face. Says how much of each and asks first, unless --yes.",
)
@click.argument("name")
@click.option("--yes", is_flag=True, help="Remove without asking.")
def readers_remove(name: str, yes: bool) -> None:
    accounts = _accounts()
    if accounts.stored(name) is None:
        click.echo(f"toshokan: no reader is named {name!r}", err=True)
        sys.exit(1)
    belongings = accounts.belongings(name)
    what = f"reader {name}" + (f" with {', '.join(belongings)}" if belongings else "")
    if not yes:
        click.confirm(f"Remove {what}? This cannot be undone", abort=True, err=True)
    accounts.remove(name)
    click.echo(f"removed {what}")


@readers_group.command(name="password", help="Set a reader's password (KOReader's too).")
@click.argument("name")
@PASSWORD
def readers_password(name: str, password: str) -> None:
    _account_change(lambda: _accounts().set_password(name, password))
    click.echo(f"password of {name} changed")


@readers_group.command(name="key", help="Give a reader a new API key; prints it, last.")
@click.argument("name")
@click.option("--revoke", is_flag=True, help="Revoke the reader's other API keys.")
def readers_key(name: str, revoke: bool) -> None:
    key = _account_change(lambda: _accounts().new_key(name, revoke_others=revoke))
    click.echo(f"new API key of {name}{' (the others are revoked)' if revoke else ''}:")
    click.echo(key)


def _settings(load: Callable[[Keys], HostSettings]) -> HostSettings:
    """The settings ``load`` reads, or the end of the command naming every broken key."""
    settings: HostSettings
    settings, problems = _or_exit(lambda: settings_and_problems(load))
    if problems:
        _stop(problems)
    return settings


def _stop(problems: list[str], found: "Problems | None" = None) -> NoReturn:
    """End the command with one line naming every problem: a configuration error (exit 2),
    or when the configuration itself is right, what it names that cannot be used (exit 1)."""
    configuration = [*problems, *(found.configuration if found else [])]
    surroundings = found.surroundings if found else []
    if configuration:
        click.echo(
            f"toshokan: configuration error: {'; '.join(configuration + surroundings)}", err=True
        )
        sys.exit(2)
    click.echo(f"toshokan: {'; '.join(surroundings)}", err=True)
    sys.exit(1)


def check_data_dir(data_dir: Path) -> None:
    from toshokan.core.data_dir import check

    check(data_dir)


def configuration_problems(settings: HostSettings) -> "Problems":
    from toshokan.preflight import configuration_problems

    return configuration_problems(settings)


def _add_follows() -> None:
    from toshokan.downloads_cli import downloads_group
    from toshokan.follows_cli import follows_group

    main.add_command(follows_group)
    main.add_command(downloads_group)


_add_follows()
