"""The outcome of a scan, as counted while applying it and read back from the index."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

#: Skipped files /health names with their reasons; the rest are counted.
NAMED_IN_HEALTH = 3


@dataclass
class ScanReport:
    """What a scan did, and what the library holds now."""

    series: int = 0
    chapters: int = 0
    read: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        lines = [
            f"Indexed {self.series} series, {self.chapters} chapters "
            f"({self.read} read this scan: {self.added} added, {self.updated} updated, "
            f"{self.removed} removed).",
        ]
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)}:")
            lines += [f"  {path}: {reason}" for path, reason in self.skipped]
        else:
            lines.append("Skipped nothing.")
        if self.warnings:
            lines.append(f"Warnings {len(self.warnings)}:")
            lines += [f"  {path}: {reason}" for path, reason in self.warnings]
        return "\n".join(lines)


@dataclass
class ScanProgress:
    """How far the running scan is (updated from the scanner's thread; plain ints).

    ``report(done, total, running)`` hears every step, for the host's figures.
    """

    running: bool = False
    #: Waiting for another process of the host to finish its scan of this library (a lease).
    waiting: bool = False
    done: int = 0
    total: int = 0
    report: Callable[[int, int, bool], None] | None = None

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self.report is not None:
            self.report(done, total, self.running)

    def start(self) -> None:
        self.running, self.done, self.total = True, 0, 0

    def finish(self) -> None:
        self.running = False
        self.update(self.done, self.total)

    def summary(self) -> str:
        if self.waiting:
            return "waiting for another process of the host to finish scanning this library"
        if not self.running:
            return "index up to date"
        return f"scanning: {self.done} of {self.total} new or changed chapters read"


class SkippedFiles:
    """What the running host says of the files it cannot use: each in its log once (at
    start-up, then as files change), and a count with the first few reasons for health."""

    def __init__(self, source: str, log: logging.Logger):
        self.source = source
        self.log = log
        #: (path, reason) already logged; a file fixed and broken again is said again.
        self.said: set[tuple[str, str, str]] = set()
        self.skipped: list[tuple[str, str]] = []

    def note(self, skipped: list[tuple[str, str]], warnings: list[tuple[str, str]]) -> None:
        """The library's problems now (the whole library's, as a scan reports them)."""
        current = {(path, reason, "skipped") for path, reason in skipped}
        current |= {(path, reason, "warning") for path, reason in warnings}
        for path, reason, severity in sorted(current - self.said):
            if severity == "skipped":
                self.log.warning("local library %s: skipped %s: %s", self.source, path, reason)
            else:
                self.log.warning("local library %s: %s: %s", self.source, path, reason)
        self.said = current
        self.skipped = list(skipped)

    def summary(self) -> str | None:
        """``2 files skipped: a.cbz (contains no images); b.cbr (...)``; None when none."""
        if not self.skipped:
            return None
        named = "; ".join(f"{path} ({reason})" for path, reason in self.skipped[:NAMED_IN_HEALTH])
        more = len(self.skipped) - NAMED_IN_HEALTH
        count = len(self.skipped)
        return f"{count} file{'s' if count != 1 else ''} skipped: {named}" + (
            f"; and {more} more (toshokan scan lists them all)" if more > 0 else ""
        )
