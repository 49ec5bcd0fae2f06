"""``toshokan scan``, ``toshokan demo`` and ``toshokan hash-secret``: the library's CLI.

``scan`` builds or updates an index ahead of time and prints what was indexed
and what was skipped and why; ``demo`` writes the sample library;
``hash-secret`` turns a password or API key into the hash the settings accept,
so no plaintext secret needs to sit in the configuration file.
"""

import getpass
import threading
from pathlib import Path

import click
from tqdm import tqdm

from toshokan.sdk import HostServices, pass_services
from toshokan.sources.local.credentials import hash_secret
from toshokan.sources.local.demo import write_demo_library
from toshokan.sources.local.discovery import LibraryUnavailable
from toshokan.sources.local.index import (
    Index,
    IndexLock,
    IndexUnavailable,
    default_index_path,
)
from toshokan.sources.local.index.update import Progress, ScanCancelled
from toshokan.sources.local.scan_report import ScanReport
from toshokan.sources.local.scanner import Scanner


@click.command("scan")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Index file to create or update (the source's `index_path`). Default: the file "
    "`toshokan serve` uses for a source named --slug on DIRECTORY, "
    "DATA_DIR/local/<slug>-<key of DIRECTORY>.sqlite3 ([host] data_dir of --config, or "
    "TOSHOKAN_HOST__DATA_DIR). Refused while a host serves from that index.",
)
@click.option("--slug", default="local", show_default=True, help="Source slug the index is for.")
@click.option(
    "--language", default="en", show_default=True, help="Language of chapters without one."
)
@click.option(
    "--workers",
    type=click.IntRange(0, 64),
    default=None,
    help="Processes opening chapters in a large scan (default: one per CPU, at most 8).",
)
@click.option("--quiet", is_flag=True, help="No progress bar; only the summary.")
@pass_services
def scan_command(
    services: HostServices,
    directory: Path,
    index_path: Path | None,
    slug: str,
    language: str,
    workers: int | None,
    quiet: bool,
) -> None:
    """Index the local library in DIRECTORY and report what was skipped and why."""
    root = directory.expanduser().resolve()
    if not root.is_dir():
        raise click.ClickException(f"{root} is not a folder")
    path = index_path or default_index_path(services.data_dir, slug, root)
    lock = IndexLock(path, None)
    try:
        lock.acquire()
        index = Index(path, root)
    except IndexUnavailable as error:
        lock.release()
        raise click.ClickException(str(error)) from None
    scanner = Scanner(
        root,
        index,
        default_language=language,
        workers=workers,
        shared_claims=services.claims,
        source=slug,
    )
    bar: tqdm | None = None

    read = 0

    def progress(done: int, total: int) -> None:
        nonlocal bar, read
        read = done
        if quiet:
            return
        if bar is None:
            # disable=None: drawn on a terminal only; a file or pipe gets just the summary.
            bar = tqdm(total=total, unit="chapter", desc="Reading", leave=False, disable=None)
        bar.update(done - bar.n)  # redraws at most every mininterval, not per chapter

    try:
        report = scan_until_interrupted(scanner, progress)
    except LibraryUnavailable as error:
        raise click.ClickException(str(error)) from None
    except ScanCancelled:
        if bar is not None:
            bar.close()
            bar = None
        click.echo(
            f"Scan interrupted: the {read} chapters read so far are kept in {index.path}; "
            "scan again to go on from there.",
            err=True,
        )
        raise SystemExit(130) from None
    finally:
        if bar is not None:
            bar.close()
        index.close()
        lock.release()
    click.echo(report.summary())
    click.echo(f"Index: {index.path}")


def scan_until_interrupted(scanner: Scanner, progress: Progress) -> ScanReport:
    """The scan, in a thread of its own: Ctrl-C stops it at the next chapter, and what it read
    is committed (:class:`ScanCancelled` then), instead of unwinding it mid-write."""
    outcome: list[ScanReport | BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append(scanner.scan(progress=progress))
        except BaseException as error:
            outcome.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=run, name="toshokan-scan")
    thread.start()
    # Waiting on an event, not on join(): a join interrupted by Ctrl-C can take the thread
    # for finished while it still runs.
    while not done.is_set():
        try:
            done.wait(0.2)
        except KeyboardInterrupt:
            scanner.stop.set()
    thread.join()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--series", default=6, show_default=True, help="Number of series.")
@click.option("--chapters", default=4, show_default=True, help="Chapters per series.")
@click.option("--pages", default=3, show_default=True, help="Pages per chapter.")
def demo_command(directory: Path, series: int, chapters: int, pages: int) -> None:
    """Write a sample library into DIRECTORY (archives, ComicInfo.xml, covers...)."""
    write_demo_library(directory, series=series, chapters=chapters, pages=pages)
    click.echo(f"Wrote a sample library of {series} series to {directory}")


@click.command("hash-secret")
@click.option("--secret", default=None, help="The secret to hash (prompted for when omitted).")
def hash_secret_command(secret: str | None) -> None:
    """Print the hash of a password or API key for `password_hash` / `api_key_hash`."""
    value = secret if secret is not None else getpass.getpass("Secret: ")
    if not value:
        raise click.ClickException("an empty secret cannot be used")
    click.echo(hash_secret(value))
