"""``toshokan mangadex ...``: maintenance commands for the MangaDex adapter.

``refresh-tags`` regenerates the shipped ``tags.json`` from ``GET /manga/tag``,
keeping every known tag's slug (see :mod:`.tags`), and prints what changed,
so a maintainer can review the diff before committing it.
"""

import asyncio
from pathlib import Path

import click

from toshokan.sdk import HostServices, pass_services
from toshokan.sources.mangadex import api
from toshokan.sources.mangadex.tags import (
    TagCatalogue,
    catalogue_from_json,
    merge_tag_list,
    shipped_path,
    write_catalogue,
)


async def fetch_tags(
    services: HostServices, api_url: str, previous: TagCatalogue | None
) -> TagCatalogue:
    """The current tag list from the API, merged over ``previous``."""
    client = services.http_client(api_url.rstrip("/"), error_detail=api.error_detail)
    try:
        payload = await client.get_json("/manga/tag")
    finally:
        await client.aclose()
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or not data:
        raise click.ClickException("MangaDex answered /manga/tag without any tags.")
    return merge_tag_list(data, previous)


@click.group(name="mangadex")
def mangadex() -> None:
    """Maintenance of the MangaDex source."""


@mangadex.command(name="refresh-tags")
@click.option(
    "--api-url",
    default="https://api.mangadex.org",
    show_default=True,
    help="MangaDex API base URL.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the tag list (default: the adapter's shipped tags.json).",
)
@pass_services
def refresh_tags(services: HostServices, api_url: str, output: Path | None) -> None:
    """Regenerate the MangaDex tag list from GET /manga/tag."""
    import json

    from toshokan.sdk import HostError

    target = output or shipped_path()
    previous = None
    for candidate in (target, shipped_path()):
        if candidate.exists():
            previous = catalogue_from_json(json.loads(candidate.read_text(encoding="utf-8")))
            break
    try:
        fresh = asyncio.run(fetch_tags(services, api_url, previous))
    except HostError as error:
        raise click.ClickException(f"{error.code}: {error.message}") from None
    old = {t.id: t for t in previous.tags} if previous else {}
    new = {t.id: t for t in fresh.tags}
    for tag in fresh.tags:
        if tag.id not in old:
            click.echo(f"+ {tag.slug} ({tag.name}, {tag.group}{', nsfw' if tag.nsfw else ''})")
        elif old[tag.id] != tag:
            click.echo(f"~ {tag.slug} ({old[tag.id].name} -> {tag.name})")
    for tag_id, tag in old.items():
        if tag_id not in new:
            click.echo(f"- {tag.slug} ({tag.name})")
    write_catalogue(fresh, target)
    click.echo(f"{len(fresh.tags)} tags written to {target}")
