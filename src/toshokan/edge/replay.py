"""Cached public answers, replayed by the edge without entering the application.

The core caches the bytes of each answer; the edge keeps, beside them, the
whole HTTP answer that carried them (status, headers, ETag) under the
request's method, scheme, host, path, query and body. An identical request
gets those bytes back for exactly as long as the core's cache entry lives:
each replay first checks the entry is still the one the core holds, and a
source's entries are dropped the moment the core invalidates that source.
Only answers without credentials, cookies or forwarded headers are kept
(the caller says which), and only public ones.

Asking the core's cache whether an entry still lives costs more than the
rest of a replay, so it is asked at most every :data:`RECHECK_SECONDS` per
answer: an answer that expired or was evicted in the core is replayed at
most that long after. Invalidation is not delayed: it drops answers at once.
"""

import hashlib
import time
from collections.abc import Hashable, Mapping
from typing import Any

from toshokan.core.served import CacheEntry
from toshokan.edge.accesslog import Said
from toshokan.edge.paths import BudgetKind

Headers = list[tuple[bytes, bytes]]
#: Bodies longer than this are keyed by their digest, so keys stay small.
MAX_KEY_BODY = 256
RECHECK_SECONDS = 0.1


class Stored:
    __slots__ = (
        "body",
        "budget",
        "checked_until",
        "ending",
        "entry",
        "etag",
        "headers",
        "labels",
        "said",
        "tally",
    )

    def __init__(
        self,
        entry: CacheEntry,
        headers: Headers,
        body: bytes,
        etag: bytes,
        labels: tuple[str, str],
        budget: BudgetKind,
        said: Said,
        tally: list[float] | None = None,
    ):
        self.entry = entry
        #: The face and route template of the request that was answered: a replay counts there.
        self.labels = labels
        self.checked_until = time.monotonic() + RECHECK_SECONDS
        self.headers = headers
        self.body = body
        #: The message that sends the body, made once for every replay (a server reads it,
        #: never changes it).
        self.ending = {"type": "http.response.body", "body": body}
        self.etag = etag
        #: The client's budget a replay of it spends (the path's).
        self.budget = budget
        #: What the access line of a replay says of it (its method, path and status), made
        #: once for every replay.
        self.said = said
        #: The figures a replay of it to a GET adds to (toshokan.core.metrics), if kept so.
        self.tally = tally


class ReplayTable:
    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        #: Every answer kept, by key: the edge's one pass reads an answer here and asks
        #: :meth:`get` only once its :attr:`Stored.checked_until` has passed.
        self.answers: dict[Hashable, Stored] = {}
        self._keys_of: dict[str | None, set[Hashable]] = {}

    @staticmethod
    def key(scope: Mapping[str, Any], host: bytes | None, body: bytes = b"") -> Hashable:
        """Where an answer to this request is kept: its method, scheme, host (``host``, as the
        request named it), path, query and body (a long one by its digest). The edge's one pass
        makes a bodiless GET's key as this tuple in line, without the call (a test proves the
        two find each other's answers)."""
        if body and len(body) > MAX_KEY_BODY:
            body = hashlib.sha256(body).digest()
        return (scope["method"], scope["scheme"], host, scope["path"], scope["query_string"], body)

    def __len__(self) -> int:
        return len(self.answers)

    def get(self, key: Hashable, now: float) -> Stored | None:
        """The answer kept under ``key``, if it still stands at ``now`` (``time.monotonic``)."""
        stored = self.answers.get(key)
        if stored is None:
            return None
        if now < stored.checked_until:
            return stored
        if stored.entry.alive():
            stored.checked_until = now + RECHECK_SECONDS
            return stored
        self._drop(key)
        return None

    def put(self, key: Hashable, stored: Stored) -> None:
        if self.max_entries <= 0:
            return
        if key not in self.answers and len(self.answers) >= self.max_entries:
            self._drop(next(iter(self.answers)))  # the oldest
        self.answers[key] = stored
        self._keys_of.setdefault(stored.entry.source, set()).add(key)

    def invalidate(self, source: str) -> None:
        """Forget every answer about ``source``, and those about every source (the manifest)."""
        for about in (source, None):
            for key in self._keys_of.pop(about, set()):
                self.answers.pop(key, None)

    def _drop(self, key: Hashable) -> None:
        stored = self.answers.pop(key, None)
        if stored is not None:
            self._keys_of.get(stored.entry.source, set()).discard(key)
