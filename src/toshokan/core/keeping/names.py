"""Where a kept chapter goes: ``<Series>/<Series> Vol.X Ch.Y - Title [Group].cbz``.

The layout Komga, Kavita, Mylar and Mihon users keep by hand: one folder per
series (the series' title), one archive per chapter version, named so their
scanners, and the local library's own name parser, read the volume, the
number, the title, the group and (when not English) the language back from the
name alone. The ComicInfo.xml inside says it all again, exactly.

Names hold no path separators, characters Windows refuses, control
characters or a leading dot (which the local library would take for a hidden
file), and stay under the byte length file systems allow.
"""

import re
import unicodedata

from toshokan.models import Chapter
from toshokan.sdk.names import format_number, parse_chapter_name

#: Bytes a file or folder name may take (most file systems allow 255).
MAX_NAME_BYTES = 240
#: What a series folder name leaves to the chapter name.
MAX_SERIES_BYTES = 120
_REFUSED = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
#: Brackets would end a name's group tag early.
_BRACKETS = str.maketrans("[]{}", "()()")
NO_SCANLATOR = "Unknown Scanlator"


def clean(text: str, max_bytes: int = MAX_NAME_BYTES) -> str:
    """``text`` fit for a file name: one line, no separators, within ``max_bytes``."""
    text = unicodedata.normalize("NFC", text)
    text = " ".join(_REFUSED.sub(" ", text).split())
    text = text.lstrip(". ").rstrip(". ")
    encoded = text.encode("utf-8")
    if len(encoded) > max_bytes:
        text = encoded[:max_bytes].decode("utf-8", errors="ignore").rstrip(". ")
    return text


def series_folder(title: str) -> str:
    """The series folder's name: its title."""
    return clean(title, MAX_SERIES_BYTES) or "Untitled"


def chapter_file(series: str, chapter: Chapter, *, volume: float | None, title: str) -> str:
    """``<Series> Vol.X Ch.Y - Title [Group] (lang).cbz`` for one chapter version."""
    parts = [series_folder(series)]
    if volume is not None:
        parts.append(f"Vol.{format_number(volume)}")
    parts.append(f"Ch.{format_number(chapter.number)}")
    name = " ".join(parts)
    if title:
        name += f" - {clean(title.translate(_BRACKETS))}"
    tags = ""
    if chapter.scanlator and chapter.scanlator != NO_SCANLATOR:
        tags += f" [{clean(chapter.scanlator.translate(_BRACKETS), 80)}]"
    if chapter.language.lower() != "en":
        tags += f" ({clean(chapter.language, 20)})"
    head = clean(name, MAX_NAME_BYTES - len(tags.encode()) - len(".cbz"))
    return f"{head}{tags}.cbz"


def numbered(file_name: str, n: int) -> str:
    """The ``n``th alternative of a name already taken by another file: ``... (2).cbz``."""
    stem = file_name.removesuffix(".cbz")
    return f"{clean(stem, MAX_NAME_BYTES - 12)} ({n}).cbz"


def volume_and_title(chapter: Chapter) -> tuple[float | None, str]:
    """The volume and the chapter's own title, when its title is a label such as MangaDex's
    ``Vol. 2 Ch. 10.5 - Title``; otherwise no volume and the whole title."""
    label = parse_chapter_name(chapter.title)
    if label.number is None and label.volume is None and not label.oneshot:
        return None, chapter.title
    return label.volume, label.title
