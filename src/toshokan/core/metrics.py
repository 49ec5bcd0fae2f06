"""The host's figures, kept with ``prometheus-client`` and read at ``/_/metrics``.

What is counted, and where it comes from:

- requests by face, route template, method and status, and their latency, from
  the edge (:mod:`toshokan.edge.routes` names the route as declared, never the
  concrete path, so no slug or signature becomes a label);
- lookups of the core's result cache: hits in the process's memory, in the shared
  cache ([cluster] redis), computations joined and misses;
- upstream requests and their errors, and waits for an upstream budget, by
  source, which the SDK reports (:mod:`toshokan.sdk.observe`);
- how far a source's scan of its content is (the local library's index).

Every label value is the operator's (face and source names, route templates,
error codes, cache kinds) or from a closed set (methods, statuses), so the
number of series is bounded whatever clients send.

With several worker processes (``--workers``), each process writes its
figures to files in one directory (``prometheus-client``'s multiprocess
mode, :func:`toshokan.serving.share_metrics_between_processes`), and a scrape of any worker reads and
sums them all: one scrape, one host.

A request's figures cost the edge two additions to plain numbers: a
counter's and a histogram's updates take a lock each and the histogram walks
its buckets in Python, which was a third of what the edge spent on a
replayed answer. Each series keeps its requests by latency bucket and their
seconds summed, as plain numbers the edge adds to on the event loop; what
was added since is folded into the collectors before every scrape (a
counter's and a bucket's increment each), so a scrape counts every request
answered before it and its text is the collectors' own. With several
processes a scrape of one reads the others' files, so each process folds a
request in at once there.
"""

import os
import threading
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

from toshokan.core.cache import ResultCache
from toshokan.sdk.observe import Observers

if TYPE_CHECKING:
    from toshokan.core.downloads.runner import Runner
    from toshokan.core.follows.checks import Outcome
    from toshokan.core.follows.rounds import Rounds

#: Where the processes of one host write their figures (prometheus-client's variable).
MULTIPROCESS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Methods counted by name; any other a client sends is counted as ``other``.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
#: Latency buckets (seconds): from a replayed answer (well under a millisecond) to an upstream
#: that takes its whole deadline.
LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    30,
)
#: Where a tally keeps its seconds summed, after one count a latency bucket (+Inf last).
SUM = len(LATENCY_BUCKETS) + 1
#: A series of the request figures: face, route template, method and status.
SeriesKey = tuple[str, str, str, int]


