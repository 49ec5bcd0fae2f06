"""A small, realistic sample library, so a fresh host has something to show.

``toshokan demo DIR`` writes it, and ``toshokan serve`` writes it into the
default library folder when that does not exist yet. It covers what real
libraries contain: .cbz archives with ComicInfo.xml, a .cb7 archive, a folder
of images, a series.json, a cover image, a multi-group (and multi-language)
chapter, a oneshot directly in the root, decimal chapters named only by file
name. Pages are generated with Pillow and show series, chapter and page, so a
reader app visibly shows the right image.
"""

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

import py7zr
from PIL import Image, ImageDraw, ImageFont

from toshokan.sdk.names import format_number

BASE_DATE = datetime(2024, 1, 1, tzinfo=UTC)
PAGE_SIZE = (360, 540)


@dataclass
class _Archetype:
    title: str
    genres: list[str]
    tags: list[str]
    writer: str
    artist: str
    publisher: str
    rating: str
    group: str
    summary: str
    year: int
    colour: tuple[int, int, int]
    style: str  # "full", "groups", "decimal", "oneshot", "cb7", "folder"
    extra: dict[str, str] = field(default_factory=dict)


ARCHETYPES = [
    _Archetype(
        "Hoshi no Tabibito",
        ["Adventure", "Fantasy"],
        ["Space", "Found Family"],
        "Aoi Minato",
        "Ren Kusakabe",
        "Starfall Press",
        "Everyone",
        "Starlight Scans",
        "A courier crosses a sea of stars carrying letters nobody else will deliver.",
        2019,
        (40, 60, 120),
        "full",
    ),
    _Archetype(
        "Iron Garden",
        ["Action", "Drama"],
        ["Mecha", "Post-Apocalyptic"],
        "Mara Voss",
        "Mara Voss",
        "Rustbelt Comics",
        "Mature 17+",
        "Gearworks",
        "In the ruins of a greenhouse city, a pilot tends the last garden.",
        2021,
        (120, 50, 40),
        "groups",
    ),
    _Archetype(
        "Half Moon Diaries",
        [],
        [],
        "",
        "",
        "",
        "",
        "Lunar Team",
        "",
        2022,
        (70, 90, 70),
        "decimal",
    ),
    _Archetype(
        "The Quiet Lantern",
        ["Slice of Life"],
        ["Romance"],
        "Hana Sato",
        "Hana Sato",
        "Lantern Works",
        "Teen",
        "Lantern Works",
        "One night, one lantern, one confession.",
        2020,
        (150, 120, 40),
        "oneshot",
    ),
    _Archetype(
        "Clockwork Sea",
        ["Mystery"],
        ["Steampunk"],
        "Elias Brand",
        "Ines Moreau",
        "Brass Tide",
        "Teen",
        "Tidewatch",
        "A drowned city still keeps time.",
        2015,
        (30, 100, 110),
        "cb7",
    ),
    _Archetype(
        "Paper Cranes",
        ["Comedy"],
        ["School Life"],
        "Yuki Tanaka",
        "Kenji Mori",
        "Origami House",
        "Everyone",
        "Fold Scans",
        "A club of two folds a thousand cranes, badly.",
        2023,
        (110, 70, 130),
        "folder",
    ),
]


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _page(title: str, chapter: str, page: int, colour: tuple[int, int, int]) -> bytes:
    image = Image.new("RGB", PAGE_SIZE, colour)
    draw = ImageDraw.Draw(image)
    draw.rectangle((12, 12, PAGE_SIZE[0] - 12, PAGE_SIZE[1] - 12), outline=(240, 240, 240), width=3)
    draw.text((28, 40), title, fill=(255, 255, 255), font=_font(24))
    draw.text((28, 90), chapter, fill=(230, 230, 230), font=_font(20))
    draw.text((28, PAGE_SIZE[1] - 90), f"Page {page}", fill=(255, 255, 255), font=_font(40))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=70)
    return buffer.getvalue()


def _comicinfo(
    arch: _Archetype, title: str, number: float, when: datetime, language: str, group: str
) -> bytes:
    fields = {
        "Title": f"Chapter {format_number(number)}" if number else "Oneshot",
        "Series": title,
        "Number": format_number(number),
        "Summary": arch.summary,
        "Year": str(when.year),
        "Month": str(when.month),
        "Day": str(when.day),
        "Writer": arch.writer,
        "Penciller": arch.artist,
        "Publisher": arch.publisher,
        "Genre": ", ".join(arch.genres),
        "Tags": ", ".join(arch.tags),
        "LanguageISO": language,
        "ScanInformation": group,
        "AgeRating": arch.rating,
        "Web": f"https://example.org/{title.lower().replace(' ', '-')}",
    }
    body = "".join(f"  <{k}>{escape(v)}</{k}>\n" for k, v in fields.items() if v)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<ComicInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f"{body}</ComicInfo>\n"
    ).encode()


