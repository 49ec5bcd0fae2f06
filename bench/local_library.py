"""Benchmark of the local library source.

Generates a library (default 5,000 series / 100,000 chapters of tiny .cbz
archives), then prints:

* full scan time and chapters/s, and an incremental rescan with nothing changed, each
  next to a floor measured in the same run (opening every archive with zipfile and
  reading its ComicInfo.xml, in one thread, best of two; listing and stat-ing every
  file, best of three, in turns with three rescans), so the ratios hold up on a busy
  machine;
* the time from start-up to the first answered search on a library never scanned
  before (the first scan goes on in the background);
* the parse time of a ComicInfo.xml listing 36,000 genres;
* search latency p50/p99 for text queries and for filtered browsing;
* page-serving requests/s through the source's page route, next to the same
  bytes served by Starlette's StaticFiles, on the same uvicorn server, same run.

Usage::

    python bench/local_library.py                       # full size
    python bench/local_library.py --dir /tmp/lib --only rescan,search   # some parts, index kept
    python bench/local_library.py --series 200 --chapters 2000 --requests 2000   # quick run
"""

import argparse
import asyncio
import contextlib
import io
import os
import random
import resource
import shutil
import socket
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toshokan.models import SearchRequest
    from toshokan.sources.local.scanner import Scanner

WORDS = [
    "star",
    "moon",
    "river",
    "iron",
    "garden",
    "lantern",
    "sea",
    "clock",
    "paper",
    "crane",
    "storm",
    "blade",
    "shadow",
    "crimson",
    "silver",
    "dragon",
    "spirit",
    "ocean",
    "mountain",
    "winter",
    "summer",
    "forest",
    "city",
    "dream",
    "ghost",
    "knight",
    "witch",
    "tower",
    "glass",
    "thunder",
    "echo",
]
GENRES = [
    "Action",
    "Adventure",
    "Comedy",
    "Drama",
    "Fantasy",
    "Horror",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Slice of Life",
    "Sports",
    "Thriller",
]
TAGS = [
    "Space",
    "Robots",
    "School Life",
    "Magic",
    "Time Travel",
    "Music",
    "Cooking",
    "Found Family",
]
RATINGS = ["Everyone", "Teen", "Mature 17+", "Adults Only 18+"]
LANGUAGES = ["en", "en", "en", "es", "fr", "ja"]


def tiny_jpeg(seed: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (seed % 256, 80, 160)).save(buffer, "JPEG", quality=60)
    return buffer.getvalue()


def generate(root: Path, series: int, chapters: int) -> float:
    """Write the library; returns seconds taken."""
    started = time.perf_counter()
    rng = random.Random(42)
    pages = [tiny_jpeg(n) for n in range(2)]
    per_series = max(1, chapters // series)
    extra = chapters - per_series * series
    for s in range(series):
        title = " ".join(rng.sample(WORDS, 2)).title() + f" {s}"
        folder = root / title
        folder.mkdir(parents=True, exist_ok=True)
        genres = ", ".join(rng.sample(GENRES, 2))
        tags = ", ".join(rng.sample(TAGS, 2))
        writer = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}"
        year = rng.randint(1980, 2024)
        rating = rng.choice(RATINGS)
        language = rng.choice(LANGUAGES)
        count = per_series + (1 if s < extra else 0)
        for c in range(1, count + 1):
            info = (
                f"<ComicInfo><Series>{title}</Series><Number>{c}</Number><Writer>{writer}</Writer>"
                f"<Genre>{genres}</Genre><Tags>{tags}</Tags><Year>{year}</Year>"
                f"<AgeRating>{rating}</AgeRating><LanguageISO>{language}</LanguageISO>"
                f"<ScanInformation>Bench Scans</ScanInformation></ComicInfo>"
            ).encode()
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
                for n, data in enumerate(pages, 1):
                    archive.writestr(f"{n:03d}.jpg", data)
                archive.writestr("ComicInfo.xml", info)
            (folder / f"{title} Ch.{c:04d} [Bench Scans].cbz").write_bytes(buffer.getvalue())
    return time.perf_counter() - started


