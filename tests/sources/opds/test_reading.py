"""Slugs, links and feeds read from untrusted catalogues."""

import base64
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toshokan.sources.opds import atom, opds2
from toshokan.sources.opds.refs import MangaRef, Refs

ROOT = "https://books.example:8443/api/opds/{api_key}"


@given(
    path=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60),
    book=st.none() | st.text(min_size=1, max_size=40).filter(lambda t: "\n" not in t),
    title=st.text(max_size=80),
)
def test_manga_slugs_round_trip_and_never_carry_the_key(path, book, title):
    refs = Refs(ROOT.replace("{api_key}", "SeCrEtKey"), "SeCrEtKey")
    ref = MangaRef(feed=f"https://books.example:8443/api/opds/SeCrEtKey/{path}", book_id=book)
    slug = refs.manga_slug(title, ref)
    if "\n" in path or "\\" in path:
        assert slug is None  # never a slug that would not decode to the same place
        return
    assert slug is not None
    assert slug.replace("-", "").replace("_", "").isalnum() and slug == slug.lower()
    code = slug.rpartition("--")[2]
    assert b"SeCrEtKey" not in base64.b32decode(code.upper() + "=" * (-len(code) % 8))
    assert refs.manga_ref(slug) == ref


def test_links_to_other_servers_are_neither_encoded_nor_decoded():
    refs = Refs("https://books.example/opds", "")
    assert refs.encode("https://elsewhere.example/opds/1") is None
    assert refs.encode("https://books.example.evil/opds/1") is None
    for path in (b"//evil.example/opds", b"@evil.example/opds", b"relative/path"):
        forged = "x--" + base64.b32encode(path).decode().rstrip("=").lower()
        assert refs.manga_ref(forged) is None
    assert refs.manga_ref("plain-title") is None


def test_entity_expansion_is_refused():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><feed><title>&lol2;</title></feed>'
    )
    with pytest.raises(atom.NotXml):
        atom.parse_feed(bomb, "http://a.test/")


def test_a_feed_that_is_not_atom_is_refused():
    with pytest.raises(atom.NotXml):
        atom.parse_feed(b"<html><body>login</body></html>", "http://a.test/")
    with pytest.raises(opds2.NotOpds2):
        opds2.parse_feed({"error": "nope"}, "http://a.test/")


@pytest.mark.parametrize(
    ("href", "template"),
    [
        ("/search{?query}", "/search?query={searchTerms}"),
        ("/search?library=1{&query}", "/search?library=1&query={searchTerms}"),
        ("/search?q={query}", "/search?q={searchTerms}"),
        ("/search/{searchTerms}", "/search/{searchTerms}"),
        ("/search", None),
    ],
)
def test_opds2_search_templates(href, template):
    assert opds2.search_template(href) == template


def test_percent_encoded_stream_templates_are_read():
    page = (
        b'<feed xmlns="http://www.w3.org/2005/Atom" xmlns:pse="http://vaemendis.net/opds-pse/ns">'
        b"<entry><id>b1</id><title>Book</title>"
        b'<link rel="http://vaemendis.net/opds-pse/stream" pse:count="3" type="image/jpeg"'
        b' href="/pages/%7BpageNumber%7D?width=%7bmaxWidth%7d"/></entry></feed>'
    )
    stream = atom.parse_feed(page, "http://a.test/feed").entries[0].stream
    assert stream is not None and stream.count == 3
    assert stream.template == "http://a.test/pages/{pageNumber}?width={maxWidth}"


_ATOM_PIECES = st.sampled_from(
    [
        "<feed>", "</feed>", "<entry>", "</entry>", "<title>t</title>", "<id>i</id>",
        '<link rel="next" href="?p=2"/>', '<link rel="subsection" href="/s/1" type="application/atom+xml"/>',
        '<link rel="http://vaemendis.net/opds-pse/stream" href="/p/{pageNumber}" pse:count="x"/>',
        '<link rel="http://opds-spec.org/acquisition" type="application/zip"/>',
        "<updated>not a date</updated>", "<published>2024-13-45</published>", "&", "<", "]]>", "\x00",
    ]
)  # fmt: skip


@given(st.lists(_ATOM_PIECES, max_size=30), st.binary(max_size=40))
def test_any_atom_is_a_feed_or_not_xml(pieces, noise):
    with contextlib.suppress(atom.NotXml):  # anything else would be a 500
        atom.parse_feed("".join(pieces).encode() + noise, "http://a.test/feed")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "links",
                    "publications",
                    "navigation",
                    "groups",
                    "facets",
                    "title",
                    "href",
                    "rel",
                    "type",
                    "author",
                    "belongsTo",
                    "series",
                    "position",
                    "images",
                    "properties",
                    "numberOfItems",
                    "language",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@given(_JSON)
def test_any_json_is_a_feed_or_not_opds2(document):
    with contextlib.suppress(opds2.NotOpds2):  # anything else would be a 500
        opds2.parse_feed(document, "http://a.test/feed")