def _write_cbz(path: Path, pages: list[bytes], comicinfo: bytes | None) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for n, data in enumerate(pages, 1):
            archive.writestr(f"{n:03d}.jpg", data)
        if comicinfo:
            archive.writestr("ComicInfo.xml", comicinfo)


def _write_cb7(path: Path, pages: list[bytes], comicinfo: bytes | None) -> None:
    with py7zr.SevenZipFile(path, "w") as archive:
        for n, data in enumerate(pages, 1):
            archive.writestr(data, f"{n:03d}.jpg")
        if comicinfo:
            archive.writestr(comicinfo, "ComicInfo.xml")


def _touch(path: Path, when: datetime) -> None:
    stamp = when.timestamp()
    os.utime(path, (stamp, stamp))


def write_demo_library(root: Path, series: int = 6, chapters: int = 4, pages: int = 3) -> None:
    """Write a sample library of ``series`` series with ``chapters`` chapters of ``pages`` pages.

    Deterministic: the same arguments give the same files (and mtimes).
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    chapters = max(1, chapters)
    pages = max(1, pages)
    for index in range(max(0, series)):
        arch = ARCHETYPES[index % len(ARCHETYPES)]
        title = (
            arch.title
            if index < len(ARCHETYPES)
            else f"{arch.title} {index // len(ARCHETYPES) + 1}"
        )
        start = BASE_DATE + timedelta(days=17 * index)
        _write_series(root, arch, title, start, chapters, pages)


def _write_series(
    root: Path, arch: _Archetype, title: str, start: datetime, chapters: int, pages: int
) -> None:
    def images(label: str) -> list[bytes]:
        return [_page(title, label, p, arch.colour) for p in range(1, pages + 1)]

    if arch.style == "oneshot":
        path = root / f"{title} - Oneshot [{arch.group}].cbz"
        _write_cbz(path, images("Oneshot"), _comicinfo(arch, title, 0, start, "en", arch.group))
        _touch(path, start)
        return

    folder = root / title
    folder.mkdir(exist_ok=True)
    latest = start
    for n in range(1, chapters + 1):
        when = start + timedelta(days=7 * n)
        latest = max(latest, when)
        label = f"Chapter {n}"
        info = _comicinfo(arch, title, n, when, "en", arch.group)
        if arch.style == "decimal":
            number = 1 + (n - 1) / 2  # 1, 1.5, 2, 2.5...
            label = f"Chapter {format_number(number)}"
            whole, _, half = f"{number:05.1f}".partition(".")
            name = f"Vol.01 Ch.{int(whole):03d}{'.5' if half == '5' else ''} - Moon {n} [{arch.group}].cbz"
            path = folder / name
            _write_cbz(path, images(label), None)
        elif arch.style == "folder":
            path = folder / f"Chapter {n:02d}"
            path.mkdir(exist_ok=True)
            for p, data in enumerate(images(label), 1):
                (path / f"{p}.jpg").write_bytes(data)
                _touch(path / f"{p}.jpg", when)
            (path / "ComicInfo.xml").write_bytes(info)
            _touch(path / "ComicInfo.xml", when)
        elif arch.style == "cb7" and n == 1:
            path = folder / f"{title} Ch.{n:03d} [{arch.group}].cb7"
            _write_cb7(path, images(label), info)
        else:
            path = folder / f"{title} Ch.{n:03d} [{arch.group}].cbz"
            _write_cbz(path, images(label), info)
        _touch(path, when)
        if arch.style == "groups" and n == 1:
            other = folder / f"{title} Ch.{n:03d} [Night Shift].cbz"
            _write_cbz(
                other,
                images(label + " (Night Shift)"),
                _comicinfo(arch, title, n, when, "en", "Night Shift"),
            )
            _touch(other, when + timedelta(hours=5))
            spanish = folder / f"{title} Ch.{n:03d} [Jardin Scans] (es).cbz"
            _write_cbz(
                spanish,
                images(label + " (ES)"),
                _comicinfo(arch, title, n, when, "es", "Jardin Scans"),
            )
            _touch(spanish, when + timedelta(hours=9))

    if arch.style in ("full", "cb7"):
        cover = folder / "cover.jpg"
        cover.write_bytes(_page(title, "Cover", 0, arch.colour))
        _touch(cover, start)
        status = "Continuing" if arch.style == "full" else "Ended"
        document = {
            "metadata": {
                "type": "comicSeries",
                "publisher": arch.publisher,
                "imprint": None,
                "name": title,
                "comicid": 100000 + len(title),
                "year": arch.year,
                "description_text": arch.summary,
                "description_formatted": None,
                "volume": 1,
                "booktype": "Print",
                "age_rating": None,
                "collects": None,
                "ComicImage": None,
                "total_issues": chapters,
                "publication_run": f"{arch.year} - Present",
                "status": status,
            }
        }
        path = folder / "series.json"
        path.write_text(json.dumps(document, indent=2))
        _touch(path, start)
    _touch(folder, latest)
