"""The one link builder: its paths, quoting and signatures, and that no link is built elsewhere.

Every link the host hands out is made by :class:`toshokan.sdk.urls.Urls`, so a
change of layout, quoting or signing happens in one place. The scan at the end
walks the source for links spelled by hand (an f-string or a ``+`` gluing a
path onto the host's address) and names each one it finds.
"""

import ast
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

import toshokan
from toshokan.core.signing import signed_query, verify
from toshokan.errors import InvalidCredentials
from toshokan.sdk.urls import Urls, image_message

SECRET = b"s" * 32
SRC = Path(toshokan.__file__).parent
#: The builder itself, the one module allowed to glue addresses and paths together.
BUILDER = SRC / "sdk" / "urls.py"


def signer(message: str) -> dict[str, str]:
    return signed_query(SECRET, message, 3600)


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


# -- the builder ---------------------------------------------------------------------------


@pytest.mark.parametrize("base", ["https://h", "https://h/", "https://h/x", "https://h/x/"])
def test_links_keep_the_address_and_its_prefix(base: str) -> None:
    urls = Urls(base)
    root = base.rstrip("/")
    assert urls.source("local") == f"{root}/local"
    assert urls.manga("local", "iron-garden") == f"{root}/local/iron-garden"
    assert urls.chapter("local", "iron", "c1") == f"{root}/local/iron/chapters/c1"
    assert urls.face("") == f"{root}/_/"
    assert urls.face("opds") == f"{root}/_/opds"
    assert urls.face("opds", "v2", "local", "all") == f"{root}/_/opds/v2/local/all"
    assert urls.source_route("local", "/pages/a/b/1") == f"{root}/_/local/pages/a/b/1"
    # A cookie's Path: the prefix kept, the address dropped.
    prefix = "/x" if "/x" in base else ""
    assert urls.local_path("/") == f"{prefix}/"
    assert urls.local_path("/_/") == f"{prefix}/_/"


def test_slugs_and_query_values_are_percent_encoded() -> None:
    urls = Urls("https://h")
    assert urls.manga("local", "a b/c?d") == "https://h/local/a%20b%2Fc%3Fd"
    assert urls.face("opds", "local", "all", query={"sort": "a&b", "page": "2"}) == (
        "https://h/_/opds/local/all?sort=a%26b&page=2"
    )
    assert urls.face("opds", "_search", query=[("q", "ä ö"), ("page", "1")]) == (
        "https://h/_/opds/_search?q=%C3%A4+%C3%B6&page=1"
    )


def test_templates_are_written_as_readers_fill_them_in() -> None:
    urls = Urls("https://h")
    assert urls.face("opds", "local", "search", template="?q={searchTerms}") == (
        "https://h/_/opds/local/search?q={searchTerms}"
    )
    assert urls.face("opds", "v2", "local", "search", template="{?query}") == (
        "https://h/_/opds/v2/local/search{?query}"
    )


def test_open_source_routes_keep_their_query_and_carry_no_signature() -> None:
    urls = Urls("https://h", signer, signed_sources={"locked"})
    assert urls.source_route("local", "/cover/a", {"v": "3"}) == "https://h/_/local/cover/a?v=3"


def test_locked_source_routes_are_signed_over_their_path() -> None:
    urls = Urls("https://h/x", signer, signed_sources={"locked"})
    link = urls.source_route("locked", "/pages/a/b/1", {"v": "3"})
    parts = urlsplit(link)
    assert parts.path == "/x/_/locked/pages/a/b/1"
    query = query_of(link)
    assert set(query) == {"exp", "sig"}  # the version is dropped: the signature covers the path
    # The host checks the path as its route sees it, below any prefix a proxy strips.
    assert verify(SECRET, "/_/locked/pages/a/b/1", query["exp"], query["sig"]) > 0
    with pytest.raises(InvalidCredentials):
        verify(SECRET, "/_/locked/pages/a/b/2", query["exp"], query["sig"])


def test_image_links_are_signed_over_source_image_and_width() -> None:
    urls = Urls("https://h", signer)
    upstream = "https://up.example/a b.png?x=1&y=2"
    link = urls.image("mangadex", upstream, 300)
    assert urlsplit(link).path == "/_/image/mangadex"
    query = query_of(link)
    assert (query["u"], query["w"]) == (upstream, "300")
    message = image_message("mangadex", upstream, "300")
    assert verify(SECRET, message, query["exp"], query["sig"]) > 0
    with pytest.raises(InvalidCredentials):
        verify(SECRET, image_message("mangadex", upstream, "600"), query["exp"], query["sig"])
    assert "w" not in query_of(urls.image("mangadex", upstream))