def floor_read(root: Path) -> tuple[int, float]:
    """Chapters/s of the least any scan does: open each archive, read its ComicInfo.xml."""
    started = time.perf_counter()
    count = 0
    for folder in root.iterdir():
        for path in folder.iterdir():
            with zipfile.ZipFile(path) as archive:
                archive.read("ComicInfo.xml")
            count += 1
    return count, count / (time.perf_counter() - started)


def floor_walk(root: Path) -> tuple[float, float]:
    """Seconds (wall, CPU) to list and stat every file: the least a rescan that misses
    nothing does."""
    started, started_cpu = time.perf_counter(), time.process_time()
    for folder in os.scandir(root):
        for entry in os.scandir(folder.path):
            entry.stat()
    return time.perf_counter() - started, time.process_time() - started_cpu


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def bench_search(root: Path, index_path: Path, queries: int) -> None:
    from toshokan.models import SearchRequest
    from toshokan.sdk import HostServices, RequestContext
    from toshokan.sources.local import LocalLibrary, LocalSettings

    services = HostServices(
        user_agent="bench",
        data_dir=index_path.parent,
        secret=b"x" * 32,
        public_url="http://bench",
    )
    source = LocalLibrary(
        "local", LocalSettings(root=root, index_path=index_path, watch=False), services
    )
    await source.startup()
    ctx = RequestContext(base_url="http://bench")
    rng = random.Random(7)
    tags = [t.slug for t in source.configuration().search.tags]

    cpu: dict[str, list[float]] = {"text": [], "browse": []}
    asked: dict[str, list[SearchRequest]] = {"text": [], "browse": []}

    async def timed(request: SearchRequest, kind: str = "text") -> float:
        asked[kind].append(request)
        started, started_cpu = time.perf_counter(), time.process_time()
        await source.search(request, ctx)
        cpu[kind].append((time.process_time() - started_cpu) * 1000)
        return (time.perf_counter() - started) * 1000

    text = []
    for _ in range(queries):
        query = rng.choice(
            [rng.choice(WORDS), " ".join(rng.sample(WORDS, 2)), rng.choice(WORDS)[:3]]
        )
        sort = rng.choice(["relevance", "title", "latest"])
        text.append(await timed(SearchRequest(query=query, page=1, sort=sort)))
    browse = []
    for _ in range(queries):
        filters: dict[str, object] = rng.choice(
            [
                {"genre": [rng.choice(GENRES).lower().replace(" ", "-")]},
                {"includeTag": rng.sample(tags, 2)},
                {"excludeTag": [rng.choice(tags)], "contentRating": ["Safe"]},
                {"year": rng.randint(1980, 2024)},
                {"minChapters": 20, "translatedLanguage": ["es"]},
                {"author": rng.choice(WORDS)},
                {},
            ]
        )
        sort = rng.choice(["title", "latest", "updatedAt", "createdAt", "chapters", "year"])
        page = rng.choice([1, 1, 2, 5, 20])
        text_free = SearchRequest.model_validate(
            {
                "page": page,
                "sort": sort,
                "direction": rng.choice(["asc", "desc"]),
                "filters": filters,
            }
        )
        browse.append(await timed(text_free, "browse"))
    await source.shutdown()
    print(
        f"search, text queries ({queries}):      p50 {percentile(text, 0.5):7.2f} ms   "
        f"p99 {percentile(text, 0.99):7.2f} ms"
    )
    print(
        f"search, filtered browsing ({queries}): p50 {percentile(browse, 0.5):7.2f} ms   "
        f"p99 {percentile(browse, 0.99):7.2f} ms"
    )
    print(
        f"  CPU per query (every thread): text p50 {percentile(cpu['text'], 0.5):.2f} ms, "
        f"p99 {percentile(cpu['text'], 0.99):.2f} ms; filtered p50 "
        f"{percentile(cpu['browse'], 0.5):.2f} ms, p99 {percentile(cpu['browse'], 0.99):.2f} ms"
    )
    alone = {kind: query_alone(index_path, requests) for kind, requests in asked.items()}
    print(
        f"  the query alone (CPU, each request's median of 5 runs in one thread): text p50 "
        f"{percentile(alone['text'], 0.5):.2f} ms, p99 {percentile(alone['text'], 0.99):.2f} ms; "
        f"filtered p50 {percentile(alone['browse'], 0.5):.2f} ms, "
        f"p99 {percentile(alone['browse'], 0.99):.2f} ms"
    )


