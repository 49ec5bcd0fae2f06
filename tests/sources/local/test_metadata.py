"""ComicInfo.xml and series.json parsing, and which source of metadata wins."""

from pathlib import Path

import pytest

from tests.helpers.local_sources import SourceFactory
from toshokan.sdk import RequestContext
from toshokan.sources.local.comicinfo import (
    MAX_LIST_ITEMS,
    MetadataError,
    _parsed_children,
    _plain_children,
    parse_comicinfo,
)
from toshokan.sources.local.seriesjson import SeriesJsonError, parse_series_json

from .helpers import cbz, comicinfo, jpeg

CTX = RequestContext(base_url="http://testserver")
pytestmark = pytest.mark.anyio


def test_comicinfo_fields() -> None:
    info = parse_comicinfo(
        comicinfo(
            Series="Star",
            Number="11.5",
            Volume="2",
            Title="Arrival",
            Summary="Long text",
            Writer="A. Writer, B. Writer",
            Penciller="P. Artist",
            Inker="P. Artist",
            Genre="Action, Drama",
            Tags="Space;Robots",
            LanguageISO="pt_BR",
            Year="2020",
            Month="5",
            Day="31",
            AgeRating="Mature 17+",
            Publisher="Pub",
            ScanInformation="Scans",
            Web="https://example.org/a https://example.org/b",
        )
    )
    assert info.series == "Star" and info.number == 11.5 and info.volume == 2
    assert info.writers == ["A. Writer", "B. Writer"] and info.artists == ["P. Artist"]
    assert info.genres == ["Action", "Drama"] and info.tags == ["Space", "Robots"]
    assert info.language == "pt-BR"
    assert info.date is not None and (info.date.year, info.date.month, info.date.day) == (
        2020,
        5,
        31,
    )
    assert info.scanlator == "Scans" and info.web == "https://example.org/a"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
            b"<ComicInfo><Title>&lol2;</Title></ComicInfo>",
            "hostile",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            b"<ComicInfo><Title>&e;</Title></ComicInfo>",
            "hostile",
        ),
        (b"<ComicInfo><Title>unclosed", "malformed"),
        (b"<NotComicInfo/>", "root"),
        (b"<ComicInfo>" + b"<Notes>x</Notes>" * 100_000 + b"</ComicInfo>", "larger"),
    ],
)
def test_hostile_or_broken_comicinfo_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(MetadataError, match=reason):
        parse_comicinfo(data)


def test_huge_lists_are_capped_in_one_pass() -> None:
    genres = ",".join(f"Genre {n}" for n in range(36_000))
    data = f"<ComicInfo><Genre>{genres}</Genre><Tags>a;A; a ;b</Tags></ComicInfo>".encode()
    info = parse_comicinfo(data, max_bytes=len(data))
    assert info.genres == [f"Genre {n}" for n in range(MAX_LIST_ITEMS)]
    assert info.tags == ["a", "b"]


@pytest.mark.parametrize("year", ["1e400", "-1e400", "nan", "inf", "99999999999999999999"])
def test_absurd_numbers_are_ignored(year: str) -> None:
    info = parse_comicinfo(
        f"<ComicInfo><Year>{year}</Year><Number>{year}</Number></ComicInfo>".encode()
    )
    assert info.year is None and info.date is None and info.number is None


def test_absurd_day_keeps_the_month() -> None:
    info = parse_comicinfo(
        b"<ComicInfo><Year>2020</Year><Month>3</Month><Day>1e30</Day></ComicInfo>"
    )
    assert info.date is not None and (info.date.year, info.date.month) == (2020, 3)


def test_series_json() -> None:
    parsed = parse_series_json(
        b'{"metadata": {"name": "Star", "year": 2001, "status": "Ended", '
        b'"description_text": "About", "publisher": "P", "age_rating": null}}'
    )
    assert (parsed.name, parsed.year, parsed.status, parsed.description) == (
        "Star",
        2001,
        "Ended",
        "About",
    )
    with pytest.raises(SeriesJsonError):
        parse_series_json(b"[1, 2]")
    with pytest.raises(SeriesJsonError):
        parse_series_json(b"{not json")


