"""``toshokan downloads``: the download queue from the command line, as its operator.

Pass the same ``--config`` as ``serve``: the queue lives in the host's database
(SQLite in ``data_dir``, or ``[cluster] database``), so a running host works what
these commands change at its next look (within seconds). Bad input is one line
and exit status 1.
"""

import datetime
from typing import Any

import click

from toshokan.core_cli import READER, named_reader, run_on_core


def _when(moment: float | None) -> str:
    if moment is None:
        return "-"
    return datetime.datetime.fromtimestamp(moment).strftime("%Y-%m-%d %H:%M:%S")


def describe(download: Any) -> str:
    """One download in one line: what, where it stands, and why it failed."""
    number = f"{download.number:g}"
    group = f" [{download.scanlator}]" if download.scanlator else ""
    pages = f"{download.pages_done}/{download.pages}" if download.pages else "-"
    line = (
        f"{download.id}  {download.state:<9}  {download.source}  {download.series_title} "
        f"Ch.{number}{group} ({download.language})  pages {pages}"
    )
    if download.state == "queued" and download.attempts:
        line += f"  try {download.attempts + 1} at {_when(download.next_try)}"
    if download.reason and download.state in ("failed", "queued"):
        line += f"  {download.reason}: {download.error}"
    if download.state == "done" and download.path:
        line += f"  {download.path}"
    return line


@click.group(
    name="downloads",
    help="The download queue keeping followed series ([keep]; `toshokan follows add "
    "SOURCE MANGA --keep`): list it, pause and resume it or one download, retry, cancel.",
)
def downloads_group() -> None:
    pass


@downloads_group.command(name="list", help="List the queue: waiting first, then failed and done.")
@READER
@click.option("--all", "everything", is_flag=True, help="Also the chapters kept already.")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10_000))
def downloads_list(reader: str | None, everything: bool, limit: int) -> None:
    async def listing(core: Any) -> Any:
        who = None if reader is None else await named_reader(core, reader)
        return await core.downloads.listing(who, finished=everything, limit=limit)

    found = run_on_core(listing)
    queue = found.queue
    if queue.paused is None:
        click.echo("queue: running")
    else:
        click.echo(f"queue: paused since {_when(queue.since)} ({queue.paused}): {queue.message}")
    if found.own is not None and found.own.paused is not None:
        click.echo(f"downloads of {reader}: paused since {_when(found.own.since)}")
    states = ", ".join(f"{name} {count}" for name, count in sorted(found.states.items()))
    click.echo(f"downloads: {states or 'none'}")
    if found.failures:
        reasons = ", ".join(f"{name} {count}" for name, count in sorted(found.failures.items()))
        click.echo(f"failed by reason: {reasons}")
    for download in found.downloads:
        click.echo(describe(download))


@downloads_group.command(
    name="pause",
    help="Pause the whole queue (or hold one download, by its id); with --reader, that "
    "reader's own downloads (a chapter another reader keeps too still runs for them).",
)
@click.argument("download", required=False)
@READER
def downloads_pause(download: str | None, reader: str | None) -> None:
    async def pause(core: Any) -> str:
        who = None if reader is None else await named_reader(core, reader)
        if download is not None:
            return describe(await core.downloads.steer(who, download, "hold"))
        if who is not None:
            await core.downloads.pause(who, own=True)
            return f"downloads of {who} paused (chapters being kept finish)"
        await core.downloads.pause(None)
        return "queue paused (chapters being kept finish)"

    click.echo(run_on_core(pause))


@downloads_group.command(
    name="resume",
    help="Resume the whole queue (or a download held, by its id); with --reader, that "
    "reader's own downloads.",
)
@click.argument("download", required=False)
@READER
def downloads_resume(download: str | None, reader: str | None) -> None:
    async def resume(core: Any) -> str:
        who = None if reader is None else await named_reader(core, reader)
        if download is not None:
            return describe(await core.downloads.steer(who, download, "release"))
        if who is not None:
            await core.downloads.resume(who, own=True)
            return f"downloads of {who} resumed"
        await core.downloads.resume(None)
        return "queue resumed"

    click.echo(run_on_core(resume))


@downloads_group.command(
    name="retry", help="Queue a failed (or cancelled) download again; without an id, every failed."
)
@click.argument("download", required=False)
def downloads_retry(download: str | None) -> None:
    async def retry(core: Any) -> str:
        if download is None:
            return f"{await core.downloads.retry_failed(None)} download(s) queued again"
        return describe(await core.downloads.steer(None, download, "retry"))

    click.echo(run_on_core(retry))


@downloads_group.command(
    name="cancel", help="Cancel a download (a check never queues that chapter again)."
)
@click.argument("download")
def downloads_cancel(download: str) -> None:
    async def cancel(core: Any) -> str:
        return describe(await core.downloads.steer(None, download, "cancel"))

    click.echo(run_on_core(cancel))
