"""MangaDex's tag list, as readable and stable tag slugs.

The spec wants tag *slugs* in filters and in a Manga's ``tags``; MangaDex
names its tags by UUID. ``tags.json`` beside this module maps one to the
other and ships with the adapter, so start-up needs no request and the slugs
never depend on a network round trip. ``toshokan mangadex refresh-tags``
regenerates it from ``GET /manga/tag`` (:func:`merge_tag_list`).

Stability: a slug is derived from the English name once (``Boys' Love`` ->
``boys-love``, ``Sci-Fi`` -> ``sci-fi``) and then kept by *id*: when MangaDex
renames a tag (as it did "User Created" -> "Self-Published"), the refresh
keeps the old slug, so saved client filters keep working.

NSFW: a tag is ``nsfw`` when MangaDex files it in its ``content`` group (its
content warnings: "Gore", "Sexual Violence"), or when it is one of the themes
in :data:`NSFW_THEMES` ("Incest", "Loli", "Shota"), whose works are sexualised
often enough that a client hiding nsfw tags should hide them too. The rule is
applied by the refresh, so it stays the same for tags added later.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from toshokan.sdk import Tag
from toshokan.sdk.slugs import slugify

#: Themes treated as nsfw in addition to MangaDex's ``content`` group (see module docs).
NSFW_THEMES = frozenset({"incest", "loli", "shota"})
NSFW_GROUPS = frozenset({"content"})
NSFW_RULE = "group 'content', or one of the themes: " + ", ".join(sorted(NSFW_THEMES))
TAGS_FILE = "tags.json"
#: The order a tag picker lists MangaDex's groups in; unknown groups go last.
GROUP_ORDER = {"genre": 0, "theme": 1, "format": 2, "content": 3}


@dataclass(frozen=True)
class TagInfo:
    """One MangaDex tag: its slug here, its id there."""

    slug: str
    id: str
    name: str
    group: str
    nsfw: bool

    def spec(self) -> Tag:
        return Tag(slug=self.slug, name=self.name[:50], nsfw=self.nsfw)


@dataclass(frozen=True)
class TagCatalogue:
    """The tag list with lookups both ways."""

    tags: tuple[TagInfo, ...]
    generated_at: datetime
    _by_slug: dict[str, TagInfo] = field(init=False, repr=False, compare=False)
    _by_id: dict[str, TagInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_slug", {t.slug: t for t in self.tags})
        object.__setattr__(self, "_by_id", {t.id: t for t in self.tags})

    def by_slug(self, slug: str) -> TagInfo | None:
        return self._by_slug.get(slug)

    def by_id(self, tag_id: str) -> TagInfo | None:
        return self._by_id.get(tag_id)

    def spec_tags(self) -> list[Tag]:
        return [t.spec() for t in self.tags]

    def to_json(self) -> dict[str, Any]:
        return {
            "generatedAt": self.generated_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "source": "GET /manga/tag",
            "nsfwRule": NSFW_RULE,
            "tags": [asdict(t) for t in self.tags],
        }


def catalogue_from_json(data: Mapping[str, Any]) -> TagCatalogue:
    generated = datetime.fromisoformat(str(data["generatedAt"]).replace("Z", "+00:00"))
    tags = tuple(TagInfo(**entry) for entry in data["tags"])
    return TagCatalogue(tags=tags, generated_at=generated)


@cache
def shipped_catalogue() -> TagCatalogue:
    """The tag list that ships with the adapter (read once per process)."""
    text = resources.files(__package__).joinpath(TAGS_FILE).read_text(encoding="utf-8")
    return catalogue_from_json(json.loads(text))


def shipped_path() -> Path:
    """Where ``tags.json`` lives in the installed package (the refresh's default output)."""
    return Path(str(resources.files(__package__).joinpath(TAGS_FILE)))


def english_name(names: Mapping[str, str]) -> str:
    return names.get("en") or next(iter(names.values()), "") or "Untitled tag"


def is_nsfw(name: str, group: str) -> bool:
    return group in NSFW_GROUPS or slugify(name) in NSFW_THEMES


def merge_tag_list(
    api_tags: Iterable[Mapping[str, Any]],
    previous: TagCatalogue | None,
    now: datetime | None = None,
) -> TagCatalogue:
    """Build the catalogue from ``GET /manga/tag`` data, keeping previous slugs by id.

    Tags are ordered by group (genres first) then name, the order a tag picker wants. Tags
    MangaDex no longer lists are dropped; a new tag whose derived slug is taken
    gets a numeric suffix.
    """
    kept = {t.id: t.slug for t in previous.tags} if previous else {}
    taken: set[str] = set()
    rows = []
    for item in api_tags:
        attributes = item["attributes"]
        rows.append((str(attributes["group"]), english_name(attributes["name"]), str(item["id"])))
    rows.sort(key=lambda row: (GROUP_ORDER.get(row[0], len(GROUP_ORDER)), row[0], row[1].lower()))
    infos = []
    # Known ids first claim their slugs, so a newcomer can never take an existing tag's slug.
    taken.update(kept[tag_id] for *_, tag_id in rows if tag_id in kept)
    for group, name, tag_id in rows:
        slug = kept.get(tag_id)
        if slug is None:
            base = slugify(name, fallback="tag")
            slug, n = base, 2
            while slug in taken:
                slug, n = f"{base}-{n}", n + 1
            taken.add(slug)
        infos.append(
            TagInfo(slug=slug, id=tag_id, name=name, group=group, nsfw=is_nsfw(name, group))
        )
    return TagCatalogue(tags=tuple(infos), generated_at=now or datetime.now(UTC))


def write_catalogue(catalogue: TagCatalogue, path: Path) -> None:
    text = json.dumps(catalogue.to_json(), indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