async def test_precedence_series_json_then_comicinfo_then_folder(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    # series.json beats ComicInfo for title, synopsis, year, status, publisher.
    folder = root / "Folder Title (1999)"
    cbz(
        folder / "Ch.001.cbz",
        info=comicinfo(
            Series="CI Title",
            Summary="CI summary",
            Year="2005",
            Publisher="CI Pub",
            Writer="W",
            Genre="Drama",
        ),
    )
    cbz(folder / "Ch.002.cbz", info=comicinfo(Series="CI Title", Year="2006", Penciller="Art"))
    (folder / "series.json").write_text(
        '{"metadata": {"name": "JSON Title", "description_text": "JSON summary", "year": 2010,'
        ' "status": "Continuing", "publisher": "JSON Pub"}}'
    )
    # ComicInfo beats the folder name.
    cbz(root / "Other Folder (1990)" / "c1.cbz", info=comicinfo(Series="Other CI", Year="2001"))
    # Folder name when nothing else is known.
    cbz(root / "Bare Folder (1987) [Digital]" / "c1.cbz")
    source = await make_source(root)

    first = await source.manga("folder-title", CTX)
    assert first.title == "JSON Title"
    assert first.synopsis == "JSON summary"
    assert first.publication.value == "Ongoing"
    assert "CI Title" in first.alternativeTitles and "Folder Title" in first.alternativeTitles
    assert first.authors == ["W", "Art"]
    assert first.tags == ["drama"]
    other = await source.manga("other-folder", CTX)
    assert other.title == "Other CI"
    bare = await source.manga("bare-folder", CTX)
    assert bare.title == "Bare Folder"
    assert bare.synopsis == "No Description."
    assert bare.covers  # the first page stands in for a cover

    rows = (
        source._require_index()
        .reader()
        .execute("SELECT relpath, year, publisher FROM series ORDER BY relpath")
        .fetchall()
    )
    years = {row["relpath"]: (row["year"], row["publisher"]) for row in rows}
    assert years["Folder Title (1999)"] == (2010, "JSON Pub")
    assert years["Other Folder (1990)"] == (2001, None)
    assert years["Bare Folder (1987) [Digital]"] == (1987, None)


async def test_chapter_metadata_from_comicinfo_over_file_name(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    cbz(
        root / "S" / "Vol.01 Ch.003 - Name Title [Name Group].cbz",
        info=comicinfo(
            Number="4",
            Title="CI Title",
            ScanInformation="CI Group",
            LanguageISO="fr",
            Year="2021",
            Month="2",
            Day="3",
        ),
    )
    cbz(root / "S" / "Vol.01 Ch.002.5 - Name Only [Group B].cbz")
    source = await make_source(root)
    chapters = await source.chapters("s", CTX)
    by_number = {c.number: c for c in chapters}
    assert by_number[4].title == "CI Title" and by_number[4].scanlator == "CI Group"
    assert by_number[4].language == "fr" and by_number[4].date.year == 2021
    assert by_number[4].slug == "ch-4-ci-group-fr"
    assert by_number[2.5].title == "Name Only" and by_number[2.5].scanlator == "Group B"
    assert by_number[2.5].slug == "ch-2-5-group-b"


async def test_cover_file_preferred(tmp_path: Path, make_source: SourceFactory) -> None:
    root = tmp_path / "lib"
    cbz(root / "S" / "c1.cbz")
    (root / "S" / "cover.png").write_bytes(jpeg())
    source = await make_source(root)
    row = source._require_index().series_by_slug("s")
    assert row is not None and row["cover_relpath"] == "S/cover.png"


#: ComicInfo.xml files as tools write them (read without the XML parser's calls), and
#: files that only the parser reads right: an entity, a comment, a nested element, a
#: carriage return, another encoding, a repeated attribute, a declaration it refuses...
PLAIN_FILES = [
    b"<ComicInfo><Series>Crane</Series><Number>1</Number><Empty/></ComicInfo>",
    b'<?xml version="1.0" encoding="utf-8"?>\n<ComicInfo xmlns:xsd="http://www.w3.org/2001/'
    b'XMLSchema" xmlns:xsi="x">\n  <Series>Kaze \xc3\xa9t\xc3\xa9</Series>\n'
    b"  <Summary>  two\n lines  </Summary>\n  <Series>second</Series>\n</ComicInfo>\n",
    b"<?xml version='1.0' standalone='yes'?><ComicInfo ><Title >a > b \"q\"</Title ></ComicInfo >",
    b"\n <ComicInfo><Genre>\tA,\tB </Genre><Tags></Tags></ComicInfo>",
]
PARSER_FILES = [
    b"<ComicInfo><Summary>a &amp; b</Summary></ComicInfo>",
    b"<ComicInfo><!-- note --><Series>x</Series></ComicInfo>",
    b"<ComicInfo><Series>x<b>bold</b> y</Series></ComicInfo>",
    b"<ComicInfo><Summary>one\r\ntwo</Summary></ComicInfo>",
    b"<ComicInfo><Series><![CDATA[x]]></Series></ComicInfo>",
    b"<ComicInfo><Series>x]]>y</Series></ComicInfo>",
    b'<?xml version="1.0" encoding="latin-1"?><ComicInfo><Series>\xe9</Series></ComicInfo>',
    b"<ComicInfo><Series>\xe9</Series></ComicInfo>",
    b'<ComicInfo a="1" a="2"><Series>x</Series></ComicInfo>',
    b'<?xml version="9.9"?><ComicInfo><Series>x</Series></ComicInfo>',
    b' <?xml version="1.0"?><ComicInfo><Series>x</Series></ComicInfo>',
    b"<ComicInfo><Series>a\x01b</Series></ComicInfo>",
    b"<ComicInfo><Series>x</Series></ComicInfo><Other/>",
    b"<ComicInfo><Series>x</Serie></ComicInfo>",
    b'<ComicInfo><Series lang="en">x</Series></ComicInfo>',
    b"<ComicInfo><ns:Series>x</ns:Series></ComicInfo>",
    b"<ComicInfo>loose text<Series>x</Series></ComicInfo>",
    b"\xef\xbb\xbf<ComicInfo><Series>x</Series></ComicInfo>",
    b"<ComicInfo/>",
    b"<Other><Series>x</Series></Other>",
]


@pytest.mark.parametrize("data", PLAIN_FILES + PARSER_FILES)
def test_plain_comicinfo_reads_as_the_xml_parser_reads_it(data: bytes) -> None:
    plain = _plain_children(data)
    assert (plain is not None) == (data in PLAIN_FILES)
    try:
        parsed = _parsed_children(data)
    except Exception:  # the parser refuses it: so must the plain reading
        assert plain is None
    else:
        assert plain is None or plain == parsed