class HostMetrics:
    """One host's figures; an observer of its upstream clients and scans."""

    #: The media type of :meth:`exposition`.
    content_type = CONTENT_TYPE_LATEST
    #: A tally's layout (:meth:`tally`): one count a latency bucket, then at ``sum_at`` the
    #: seconds summed.
    buckets = LATENCY_BUCKETS
    sum_at = SUM

    def __init__(self) -> None:
        self._series: dict[SeriesKey, tuple[Any, Any]] = {}
        self._failed_reasons: set[str] = set()
        # By series: requests by latency bucket, then their seconds summed. Added to on the
        # event loop's thread, read by a scrape's: each addition is one (atomic) store, and a
        # scrape folds in what it finds, the rest at the next.
        self._tallies: dict[SeriesKey, list[float]] = {}
        # What the collectors hold of each tally, as of the last fold.
        self._folded: dict[SeriesKey, list[float]] = {}
        self._folding = threading.Lock()
        self._shared = MULTIPROCESS_DIR_ENV in os.environ
        self.registry = registry = CollectorRegistry()
        self.requests = Counter(
            "toshokan_requests",
            "Requests answered, by face, route template, method and status.",
            ["face", "route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "toshokan_request_duration_seconds",
            "Seconds from a request's arrival to the end of its answer, by face and route.",
            ["face", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.cache = Counter(
            "toshokan_cache_lookups",
            "Lookups of the result cache by kind: hit (kept by this process), joined (a "
            "computation under way here), shared (from the shared cache) or miss (computed).",
            ["kind", "result"],
            registry=registry,
        )
        self.upstream = Counter(
            "toshokan_upstream_requests",
            "Requests sent to upstreams, by source.",
            ["source"],
            registry=registry,
        )
        self.upstream_errors = Counter(
            "toshokan_upstream_errors",
            "Upstream requests that failed, by source and the error the host made of it.",
            ["source", "code"],
            registry=registry,
        )
        self.budget_waits = Counter(
            "toshokan_upstream_budget_waits",
            "Upstream requests that waited for their source's request budget.",
            ["source"],
            registry=registry,
        )
        self.budget_wait_seconds = Counter(
            "toshokan_upstream_budget_wait_seconds",
            "Seconds upstream requests spent waiting for their source's request budget.",
            ["source"],
            registry=registry,
        )
        self.scan_read = Gauge(
            "toshokan_scan_read",
            "Items (the local library's chapters) the latest scan of a source has read.",
            ["source"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.scan_to_read = Gauge(
            "toshokan_scan_to_read",
            "Items (new or changed chapters) the latest scan of a source has to read.",
            ["source"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.scan_running = Gauge(
            "toshokan_scan_running",
            "1 while a scan of the source runs.",
            ["source"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )

        self.follow_checks = Counter(
            "toshokan_follow_checks",
            "Checks of followed series, by source and result: ok, gone (the upstream says the "
            "series no longer exists), failing (the upstream failed), busy or unserved (skipped).",
            ["source", "result"],
            registry=registry,
        )
        self.follow_new = Counter(
            "toshokan_follow_new_chapters",
            "New chapters (and new versions of a chapter) the checks found, by source.",
            ["source"],
            registry=registry,
        )
        self.notifications = Counter(
            "toshokan_follow_notifications",
            "Messages sent to notification targets, by result (sent, failed).",
            ["result"],
            registry=registry,
        )
        self.follows = Gauge(
            "toshokan_follows",
            "Follows of all readers.",
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.followed_series = Gauge(
            "toshokan_followed_series",
            "Series followed by at least one reader (each checked once).",
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.next_check = Gauge(
            "toshokan_follow_next_check_timestamp_seconds",
            "When the next check of a followed series is due (Unix time; 0 for none).",
            registry=registry,
            multiprocess_mode="mostrecent",
        )

        self.kept_chapters = Counter(
            "toshokan_kept_chapters",
            "Chapters the download queue kept in the local library, by source.",
            ["source"],
            registry=registry,
        )
        self.kept_bytes = Counter(
            "toshokan_kept_bytes",
            "Bytes of the chapters the download queue kept, by source.",
            ["source"],
            registry=registry,
        )
        self.download_failures = Counter(
            "toshokan_download_failures",
            "Chapters the download queue marked failed, by source and reason (upstream-error, "
            "rate-limited, upstream-timeout, bad-image, too-large, gone, failed).",
            ["source", "reason"],
            registry=registry,
        )
        self.download_queue = Gauge(
            "toshokan_download_queue",
            "Chapters in the download queue, by state (queued, running, held, failed).",
            ["state"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.downloads_failed = Gauge(
            "toshokan_downloads_failed",
            "Chapters failed and not retried yet, by reason.",
            ["reason"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.downloads_paused = Gauge(
            "toshokan_downloads_paused",
            "1 while the download queue is paused (by the operator, or a keep folder that is "
            "full or cannot be written).",
            registry=registry,
            multiprocess_mode="mostrecent",
        )

    def observe(self, cache: ResultCache, observers: Observers) -> None:
        """Count ``cache``'s lookups and what ``observers`` hear."""
        cache.on_lookup(self.cache_lookup)
        observers.add(self)

    def request(self, face: str, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        key, tally = self._tally_of(face, route, method, status)
        # The first bucket whose bound is at least ``seconds``, as observe() finds it.
        tally[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        tally[SUM] += seconds
        if self._shared:
            self._fold_series(key, tally)

    def tally(self, face: str, route: str, method: str, status: int) -> list[float] | None:
        """The plain numbers of one series, for a caller that counts many requests of it
        itself, as :meth:`request` does (the edge, for a replayed answer); ``None`` when each
        request must be counted by :meth:`request` (several processes: each folds a request
        in at once)."""
        if self._shared:
            return None
        return self._tally_of(face, route, method, status)[1]

    def _tally_of(
        self, face: str, route: str, method: str, status: int
    ) -> tuple[SeriesKey, list[float]]:
        """The series of a request (a method not in :data:`METHODS` counted as ``other``) and
        its plain numbers, made at its first request."""
        key = (face, route, method if method in METHODS else "other", status)
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._tallies[key] = [0] * SUM + [0.0]
        return key, tally

    def add_answered(self) -> None:
        """Fold the requests answered since the last fold into the request collectors."""
        for key, tally in list(self._tallies.items()):
            self._fold_series(key, tally)

    def _fold_series(self, key: SeriesKey, tally: list[float]) -> None:
        with self._folding:
            now = tally[:]  # one copy: the event loop may add to the tally meanwhile
            before = self._folded.get(key)
            if before == now:
                return
            before = before or [0] * SUM + [0.0]
            count, latency = self._series_of(*key)
            count.inc(sum(now[:SUM]) - sum(before[:SUM]))
            # prometheus-client observes one value at a time; a fold adds to its sum and
            # buckets (the values observe() adds to) once each.
            latency._sum.inc(now[SUM] - before[SUM])
            for bucket, observed, folded in zip(latency._buckets, now, before, strict=False):
                if observed != folded:
                    bucket.inc(observed - folded)
            self._folded[key] = now

    def _series_of(self, face: str, route: str, method: str, status: int) -> tuple[Any, Any]:
        key = (face, route, method, status)
        series = self._series.get(key)
        if series is None:
            # Looked up once per label set: labels() validates and locks.
            series = self._series[key] = (
                self.requests.labels(face, route, method, status),
                self.latency.labels(face, route),
            )
        return series

    def cache_lookup(self, kind: str, result: str) -> None:
        self.cache.labels(kind, result).inc()

    def upstream_request(self, source: str, error: str | None) -> None:
        self.upstream.labels(source).inc()
        if error is not None:
            self.upstream_errors.labels(source, error).inc()

    def budget_wait(self, source: str, seconds: float) -> None:
        self.budget_waits.labels(source).inc()
        self.budget_wait_seconds.labels(source).inc(seconds)

    def scan_progress(self, source: str, done: int, total: int, running: bool) -> None:
        self.scan_read.labels(source).set(done)
        self.scan_to_read.labels(source).set(total)
        self.scan_running.labels(source).set(1 if running else 0)

    def observe_follows(self, rounds: "Rounds") -> None:
        """Count the checks, the chapters they find and the notifications of ``rounds``."""
        rounds.on_check.append(self.follow_check)
        rounds.on_delivery.append(
            lambda _, ok: self.notifications.labels("sent" if ok else "failed").inc()
        )
        rounds.on_round.append(self.follow_figures)

    def follow_check(self, outcome: "Outcome") -> None:
        self.follow_checks.labels(outcome.source, outcome.state).inc()
        if outcome.new:
            self.follow_new.labels(outcome.source).inc(outcome.new)

    def follow_figures(self, follows: int, series: int, next_check: float | None) -> None:
        self.follows.set(follows)
        self.followed_series.set(series)
        self.next_check.set(next_check or 0)

    def observe_downloads(self, runner: "Runner") -> None:
        """Count what the download queue keeps and fails, and its figures each tick."""
        runner.on_kept.append(self.chapter_kept)
        runner.on_failed.append(
            lambda source, reason: self.download_failures.labels(source, reason).inc()
        )
        runner.on_figures.append(self.download_figures)

    def chapter_kept(self, source: str, size: int) -> None:
        self.kept_chapters.labels(source).inc()
        self.kept_bytes.labels(source).inc(size)

    def download_figures(
        self, states: dict[str, int], reasons: dict[str, int], paused: bool
    ) -> None:
        for state in ("queued", "running", "held", "failed"):
            self.download_queue.labels(state).set(states.get(state, 0))
        for reason in set(reasons) | set(self._failed_reasons):
            self.downloads_failed.labels(reason).set(reasons.get(reason, 0))
        self._failed_reasons = set(reasons) | set(self._failed_reasons)
        self.downloads_paused.set(1 if paused else 0)

    def exposition(self) -> bytes:
        """The figures in Prometheus' text format: every process's, summed, when shared."""
        self.add_answered()
        if MULTIPROCESS_DIR_ENV in os.environ:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return generate_latest(registry)
        return generate_latest(self.registry)