def test_a_builder_without_the_hosts_signer_refuses_to_sign() -> None:
    with pytest.raises(RuntimeError):
        Urls("https://h").image("mangadex", "https://up.example/1.png")


# -- nothing else builds a link ---------------------------------------------------------

#: A placeholder holding the host's address or a link already built.
ADDRESS = re.compile(r"\b(base|\w+_base|\w*url\w*|href)\b", re.IGNORECASE)
#: A placeholder holding a part of a link (``{pages}/{n}``), when a path follows it.
LINK_PART = re.compile(r"\b(pages|here)\b", re.IGNORECASE)
#: What the scan finds that builds no link of the host's, and why.
NOT_HOST_LINKS = {
    ("edge/paths.py", 'rf"/_/(?!'): "a pattern the edge matches paths against",
    ("sources/mangadex/source.py", 'f"{base}/{quality}/'): "a page on MangaDex's own servers",
    ("sources/opds/opds2.py", 'f"{href[: found.start()]}'): "a template of another catalogue",
}


def _placeholder_and_next(node: ast.JoinedStr, source: str) -> list[tuple[str, str]]:
    """Each placeholder's source with what follows it: the next literal or ``{}``."""
    pairs: list[tuple[str, str]] = []
    values = node.values
    for index, value in enumerate(values):
        if isinstance(value, ast.FormattedValue):
            following = values[index + 1] if index + 1 < len(values) else None
            if isinstance(following, ast.Constant):
                after = str(following.value)
            elif following is not None:
                after = "{}"
            else:
                after = ""
            pairs.append((ast.get_source_segment(source, value.value) or "", after))
    return pairs


def _builds_a_link(node: ast.AST, source: str) -> bool:
    if isinstance(node, ast.JoinedStr):
        literal = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
        if "/_/" in literal or literal.startswith("/_") or "/chapters/" in literal:
            return True
        for held, after in _placeholder_and_next(node, source):
            if ADDRESS.search(held) and (after[:1] in ("/", "?", "#") or after == "{}"):
                return True
            if LINK_PART.search(held) and after[:1] in ("/", "?"):
                return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        sides = [ast.get_source_segment(source, side) or "" for side in (node.left, node.right)]
        pieces = [side for side in (node.left, node.right) if _is_text(side)]
        return bool(pieces) and any(ADDRESS.search(side) for side in sides)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and node.func.value.value == "/"
    ):
        return bool(ADDRESS.search(ast.get_source_segment(source, node) or ""))
    return False


def _is_text(node: ast.AST) -> bool:
    """A string, or a constant's name (``READER_PATH``), glued onto something."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Name) and node.id.isupper()


def hand_built_links(root: Path) -> list[str]:
    """``path:line: code`` of every link built outside the builder under ``root``."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if path.name == BUILDER.name and path.parent.name == "sdk":
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        nested: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in nested or not _builds_a_link(node, source):
                continue
            nested.update(id(inner) for inner in ast.walk(node))
            code = (ast.get_source_segment(source, node) or "").splitlines()[0]
            where = str(path.relative_to(root))
            if any(where == file and code.startswith(start) for file, start in NOT_HOST_LINKS):
                continue
            found.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}: {code}")
    return found


def test_no_link_is_built_outside_the_builder() -> None:
    assert hand_built_links(SRC) == []


def test_the_scan_finds_a_link_built_by_hand(tmp_path: Path) -> None:
    (tmp_path / "face.py").write_text(
        "def links(ctx, base_url, url, page, slug):\n"
        "    own = base_url.rstrip('/') + '/'\n"
        '    feed = f"{url}?page={page}"\n'
        '    image = f"{base_url}/_/image/{slug}"\n'
        '    chapter = f"/{slug}/m/chapters/{page}"\n'
        "    walk = '/'.join([ctx.base, slug])\n"
        '    told = f"Nothing is at {url}."\n'
        "    return own, feed, image, chapter, walk, told\n",
        encoding="utf-8",
    )
    found = hand_built_links(tmp_path)
    assert [line.split(":")[1] for line in found] == ["2", "3", "4", "5", "6"]
