"""The client decoders against Komga-shaped answers: what they accept, and the first field they refuse."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from . import aidoku_source as aidoku
from . import komga_dtos, samples
from . import mihon_tracker as tracker
from .kotlinx_json import KFloat, KInt, KotlinxModel, KString, kotlin_double_string, to_float32
from .mihon_extension_models import (
    COMPLETED,
    PUBLISHING_FINISHED,
    BookDto,
    PageWrapperDto,
    SeriesDto,
    UnparseableDate,
    book_to_schapter,
    chapter_name,
    parse_date,
    parse_date_strict,
    parse_date_time,
    parse_date_time_strict,
    series_to_smanga,
    substitute,
)
from .okhttp_session import encode_query_component, http_url, okhttp_basic

BASE = "https://host.example/_/komga"


def millis(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp() * 1000)


def without(answer: dict[str, Any], dotted: str) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    node = answer
    for name in parents:
        node = node[name]
    del node[last]
    return answer


def replaced(answer: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    node = answer
    for name in parents:
        node = node[name]
    node[last] = value
    return answer


# --- kotlinx scalars ---------------------------------------------------------


class Scalars(KotlinxModel):
    count: KInt
    ratio: KFloat
    label: KString


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"count": 3, "ratio": 1.5, "label": "a"}', (3, 1.5, "a")),
        ('{"count": "3", "ratio": "2", "label": "a"}', (3, 2.0, "a")),
        ('{"count": 1e2, "ratio": 1, "label": "a", "unknown": [1]}', (100, 1.0, "a")),
    ],
)
def test_kotlinx_scalars_accept_what_the_lexer_accepts(body, expected):
    decoded = Scalars.decode(body)
    assert (decoded.count, decoded.ratio, decoded.label) == expected


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"count": 3.0, "ratio": 1, "label": "a"}', "count"),
        ('{"count": 2147483648, "ratio": 1, "label": "a"}', "count"),
        ('{"count": 3, "ratio": 1e39, "label": "a"}', "ratio"),
        ('{"count": 3, "ratio": "fast", "label": "a"}', "ratio"),
        ('{"count": 3, "ratio": 1, "label": 7}', "label"),
        ('{"count": 3, "ratio": 1, "label": null}', "label"),
        ('{"count": 3, "ratio": 1}', "label"),
    ],
)
def test_kotlinx_scalars_refuse_what_the_lexer_refuses(body, field):
    with pytest.raises(ValidationError) as failure:
        Scalars.decode(body)
    assert failure.value.errors()[0]["loc"] == (field,)


def test_a_float_is_32_bits_and_a_double_goes_out_as_kotlin_writes_it():
    decoded = Scalars.decode('{"count": 1, "ratio": 1.1, "label": ""}')
    assert decoded.ratio == 1.100000023841858
    assert kotlin_double_string(decoded.ratio) == "1.100000023841858"
    assert kotlin_double_string(3.0) == "3.0"
    assert kotlin_double_string(12345678.0) == "1.2345678E7"


# --- the extension's models ----------------------------------------------------


def test_a_komga_series_page_decodes_to_what_mihon_shows():
    page = PageWrapperDto[SeriesDto].decode(
        json.dumps(samples.page_of([samples.series()], total=45))
    )
    assert not page.last
    manga = series_to_smanga(page.content[0], BASE)
    assert manga.url == f"{BASE}/api/v1/series/0B6ZGKT1FQZ3M"
    assert manga.thumbnail_url == f"{manga.url}/thumbnail"
    assert manga.title == "Blame!"
    # ENDED with fewer books than totalBookCount: "publishing finished", not "completed"
    assert manga.status == PUBLISHING_FINISHED
    assert manga.genre == "Action, Sci-Fi, cyberpunk, dystopia"
    assert manga.description == "Killy wanders the City."
    assert (manga.author, manga.artist) == ("Tsutomu Nihei", "Tsutomu Nihei")


def test_series_status_blank_summary_and_no_writers():
    answer = samples.series()
    answer["metadata"]["totalBookCount"] = None
    answer["metadata"]["summary"] = "  "
    answer["booksMetadata"]["summary"] = "From the first book."
    answer["booksMetadata"]["authors"] = []
    manga = series_to_smanga(SeriesDto.decode(json.dumps(answer)), BASE)
    assert manga.status == COMPLETED
    assert manga.description == "From the first book."
    assert manga.author is None and manga.artist is None


@pytest.mark.parametrize(
    "missing",
    [
        "id",
        "libraryId",
        "fileLastModified",
        "booksCount",
        "metadata.status",
        "metadata.titleSort",
        "metadata.genresLock",
        "booksMetadata.summaryNumber",
        "booksMetadata.created",
    ],
)
def test_a_series_without_a_required_field_fails(missing):
    with pytest.raises(ValidationError) as failure:
        SeriesDto.decode(json.dumps(without(samples.series(), missing)))
    assert failure.value.errors()[0]["loc"] == tuple(missing.split("."))


@pytest.mark.parametrize(
    "optional",
    [
        "created",
        "lastModified",
        "metadata.created",
        "metadata.ageRating",
        "metadata.totalBookCount",
        "booksMetadata.releaseDate",
        "booksMetadata.authors",
        "booksMetadata.tags",
        "url",
        "deleted",
    ],
)
def test_a_series_without_a_nullable_or_defaulted_field_decodes(optional):
    SeriesDto.decode(json.dumps(without(samples.series(), optional)))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("booksCount", 3.5),
        ("booksCount", "three"),
        ("metadata.title", None),
        ("metadata.ageRating", 16.5),
        ("metadata.genres", "Action"),
        ("metadata.summaryLock", "yes"),
    ],
)
def test_a_series_with_a_wrong_type_fails(field, value):
    with pytest.raises(ValidationError):
        SeriesDto.decode(json.dumps(replaced(samples.series(), field, value)))


@pytest.mark.parametrize(
    "missing",
    [
        "number",
        "sizeBytes",
        "size",
        "media.pagesCount",
        "metadata.numberSort",
        "metadata.number",
        "metadata.authors",
        "fileLastModified",
    ],
)
def test_a_book_without_a_required_field_fails(missing):
    with pytest.raises(ValidationError):
        BookDto.decode(json.dumps(without(samples.book(), missing)))


def test_a_book_reads_media_defaults_and_float_numbers():
    answer = samples.book()
    del answer["media"]["mediaProfile"], answer["media"]["epubDivinaCompatible"]
    answer["metadata"]["numberSort"] = 12.5
    decoded = BookDto.decode(json.dumps(answer))
    assert (decoded.media.mediaProfile, decoded.media.epubDivinaCompatible) == ("DIVINA", False)
    assert decoded.metadata.numberSort == 12.5 and decoded.number == 1.0


def test_a_book_becomes_the_chapter_mihon_lists():
    chapter = book_to_schapter(
        BookDto.decode(json.dumps(samples.book())),
        BASE,
        1.0,
        "{number} - {title} ({size})",
        from_readlist=False,
    )
    assert chapter.url == f"{BASE}/api/v1/books/0B6ZGM2Q1V7RW"
    assert chapter.name == "1 - Net Sphere (23.2 MiB)"
    assert chapter.scanlator == "Scan Group"
    assert chapter.date_upload == millis(1997, 7, 23)


def test_the_chapter_date_falls_back_to_created_then_file_date():
    answer = samples.book()
    answer["metadata"]["releaseDate"] = None
    dated = book_to_schapter(BookDto.decode(json.dumps(answer)), BASE, 1.0, "{title}", False)
    assert dated.date_upload == millis(2024, 3, 1, 10, 15, 31)
    del answer["created"]
    undated = book_to_schapter(BookDto.decode(json.dumps(answer)), BASE, 1.0, "{title}", False)
    assert undated.date_upload == millis(2023, 12, 24, 18, 30)


def test_chapter_names_follow_the_template_and_read_lists_prefix_the_series():
    decoded = BookDto.decode(json.dumps(samples.book()))
    assert (
        chapter_name(decoded, "{number} - {title} ({size})", from_readlist=True)
        == "Blame! 1 - Net Sphere (23.2 MiB)"
    )
    assert (
        chapter_name(decoded, "${title} {seriesTitle} {unknown}", from_readlist=False)
        == "{title} Blame! {unknown}"
    )


def test_the_template_substitutes_values_again_and_a_loop_fails():
    assert substitute("{a}", {"a": "{b}", "b": "x"}) == "x"
    with pytest.raises(RuntimeError):
        substitute("{title}", {"title": "Chapter {title}"})


# --- dates -----------------------------------------------------------------------


def test_komga_dates_parse_as_the_extension_parses_them():
    assert parse_date_time("2024-03-01T10:15:30Z") == millis(2024, 3, 1, 10, 15, 30)
    assert parse_date_time("2024-03-01T10:15:30.123456") == millis(2024, 3, 1, 10, 15, 30)
    assert parse_date("1997-07-23") == millis(1997, 7, 23)
    assert parse_date("1997-07-23T05:00:00Z") == millis(1997, 7, 23)
    # SimpleDateFormat is lenient: month 13 is next January, day 0 the last of the month before
    assert parse_date("2024-13-01") == millis(2025, 1, 1)
    assert parse_date("2024-03-00") == millis(2024, 2, 29)


@pytest.mark.parametrize(
    "text", ["2024-03-01", "2024-03-01 10:15:30", "2024/03/01T10:15:30", "", "1 March 2024"]
)
def test_dates_the_extension_cannot_parse_show_as_none(text):
    with pytest.raises(UnparseableDate):
        parse_date_time_strict(text)
    assert parse_date_time(text) == 0


@pytest.mark.parametrize("text", ["23/07/1997", "July 23, 1997", "1997.07.23"])
def test_release_dates_the_extension_cannot_parse(text):
    with pytest.raises(UnparseableDate):
        parse_date_strict(text)
    assert parse_date(text) == 0


# --- requests ----------------------------------------------------------------------


def test_query_values_are_encoded_as_okhttp_encodes_them():
    assert encode_query_component("a,b c+d/é") == "a%2Cb%20c%2Bd%2F%C3%A9"
    url = http_url(
        f"{BASE}/api/v1", ["series"], [("search", ""), ("page", "0"), ("genre", "Sci-Fi,Action")]
    )
    assert url == f"{BASE}/api/v1/series?search=&page=0&genre=Sci-Fi%2CAction"


def test_basic_credentials_are_latin_1_as_okhttp_sends_them():
    assert okhttp_basic("reader", "pässword") == "Basic cmVhZGVyOnDkc3N3b3Jk"
    assert okhttp_basic("reader", "日本") == "Basic cmVhZGVyOj8/"


# --- Komga's own shapes ------------------------------------------------------------


def test_the_samples_are_what_komga_writes():
    komga_dtos.Page[komga_dtos.SeriesDto].model_validate_json(
        json.dumps(samples.page_of([samples.series()]))
    )
    komga_dtos.Page[komga_dtos.BookDto].model_validate_json(
        json.dumps(samples.page_of([samples.book()]))
    )
    komga_dtos.Page[komga_dtos.CollectionDto].model_validate_json(
        json.dumps(samples.page_of([samples.collection()]))
    )
    komga_dtos.ReadListDto.model_validate_json(json.dumps(samples.readlist()))
    komga_dtos.LibraryDto.model_validate_json(json.dumps(samples.library()))
    TypeAdapter(list[komga_dtos.PageDto]).validate_json(json.dumps(samples.pages()))
    komga_dtos.TachiyomiReadProgressV2Dto.model_validate_json(
        json.dumps(samples.tachiyomi_progress_v2())
    )


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-01T10:15:30.123Z",
        "2024-03-01T10:15:30",
        "2024-03-01T10:15:30+00:00",
        "2024-03-01 10:15:30Z",
        "2024-02-30T10:15:30Z",
    ],
)
def test_a_date_time_not_in_komgas_pattern_fails(text):
    with pytest.raises(ValidationError):
        komga_dtos.SeriesDto.model_validate_json(
            json.dumps(replaced(samples.series(), "created", text))
        )


@pytest.mark.parametrize("text", ["1997-07-23T00:00:00Z", "1997-7-23", "23/07/1997"])
def test_a_release_date_not_in_komgas_pattern_fails(text):
    with pytest.raises(ValidationError):
        komga_dtos.BookDto.model_validate_json(
            json.dumps(replaced(samples.book(), "metadata.releaseDate", text))
        )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda answer: without(answer, "metadata.ageRating"), "metadata.ageRating"),
        (lambda answer: replaced(answer, "metadata.status", "COMPLETED"), "metadata.status"),
        (
            lambda answer: replaced(answer, "metadata.readingDirection", "rtl"),
            "metadata.readingDirection",
        ),
        (lambda answer: replaced(answer, "booksCount", 3.0), "booksCount"),
        (lambda answer: replaced(answer, "booksCount", "3"), "booksCount"),
        (lambda answer: replaced(answer, "extra", 1), "extra"),
    ],
)
def test_komga_series_fields_are_all_there_and_typed(change, field):
    with pytest.raises(ValidationError) as failure:
        komga_dtos.SeriesDto.model_validate_json(json.dumps(change(samples.series())))
    assert failure.value.errors()[0]["loc"][: len(field.split("."))] == tuple(field.split("."))


def test_the_media_profile_follows_the_media_type():
    epub = samples.book()
    epub["media"]["mediaType"] = "application/epub+zip"
    with pytest.raises(ValidationError):
        komga_dtos.BookDto.model_validate_json(json.dumps(epub))
    epub["media"]["mediaProfile"] = "EPUB"
    komga_dtos.BookDto.model_validate_json(json.dumps(epub))


def test_tachiyomi_counts_must_add_up():
    progress = samples.tachiyomi_progress_v2() | {"booksCount": 4}
    with pytest.raises(ValidationError):
        komga_dtos.TachiyomiReadProgressV2Dto.model_validate_json(json.dumps(progress))


def test_komgas_error_body():
    komga_dtos.ErrorBody.model_validate_json(
        '{"timestamp": "2024-03-01T10:15:30.123+00:00", "status": 404, "error": "Not Found", "message": "404 NOT_FOUND", "path": "/api/v1/series/x"}'
    )
    with pytest.raises(ValidationError):
        komga_dtos.ErrorBody.model_validate_json(
            '{"error": {"code": "NOT_FOUND", "message": "gone"}}'
        )


# --- the tracker's models ---------------------------------------------------------


def test_the_tracker_reads_the_series_and_its_progress():
    series = tracker.SeriesDto.decode(json.dumps(samples.series()))
    assert (series.metadata.title, series.booksReadCount) == ("Blame!", 1)
    progress = tracker.ReadProgressV2Dto.decode(
        json.dumps(samples.tachiyomi_progress_v2() | {"maxNumberSort": 3.7})
    )
    assert progress.lastReadContinuousNumberSort == 1.0
    assert int(progress.maxNumberSort) == 3


@pytest.mark.parametrize("missing", ["booksReadCount", "booksUnreadCount", "booksInProgressCount"])
def test_the_tracker_needs_the_read_counts_the_extension_does_not(missing):
    answer = without(samples.series(), missing)
    SeriesDto.decode(json.dumps(answer))
    with pytest.raises(ValidationError):
        tracker.SeriesDto.decode(json.dumps(answer))


def test_the_tracker_sends_a_double_for_a_series_and_an_int_for_a_read_list():
    assert (
        tracker.progress_url(f"{BASE}/api/v1/series/S1")
        == f"{BASE}/api/v2/series/S1/read-progress/tachiyomi"
    )
    assert (
        tracker.progress_url(f"{BASE}/api/v1/readlists/R1")
        == f"{BASE}/api/v1/readlists/R1/read-progress/tachiyomi"
    )
    assert tracker.update_body(f"{BASE}/api/v1/series/S1", 3.0) == b'{"lastBookNumberSortRead":3.0}'
    assert (
        tracker.update_body(f"{BASE}/api/v1/series/S1", to_float32(1.1))
        == b'{"lastBookNumberSortRead":1.100000023841858}'
    )
    assert tracker.update_body(f"{BASE}/api/v1/readlists/R1", 2.0) == b'{"lastBookRead":2}'


# --- Aidoku's models -----------------------------------------------------------------


def test_aidoku_reads_komgas_series_and_books():
    series = aidoku.KomgaPageResponse[list[aidoku.KomgaSeries]].decode(
        json.dumps(samples.page_of([samples.series()]))
    )
    assert series.totalPages == 1 and series.content[0].metadata.status == "ENDED"
    book = aidoku.KomgaBook.decode(json.dumps(samples.book()))
    assert book.metadata.releaseDate == datetime(1997, 7, 23, tzinfo=UTC)
    assert book.metadata.created == datetime(2024, 3, 1, 10, 15, 31, tzinfo=UTC)
    assert book.readProgress is not None and book.readProgress.page == 3


@pytest.mark.parametrize(
    ("change", "accepted"),
    [
        (lambda answer: replaced(answer, "media.pagesCount", 5.0), True),
        (lambda answer: replaced(answer, "readProgress", None), True),
        (lambda answer: without(answer, "metadata.releaseDate"), True),
        (lambda answer: replaced(answer, "metadata.created", "2024-03-01T10:15:31.5Z"), True),
        (lambda answer: replaced(answer, "media.pagesCount", 5.5), False),
        (lambda answer: replaced(answer, "metadata.created", 1709288131), False),
        (lambda answer: without(answer, "metadata.created"), False),
        (lambda answer: replaced(answer, "metadata.number", 1), False),
        (lambda answer: replaced(answer, "media.epubDivinaCompatible", 0), False),
    ],
)
def test_aidoku_decodes_books_as_swift_does(change, accepted):
    text = json.dumps(change(samples.book()))
    if accepted:
        aidoku.KomgaBook.decode(text)
    else:
        with pytest.raises(ValidationError):
            aidoku.KomgaBook.decode(text)


def test_aidoku_shows_no_date_for_a_date_in_neither_pattern():
    assert aidoku.parse_aidoku_date("2024-03-01T10:15:31.5Z") is None
    assert aidoku.parse_aidoku_date("2024-03-01T10:15:31") is None
    assert aidoku.parse_aidoku_date("1997-07-23") == datetime(1997, 7, 23, tzinfo=UTC)


def test_aidoku_refuses_a_status_it_does_not_know():
    with pytest.raises(ValidationError):
        aidoku.KomgaSeries.decode(
            json.dumps(replaced(samples.series(), "metadata.status", "COMPLETED"))
        )


def test_aidoku_writes_floats_as_swift_does():
    assert aidoku.swift_float_json(3.0) == "3"
    assert aidoku.swift_float_json(1.1) == "1.1"
