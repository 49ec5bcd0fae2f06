"""Where news of followed series is announced: Apprise URLs, kept sealed, sent once per batch.

A *target* is an Apprise URL (``ntfy://``, ``gotify://``, ``discord://``,
``tgram://``, ``mailto://``, ``json://`` webhooks, ...), a reader's or the
host's (:data:`HOST_WIDE`: the operator's, told of every series anyone follows),
optionally for some series only. A URL carries its service's credentials, so:

- it is checked when set (Apprise must know how to send to it), and refused then;
- it is kept encrypted with a key derived from the host secret (Fernet, as the
  replicas' shared upstream sessions are), found again by an HMAC of it;
- it is shown back only redacted (:func:`redacted`), and never logged: Apprise's
  own log lines (which carry URLs at debug) never reach the host's log, and a
  failure's reason is told with the URL's secrets cut out (:func:`scrubbed`).

Sending is :class:`toshokan.core.follows.rounds` work: one message per target and
batch of checks, retried with backoff when the target fails, never in a check.
"""

import json
import logging
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import apprise
from cryptography.fernet import Fernet, InvalidToken

from toshokan.core.database import Database
from toshokan.core.follows.found import VERSION, Update
from toshokan.core.ids import JOINED, MANGA
from toshokan.core.shared.secrets import sealing_key
from toshokan.errors import InvalidRequest
from toshokan.sdk.keys import DerivedKey

#: The "reader" of the operator's targets, told of every followed series (no reader's name
#: starts with it).
HOST_WIDE = "*"
#: Longest URL accepted; and most series one target may be limited to.
MAX_URL = 2048
MAX_SERIES = 100
#: Lines a message lists before "and N more".
MAX_LINES = 20

# Apprise logs the URLs it sends to (at debug): none of its lines reach the host's log.
logging.getLogger("apprise").propagate = False


class TargetRefused(InvalidRequest):
    """The URL is not one Apprise can send to (or a target's series are malformed)."""


@dataclass(frozen=True)
class Target:
    """A target as it may be shown: never its URL, only the redacted form."""

    id: str
    reader: str
    shown: str
    series: tuple[str, ...]
    failures: int
    failing_since: float | None
    error: str | None
    delivered: float | None


def check_url(url: str) -> str:
    """``url`` stripped, if Apprise can send to it; :class:`TargetRefused` otherwise."""
    url = url.strip()
    if not url or len(url) > MAX_URL or any(ord(c) < 32 for c in url):
        raise TargetRefused(f"A notification URL is 1 to {MAX_URL} printable characters.")
    if apprise.Apprise.instantiate(url) is None:
        raise TargetRefused(
            "Not a notification URL this host can send to: give an Apprise URL such as "
            "ntfy://host/topic, gotify://host/token, discord://id/token or json://host/path."
        )
    return url


def redacted(url: str) -> str:
    """``url`` as it may be shown: scheme and host, credentials masked, each path segment cut
    to its first and last character (a webhook's path is often its secret), no query."""
    plugin = apprise.Apprise.instantiate(url)
    shown = str(plugin.url(privacy=True)) if plugin is not None else url  # type: ignore[no-untyped-call]
    parts = urlsplit(shown.split("?", 1)[0])
    segments = [_masked(segment) for segment in parts.path.split("/")]
    return f"{parts.scheme}://{parts.netloc}{'/'.join(segments)}"


def _masked(segment: str) -> str:
    if len(segment) <= 2 or "..." in segment or "*" in segment:
        return segment
    return f"{segment[0]}...{segment[-1]}"


def scrubbed(text: str, url: str) -> str:
    """``text`` (what Apprise said of a failure) without anything secret of ``url``."""
    parts = urlsplit(url)
    secret = [parts.username, parts.password, parts.fragment]
    secret += [segment for segment in parts.path.split("/") if segment]
    secret += re.split(r"[&=]", parts.query)
    for value in sorted((s for s in secret if s and len(s) >= 3), key=len, reverse=True):
        text = text.replace(value, "***")
    line = " ".join(text.split())
    return line[:300]


def message(updates: Sequence[Update]) -> tuple[str, str]:
    """One message for a batch's news: a title, and a line per chapter (the first few)."""
    count = len(updates)
    series = {(u.source, u.manga) for u in updates}
    title = f"{count} new chapter{'s' if count != 1 else ''}"
    if len(series) == 1:
        title += f" of {updates[0].series_title}"
    lines = []
    for update in updates[:MAX_LINES]:
        extra = f" ({update.language}, {update.scanlator})" if update.kind == VERSION else ""
        lines.append(f"{update.series_title}: {update.title}{extra}")
    if count > MAX_LINES:
        lines.append(f"and {count - MAX_LINES} more")
    return title, "\n".join(lines)


