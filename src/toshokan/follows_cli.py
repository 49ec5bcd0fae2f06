"""``toshokan follows``: following series from the command line, with the host's configuration.

Pass the same ``--config`` as ``serve``: follows live in the host's database (SQLite in
``data_dir``, or ``[cluster] database``), so a running host sees them at its next round.
``follows check`` checks in this process and prints what it found; every other
command only reads or writes the database (``add`` also asks the source whether
the series exists). Bad input is one line and exit status 1.
"""

import datetime
from typing import Any

import click

from toshokan.core_cli import READER, named_reader, run_on_core

#: The keep filters, the same for one series kept and for every series of a source.
LANGUAGES = click.option(
    "--language", "languages", multiple=True, help="Keep chapters in this language (repeatable)."
)
GROUPS = click.option(
    "--group",
    "groups",
    multiple=True,
    help="Prefer this group's version of a chapter (repeatable, in order; default any group, "
    "one version a number).",
)


def _when(moment: float | None) -> str:
    if moment is None:
        return "-"
    return datetime.datetime.fromtimestamp(moment).strftime("%Y-%m-%d %H:%M")


@click.group(
    name="follows",
    help="Follow series: the host checks them for new chapters on a schedule ([follows] "
    "interval) and announces them to notification targets (Apprise URLs).",
)
def follows_group() -> None:
    pass


@follows_group.command(
    name="add",
    help="Follow the series MANGA (its slug) of SOURCE; with --keep, keep its new chapters in "
    "the local library (see `toshokan downloads`).",
)
@click.argument("source")
@click.argument("manga")
@READER
@click.option("--keep", is_flag=True, help="Keep a copy of each new chapter in the local library.")
@LANGUAGES
@GROUPS
@click.option(
    "--backfill",
    type=click.IntRange(0, 1000),
    default=0,
    help="Also keep this many of the newest chapters that exist already (default none).",
)
@click.option("--only-unread", is_flag=True, help="Keep only chapters the reader has not read.")
def follows_add(
    source: str,
    manga: str,
    reader: str | None,
    keep: bool,
    languages: tuple[str, ...],
    groups: tuple[str, ...],
    backfill: int,
    only_unread: bool,
) -> None:
    if not keep and (languages or groups or backfill or only_unread):
        raise click.UsageError("--language, --group, --backfill and --only-unread go with --keep")

    async def add(core: Any) -> Any:
        who = await named_reader(core, reader)
        made = await core.follows.follow(who, source, manga)
        if keep:
            await core.downloads.keep(
                who,
                source,
                manga,
                languages=languages,
                groups=groups,
                backfill=backfill,
                only_unread=only_unread,
            )
        return made

    made = run_on_core(add, start_sources=True)
    series = made.followed.series
    click.echo(f"following {source}/{manga} ({series.title}); its first check is queued")
    if keep:
        click.echo("keeping its new chapters in the local library (`toshokan downloads list`)")


@follows_group.command(
    name="keep",
    help="Keep every series the reader follows from SOURCE, and every one followed later, in "
    "the local library (a series kept with `follows add --keep` keeps its own filters); "
    "with --off, stop (what was kept stays).",
)
@click.argument("source")
@READER
@LANGUAGES
@GROUPS
@click.option("--only-unread", is_flag=True, help="Keep only chapters the reader has not read.")
@click.option("--off", is_flag=True, help="Stop keeping every series followed from SOURCE.")
def follows_keep(
    source: str,
    reader: str | None,
    languages: tuple[str, ...],
    groups: tuple[str, ...],
    only_unread: bool,
    off: bool,
) -> None:
    from toshokan.errors import NotFound

    if off and (languages or groups or only_unread):
        raise click.UsageError("--off takes no --language, --group or --only-unread")

    async def keep(core: Any) -> None:
        who = await named_reader(core, reader)
        core.source(source)
        downloads = core.downloads
        if off:
            if not await downloads.unkeep_every(who, source):
                raise NotFound(f"every series followed from {source} is not kept")
            return
        await downloads.keep_every(
            who, source, languages=languages, groups=groups, only_unread=only_unread
        )

    run_on_core(keep, start_sources=True)
    if off:
        click.echo(f"no longer keeping every series followed from {source} (what was kept stays)")
    else:
        click.echo(
            f"keeping every series followed from {source} in the local library "
            "(`toshokan downloads list`)"
        )


