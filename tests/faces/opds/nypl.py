"""NYPL's ``opds-feed-parser`` (npm, 0.1.0), as it tells an acquisition feed from a navigation
feed, the OPDS 1.2 rule (section 2: an acquisition feed's entries are publications).

Written from its ``lib/src/``: ``feed_parser.js`` makes an ``AcquisitionFeed`` when
every entry has at least one acquisition link (so also when there are no
entries), else a ``NavigationFeed``; ``link_parser.js`` makes an acquisition link
of a link whose ``rel`` is exactly one of ``OPDSAcquisitionLink.RELS``
(``opds_acquisition_link.js``): the generic rel and its open-access, borrow,
buy, sample and subscribe forms. A ``subsection``, a PSE stream or an
``alternate`` link makes none.
"""

from xml.etree.ElementTree import Element

from .reader import NS

ACQUISITION_RELS = frozenset(
    f"http://opds-spec.org/acquisition{suffix}"
    for suffix in ("", "/open-access", "/borrow", "/buy", "/sample", "/subscribe")
)


def is_acquisition_feed(feed: Element) -> bool:
    return all(
        any(link.get("rel") in ACQUISITION_RELS for link in entry.findall("a:link", NS))
        for entry in feed.findall("a:entry", NS)
    )