async def send(url: str, title: str, body: str) -> str | None:
    """Send one message; None when the target took it, else why not (no secret of the URL)."""
    notifier = apprise.Apprise()
    notifier.add(url)
    capture = apprise.LogCapture(level=logging.WARNING, fmt="%(message)s")  # type: ignore[no-untyped-call]
    with capture as captured:
        sent = await notifier.async_notify(body=body, title=title)
    if sent:
        return None
    said = captured.getvalue() if hasattr(captured, "getvalue") else ""
    return scrubbed(said, url) or "the target did not take the message"


class Targets:
    """The targets in the host's database, their URLs sealed with the host secret."""

    def __init__(self, database: Database, secret: bytes):
        self.database = database
        self.fernet = Fernet(sealing_key(secret, b"toshokan notification targets v1"))
        self.digests = DerivedKey(secret, "notification-target", "follows")

    def add(self, reader: str, url: str, series: Sequence[str] = ()) -> Target:
        """Keep ``url`` for ``reader`` (limited to ``series``, ``source/manga`` each); the same
        URL given again replaces its series. Raises :class:`TargetRefused` for a bad URL."""
        url = check_url(url)
        if len(series) > MAX_SERIES or any(MANGA.unpack(JOINED, s) is None for s in series):
            raise TargetRefused(
                f"A target's series are at most {MAX_SERIES}, each as source/manga slugs."
            )
        digest = self.digests.digest(url)
        target_id = secrets.token_hex(6)
        shown = redacted(url)
        sealed = self.fernet.encrypt(url.encode()).decode()
        chosen = json.dumps(sorted(set(series)))
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO notify_targets(id, reader, digest, sealed, shown, series, created, "
                "failures) VALUES(?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT(reader, digest) "
                "DO UPDATE SET series = excluded.series",
                (target_id, reader, digest, sealed, shown, chosen, time.time()),
            )
        found = self._find(reader, digest)
        assert found is not None
        return found

    def of(self, reader: str) -> list[Target]:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TARGET} FROM notify_targets WHERE reader = ? ORDER BY created", (reader,)
            )
            return [_target(row) for row in cursor.fetchall()]

    def all(self) -> list[Target]:
        with self.database.transaction() as cursor:
            cursor.execute(f"SELECT {_TARGET} FROM notify_targets ORDER BY reader, created")
            return [_target(row) for row in cursor.fetchall()]

    def remove(self, reader: str, which: str) -> bool:
        """Forget the target ``which`` (its id, or its URL) of ``reader``; whether there was one."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "DELETE FROM notify_targets WHERE reader = ? AND (id = ? OR digest = ?)",
                (reader, which.strip(), self.digests.digest(which.strip())),
            )
            return cursor.rowcount > 0

    def _find(self, reader: str, digest: str) -> Target | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TARGET} FROM notify_targets WHERE reader = ? AND digest = ?",
                (reader, digest),
            )
            row = cursor.fetchone()
        return None if row is None else _target(row)

    def opened(self, target_id: str) -> tuple[Target, str] | None:
        """The target and its URL, unsealed, to send to; None when it is gone (or was sealed
        under another secret: it cannot be used, and is reported failing)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TARGET}, sealed FROM notify_targets WHERE id = ?", (target_id,)
            )
            row = cursor.fetchone()
        if row is None:
            return None
        try:
            url = self.fernet.decrypt(row[-1].encode()).decode()
        except InvalidToken:
            self.failed(target_id, "sealed under another [host] secret: set it again")
            return None
        return _target(row[:-1]), url

    def delivered(self, target_id: str) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE notify_targets SET failures = 0, failing_since = NULL, error = NULL, "
                "delivered = ? WHERE id = ?",
                (time.time(), target_id),
            )

    def failed(self, target_id: str, reason: str) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE notify_targets SET failures = failures + 1, error = ?, "
                "failing_since = CASE WHEN failing_since IS NULL THEN ? ELSE failing_since END "
                "WHERE id = ?",
                (reason, time.time(), target_id),
            )


_TARGET = "id, reader, shown, series, failures, failing_since, error, delivered"


def _target(row: Sequence[object]) -> Target:
    target_id, reader, shown, series, failures, failing_since, error, delivered = row
    return Target(
        str(target_id),
        str(reader),
        str(shown),
        tuple(json.loads(str(series))),
        int(str(failures)),
        None if failing_since is None else float(str(failing_since)),
        None if error is None else str(error),
        None if delivered is None else float(str(delivered)),
    )


def wanted(target: Target, updates: Sequence[Update]) -> list[Update]:
    """The updates a target is for: all, or those of its series."""
    if not target.series:
        return list(updates)
    chosen = set(target.series)
    return [u for u in updates if MANGA.pack(JOINED, u.source, u.manga) in chosen]
