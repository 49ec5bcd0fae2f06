"""The ``toshokan`` command."""

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import click

from toshokan import __version__
from toshokan.config import HostSettings, load_settings
from toshokan.registry import AdapterLoadError, installed_adapters

CONFIG_HELP = """\b
Configuration: one TOML file (--config), overridden by environment variables
TOSHOKAN_<SECTION>__<KEY> (nested keys joined by "__"), overridden by flags.

\b
  [host]    name, author, repository, public_url, data_dir, secret
  [server]  host, port, tls_cert, tls_key, trusted_proxies, upstream_timeout
  [cors]    origins, tools_origin
  [limits]  rate_limit (per minute per client, 0 = off), auth_attempts, storage
  [cache]   configuration, search, manga, chapters (seconds), max_entries
  [sources.<slug>]  adapter, status (active|deprecated|removed), enabled,
            and the adapter's own settings (see `toshokan sources --settings`)

\b
With neither --config nor --library, toshokan serves the local library at
DATA_DIR/library, writing sample content there on first run.
"""


@click.group(help=f"toshokan {__version__}: a content host for reader apps.\n\n{CONFIG_HELP}")
@click.version_option(__version__, prog_name="toshokan")
def main() -> None:
    pass


def resolve_settings(config: Path | None, library: Path | None, **flags: Any) -> HostSettings:
    """Settings from file, environment and flags, with the embedded default when none name a source."""
    overrides: dict[str, Any] = {}
    server = {k: v for k, v in flags.items() if k in ("host", "port") and v is not None}
    if server:
        overrides["server"] = server
    if flags.get("rate_limit") is not None:
        overrides["limits"] = {"rate_limit": flags["rate_limit"]}
    if library is not None:
        overrides["sources"] = {"local": {"adapter": "local", "root": str(library)}}
    settings = load_settings(config, **overrides)
    if not settings.sources and config is None:
        settings = load_settings(
            None, **overrides, sources={"local": {"root": str(default_library(settings))}}
        )
    return settings


def default_library(settings: HostSettings) -> Path:
    root = settings.host.data_dir / "library"
    if not root.exists():
        from toshokan.sources.local.demo import write_demo_library

        click.echo(f"toshokan: writing sample content to {root} (first run)", err=True)
        write_demo_library(root)
    return root


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
    help="Serve this folder with the local source (slug 'local'); no config file needed.",
)
@click.option("--host", help="Listen address (default 127.0.0.1; [server] host).")
@click.option("--port", type=int, help="Listen port (default 8000; [server] port).")
@click.option(
    "--rate-limit", type=click.IntRange(min=0), help="Requests per minute per client; 0 disables."
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
)
def serve(
    config: Path | None,
    library: Path | None,
    host: str | None,
    port: int | None,
    rate_limit: int | None,
    log_level: str,
) -> None:
    import uvicorn

    from toshokan.app import create_app

    settings = _or_exit(
        lambda: resolve_settings(config, library, host=host, port=port, rate_limit=rate_limit)
    )
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    app = _or_exit(lambda: create_app(settings))
    server = settings.server
    uvicorn.run(
        plain_startup_errors(app),
        host=server.host,
        port=server.port,
        ssl_certfile=str(server.tls_cert) if server.tls_cert else None,
        ssl_keyfile=str(server.tls_key) if server.tls_key else None,
        access_log=False,  # our own access log leaves query strings (signatures) out
        proxy_headers=False,  # TrustedProxyMiddleware handles X-Forwarded-* from [server] trusted_proxies
        log_level=log_level,
        lifespan="on",
    )


def plain_startup_errors(app: Any) -> Any:
    """Wrap ``app`` so a configuration error at start-up is reported as one line, not a traceback.

    Starlette reports a failed lifespan start with the whole traceback as the
    message, which uvicorn prints; the operator needs only what to fix.
    """

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        async def send_plain(message: Any) -> None:
            problem = getattr(app.state, "startup_error", None)
            if message["type"] == "lifespan.startup.failed" and problem:
                message = {**message, "message": f"toshokan: configuration error: {problem}"}
            await send(message)

        await app(scope, receive, send_plain if scope["type"] == "lifespan" else send)

    return wrapped


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
    from toshokan.app.host import Host

    settings = _or_exit(lambda: load_settings(config_file))

    async def check() -> None:
        host = Host.from_settings(settings)
        await host.startup()
        await host.shutdown()

    _or_exit(lambda: asyncio.run(check()))
    click.echo(
        f"{config_file}: OK ({len(settings.sources)} source(s): {', '.join(settings.sources) or 'none'})"
    )


def _or_exit(action: Any) -> Any:
    """Run ``action``; a configuration problem ends the command with its message, not a traceback."""
    from pydantic import ValidationError

    from toshokan.app.host import ConfigurationError

    try:
        return action()
    except (ConfigurationError, AdapterLoadError, FileNotFoundError) as error:
        click.echo(f"toshokan: configuration error: {error}", err=True)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        click.echo(f"toshokan: configuration error: {problems}", err=True)
    sys.exit(2)


def _add_adapter_commands() -> None:
    adapters, _ = installed_adapters()  # `toshokan sources` reports broken plugins
    for cls in adapters.values():
        for command in cls.commands():
            main.add_command(command)


_add_adapter_commands()