def query_alone(index_path: Path, requests: "list[SearchRequest]") -> list[float]:
    """Each request's SQL on the index, no thread hop nor answer around it: what the query
    itself costs, steadier than one run of each on a shared machine."""
    from toshokan.sources.local.index import Index
    from toshokan.sources.local.index import search as searching

    index = Index(index_path)
    costs = []
    for request in requests:
        runs = []
        for _ in range(5):
            started = time.process_time()
            searching.run(index.reader(), request)
            runs.append((time.process_time() - started) * 1000)
        costs.append(statistics.median(runs))
    index.close()
    return costs


async def bench_first_answer(root: Path, work: Path) -> None:
    """Start-up to the first answered search, with an index that does not exist yet."""
    from toshokan.models import SearchRequest
    from toshokan.sdk import HostServices, RequestContext
    from toshokan.sources.local import LocalLibrary, LocalSettings

    index_path = work / "first-answer.sqlite3"
    index_path.unlink(missing_ok=True)
    services = HostServices(
        user_agent="bench", data_dir=work, secret=b"x" * 32, public_url="http://bench"
    )
    source = LocalLibrary(
        "local", LocalSettings(root=root, index_path=index_path, watch=False), services
    )
    started = time.perf_counter()
    await source.startup()
    response = await source.search(
        SearchRequest(page=1, sort="title"), RequestContext(base_url="http://bench")
    )
    answered = time.perf_counter() - started
    print(
        f"never-scanned library, start to first answered search: {answered:.2f} s "
        f"({len(response.results)} results, {source.snapshot.chapters} chapters indexed so far)"
    )
    while not response.results and time.perf_counter() - started < 60:
        await asyncio.sleep(0.05)
        response = await source.search(
            SearchRequest(page=1, sort="title"), RequestContext(base_url="http://bench")
        )
    print(f"  first series listed at {time.perf_counter() - started:.2f} s")
    await source.shutdown()


def bench_comicinfo() -> None:
    from toshokan.sources.local.comicinfo import parse_comicinfo

    genres = ",".join(f"Genre {n}" for n in range(36_000))
    data = f"<ComicInfo><Genre>{genres}</Genre></ComicInfo>".encode()
    started = time.perf_counter()
    parse_comicinfo(data, max_bytes=len(data))
    print(f"ComicInfo.xml with 36,000 genres parsed in {time.perf_counter() - started:.3f} s")