@follows_group.command(
    name="list", help="List the series a reader follows, and the sources they keep every series of."
)
@READER
def follows_list(reader: str | None) -> None:
    async def found(core: Any) -> Any:
        who = await named_reader(core, reader)
        return await core.follows.follows_of(who), await core.downloads.every_series(who)

    follows, every = run_on_core(found)
    for keep in every:
        filters = [
            f"languages {', '.join(keep.languages)}" if keep.languages else "any language",
            f"groups {', '.join(keep.groups)}" if keep.groups else "any group",
        ]
        if keep.only_unread:
            filters.append("only unread")
        click.echo(f"{keep.source}/*  keeping every series followed  ({'; '.join(filters)})")
    for follow in follows:
        series = follow.followed.series
        state = series.state if follow.served else f"{series.state}, source not served"
        click.echo(
            f"{series.source}/{series.manga}  {series.title}  [{state}]  "
            f"unread {follow.unread}  checked {_when(series.last_check)}  "
            f"next {_when(series.next_check)}"
        )


@follows_group.command(name="remove", help="Stop following the series MANGA of SOURCE.")
@click.argument("source")
@click.argument("manga")
@READER
def follows_remove(source: str, manga: str, reader: str | None) -> None:
    from toshokan.errors import NotFound

    async def remove(core: Any) -> None:
        if not await core.follows.unfollow(await named_reader(core, reader), source, manga):
            raise NotFound(f"{source}/{manga} is not followed")

    run_on_core(remove)
    click.echo(f"no longer following {source}/{manga}")


@follows_group.command(
    name="check", help="Check every followed series now (or MANGA of SOURCE); print what is new."
)
@click.argument("source", required=False)
@click.argument("manga", required=False)
def follows_check(source: str | None, manga: str | None) -> None:
    if (source is None) != (manga is None):
        raise click.UsageError("name both SOURCE and MANGA, or neither")
    series = (source, manga) if source is not None and manga is not None else None

    async def check(core: Any) -> Any:
        return await core.follows.check_here(series)

    _, outcomes = run_on_core(check, start_sources=True)
    for outcome in outcomes:
        said = f"{outcome.state}, {outcome.new} new"
        if outcome.removed:
            said += f", {outcome.removed} removed"
        if outcome.error:
            said += f" ({outcome.error})"
        click.echo(f"{outcome.source}/{outcome.manga}: {said}")
        for chapter in outcome.chapters:
            click.echo(f"  new: {chapter.title} ({chapter.language}, {chapter.scanlator})")
    new = sum(o.new for o in outcomes)
    click.echo(f"checked {len(outcomes)} series: {new} new chapter(s)")


@follows_group.command(name="status", help="What the checks and their job engine are doing.")
def follows_status() -> None:
    async def status(core: Any) -> Any:
        return await core.follows.status()

    found = run_on_core(status)
    engine = found["engine"]
    click.echo(f"follows: {found['follows']} of {found['series']} series")
    click.echo(f"next check: {_when(found['next_check'])}")
    click.echo(f"job engine: {engine.engine}, {engine.workers} process(es) working the queue")
    for label, counts in (
        ("queued", engine.queued),
        ("running", engine.running),
        ("failed", engine.failed),
    ):
        shown = ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"
        click.echo(f"  {label}: {shown}")
    click.echo(f"notification targets: {found['targets']}, {len(found['failing_targets'])} failing")
    for target in found["failing_targets"]:
        click.echo(f"  failing since {_when(target.failing_since)}: {target.shown}: {target.error}")


@follows_group.group(
    name="notify",
    help="Where news is announced: Apprise URLs (ntfy://, gotify://, discord://, tgram://, "
    "mailto://, json://...). Without --reader, the host's own targets, told of every series.",
)
def notify_group() -> None:
    pass


@notify_group.command(name="add", help="Announce news to the Apprise URL.")
@click.argument("url")
@READER
@click.option(
    "--series", "series", multiple=True, help="Only for this series (SOURCE/MANGA); repeatable."
)
def notify_add(url: str, reader: str | None, series: tuple[str, ...]) -> None:
    async def add(core: Any) -> Any:
        who = None if reader is None else await named_reader(core, reader)
        return await core.follows.add_target(who, url, list(series))

    target = run_on_core(add)
    click.echo(f"notification target {target.id} added: {target.shown}")


@notify_group.command(name="list", help="List the notification targets (redacted).")
@READER
def notify_list(reader: str | None) -> None:
    async def found(core: Any) -> Any:
        who = None if reader is None else await named_reader(core, reader)
        return await core.follows.targets_of(who)

    for target in run_on_core(found):
        only = f"  only {', '.join(target.series)}" if target.series else ""
        failing = f"  failing: {target.error}" if target.failing_since else ""
        click.echo(f"{target.id}  {target.shown}{only}{failing}")


@notify_group.command(name="remove", help="Remove a notification target (its URL, or its id).")
@click.argument("url")
@READER
def notify_remove(url: str, reader: str | None) -> None:
    from toshokan.errors import NotFound

    async def remove(core: Any) -> None:
        who = None if reader is None else await named_reader(core, reader)
        if not await core.follows.remove_target(who, url):
            raise NotFound("no such notification target")

    run_on_core(remove)
    click.echo("notification target removed")
