"""Atom documents stay well-formed whatever text an upstream sends."""

from defusedxml import ElementTree

from toshokan.faces.opds.atom import ATOM, AtomEntry, Feed, Link


def test_control_characters_from_an_upstream_are_dropped() -> None:
    title = "Bell\x07 Tower\x00 \x1b[1mVol.\t1\r\n\u2028é"
    feed = Feed(
        id="urn:test",
        title=title,
        links=[Link("self", "http://test/_/opds", "application/atom+xml")],
        entries=[
            AtomEntry(
                id="urn:test:1",
                title=title,
                updated="2024-01-01T00:00:00Z",
                links=[Link("alternate", "http://test/a", "text/html", title)],
                content=title,
                authors=[title],
                categories=[("bell", title)],
            )
        ],
    )
    parsed = ElementTree.fromstring(feed.xml())
    expected = "Bell Tower [1mVol.\t1\n\u2028é"  # XML reads a \r\n as \n
    assert parsed.findtext(f"{{{ATOM}}}title") == expected
    entry = parsed.find(f"{{{ATOM}}}entry")
    assert entry is not None
    assert entry.findtext(f"{{{ATOM}}}title") == expected
    assert entry.findtext(f"{{{ATOM}}}content") == expected
    assert entry.findtext(f"{{{ATOM}}}author/{{{ATOM}}}name") == expected
    category = entry.find(f"{{{ATOM}}}category")
    assert category is not None and (category.get("label") or "").startswith("Bell Tower [1m")
    link = entry.find(f"{{{ATOM}}}link")
    assert link is not None and (link.get("title") or "").startswith("Bell Tower [1m")