def serve(root: Path, index_path: Path, static_dir: Path, port: int) -> None:
    """Run in a child process: one uvicorn server with the page route and StaticFiles."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from toshokan.errors import HostError
    from toshokan.sdk import HostServices
    from toshokan.sources.local import LocalLibrary, LocalSettings

    services = HostServices(
        user_agent="bench",
        data_dir=index_path.parent,
        secret=b"x" * 32,
        public_url="http://bench",
    )
    source = LocalLibrary(
        "local",
        LocalSettings(root=root, index_path=index_path, watch=False, scan_on_start=False),
        services,
    )

    async def on_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HostError)
        return JSONResponse({"error": {"code": error.code, "message": error.message}}, error.status)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await source.startup()
        yield
        await source.shutdown()

    app = Starlette(
        routes=[
            Mount("/_/local", routes=list(source.routes())),
            Mount("/static", app=StaticFiles(directory=static_dir)),
        ],
        lifespan=lifespan,
    )
    app.add_exception_handler(HostError, on_error)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


async def load(urls: list[str], total: int, concurrency: int) -> float:
    """Requests/s over keep-alive connections, with a minimal HTTP/1.1 client.

    A hand-rolled client keeps the load generator from being the bottleneck
    (httpx tops out well below what uvicorn can serve), so the figures compare
    the two server-side paths rather than client overhead.
    """
    from urllib.parse import urlsplit

    parts = [urlsplit(url) for url in urls]
    host, port = parts[0].hostname or "127.0.0.1", parts[0].port or 80
    requests = [
        f"GET {p.path}{'?' + p.query if p.query else ''} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        for p in parts
    ]
    issued = 0
    failures = 0

    async def worker(offset: int) -> None:
        nonlocal issued, failures
        reader, writer = await asyncio.open_connection(host, port)
        n = offset
        try:
            while issued < total:
                issued += 1
                writer.write(requests[n % len(requests)])
                n += concurrency
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                if status != 200:
                    failures += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    if failures:
        print(f"  ({failures} failed requests)")
    return total / elapsed


async def bench_pages(root: Path, index_path: Path, requests: int, concurrency: int) -> None:
    import httpx

    from toshokan.sources.local.index import Index

    index = Index(index_path)
    rows = (
        index.reader()
        .execute(
            "SELECT s.slug AS manga, c.slug AS chapter, c.relpath FROM chapters c "
            "JOIN series s ON s.id = c.series_id ORDER BY c.id LIMIT 2000"
        )
        .fetchall()
    )
    index.close()
    first = rows[0]
    with zipfile.ZipFile(root / first["relpath"]) as archive:
        data = archive.read("001.jpg")
    static_dir = Path(tempfile.mkdtemp(prefix="toshokan-static-"))
    (static_dir / "page.jpg").write_bytes(data)
    with socket.socket() as probe:  # a free port, never a fixed one another program may hold
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", str(root), str(index_path), str(static_dir), str(port)
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            for _ in range(600):
                if child.returncode is not None:
                    raise SystemExit("the benchmark server failed to start")
                try:
                    await client.get(f"{base}/static/page.jpg")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
        one = f"{base}/_/local/pages/{first['manga']}/{first['chapter']}/1"
        many = [f"{base}/_/local/pages/{r['manga']}/{r['chapter']}/1" for r in rows]
        static = f"{base}/static/page.jpg"
        await load([one, static], 200, 4)  # warm up
        # Interleaved rounds, best of three, so warm-up and noise hit both sides alike; the
        # server's CPU a request too (the lowest of the three), steadier when others run.
        rates = {"static": 0.0, "one": 0.0, "many": 0.0}
        cpu = {"static": float("inf"), "one": float("inf"), "many": float("inf")}
        for _ in range(3):
            for side, urls in (("static", [static]), ("one", [one]), ("many", many)):
                started = _process_cpu(child.pid)
                rates[side] = max(rates[side], await load(urls, requests, concurrency))
                cpu[side] = min(cpu[side], (_process_cpu(child.pid) - started) / requests * 1e6)
        static_rate, route_rate, spread_rate = rates["static"], rates["one"], rates["many"]
    finally:
        child.terminate()
        await child.wait()
        shutil.rmtree(static_dir, ignore_errors=True)
    print(
        f"pages ({requests} requests x 3 rounds, best; concurrency {concurrency}; "
        f"{len(data)}-byte image; one uvicorn worker):"
    )
    print(f"  StaticFiles, same bytes:            {static_rate:8.0f} req/s")
    print(
        f"  page route, one page:               {route_rate:8.0f} req/s   "
        f"({route_rate / static_rate:.2f}x static)"
    )
    print(
        f"  page route, {len(many)} different chapters: {spread_rate:8.0f} req/s   "
        f"({spread_rate / static_rate:.2f}x static)"
    )
    print(
        f"  server CPU a request: StaticFiles {cpu['static']:.0f} us, one page "
        f"{cpu['one']:.0f} us, {len(many)} chapters {cpu['many']:.0f} us"
    )


def _process_cpu(pid: int) -> float:
    """Seconds of CPU process ``pid`` has used (Linux's /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PARTS = ("scan", "rescan", "comicinfo", "first-answer", "search", "pages")


def bench_scan(root: Path, scanner: "Scanner") -> None:
    """A full scan into an empty index, next to the one-thread reading floor."""
    # Best of two: the first read may find the files out of the page cache (another
    # program read its own since), and the scan after it always finds them in.
    floor_cpu = time.process_time()
    opened, first_rate = floor_read(root)
    floor_rate = max(first_rate, floor_read(root)[1])
    floor_cpu = (time.process_time() - floor_cpu) / 2
    started = time.perf_counter()
    main_cpu, children_cpu = time.process_time(), _children_cpu()
    report = scanner.scan()
    full = time.perf_counter() - started
    main_cpu = time.process_time() - main_cpu
    children_cpu = _children_cpu() - children_cpu
    rate = report.chapters / full
    print(
        f"full scan: {report.chapters} chapters, {report.series} series in {full:.1f} s "
        f"({rate:,.0f} chapters/s; {scanner.workers} reading processes); "
        f"skipped {len(report.skipped)}"
    )
    per_chapter = 1e6 / max(1, report.chapters)
    print(
        f"  CPU a chapter: {(main_cpu + children_cpu) * per_chapter:.0f} us "
        f"({main_cpu * per_chapter:.0f} us in the scan's process, "
        f"{children_cpu * per_chapter:.0f} us in the reading processes)"
    )
    print(
        f"  floor, zipfile open + ComicInfo.xml read of {opened} archives in one thread: "
        f"{floor_rate:,.0f} chapters/s, CPU {floor_cpu * 1e6 / max(1, opened):.0f} us a chapter  "
        f"(scan = {rate / floor_rate:.2f}x floor)"
    )


def _children_cpu() -> float:
    """CPU seconds of the child processes ended so far (the scan's reading processes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_rescan(root: Path, scanner: "Scanner") -> None:
    """Rescans that find nothing changed, next to listing and stat-ing every file."""
    # Best of three of each, taken in turns, so a busy moment of the machine's other
    # work does not land on one side only.
    walk_floor = rescan = walk_floor_cpu = rescan_cpu = float("inf")
    read = 0
    for _ in range(3):
        wall, cpu = floor_walk(root)
        walk_floor, walk_floor_cpu = min(walk_floor, wall), min(walk_floor_cpu, cpu)
        started, started_cpu = time.perf_counter(), time.process_time()
        read = scanner.scan().read
        rescan = min(rescan, time.perf_counter() - started)
        rescan_cpu = min(rescan_cpu, time.process_time() - started_cpu)
    print(
        f"incremental rescan, nothing changed: {rescan:.2f} s ({read} chapters re-read; best of 3)"
    )
    print(
        f"  floor, scandir + stat of every file: {walk_floor:.2f} s  "
        f"(rescan = {rescan / walk_floor:.2f}x floor; best of 3)"
    )
    print(
        f"  CPU, every thread: rescan {rescan_cpu:.3f} s, floor {walk_floor_cpu:.3f} s  "
        f"(rescan = {rescan_cpu / walk_floor_cpu:.2f}x floor; best of 3)"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--series", type=int, default=5000)
    parser.add_argument("--chapters", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="chapter-reading processes for the full scan (default: one per CPU, at most 8)",
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="work folder (default: a temp folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated library")
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {','.join(PARTS)} (default: all); without "
        "scan, an index left in --dir by an earlier run is brought up to date and used",
    )
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if not parts <= set(PARTS):
        parser.error(f"--only takes {','.join(PARTS)}")

    from toshokan.sources.local.index import Index
    from toshokan.sources.local.scanner import Scanner

    work = args.dir or Path(tempfile.mkdtemp(prefix="toshokan-bench-"))
    root = work / "library"
    index_path = work / "index.sqlite3"
    try:
        if not root.exists():
            seconds = generate(root, args.series, args.chapters)
            print(f"generated {args.series} series / {args.chapters} chapters in {seconds:.1f} s")
        if "scan" in parts:
            index_path.unlink(missing_ok=True)
        scanner = Scanner(root, Index(index_path), workers=args.workers)
        if "scan" in parts:
            bench_scan(root, scanner)
        else:
            scanner.scan()  # the index left by an earlier run, brought up to date (or made)
        if "rescan" in parts:
            bench_rescan(root, scanner)
        scanner.index.close()
        if "comicinfo" in parts:
            bench_comicinfo()
        if "first-answer" in parts:
            asyncio.run(bench_first_answer(root, work))
        if "search" in parts:
            asyncio.run(bench_search(root, index_path, args.queries))
        if "pages" in parts:
            asyncio.run(bench_pages(root, index_path, args.requests, args.concurrency))
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
