"""Which recorded chapters of a kept series are queued: a reader's filters, one version a number.

A pure function of what the checks recorded, so every process that looks chooses
the same: the chapters found new after the reader began keeping the series,
and with a backfill the newest numbers that existed before; in the reader's
languages; one version per number (a preferred group's, in the reader's order,
else the first found); not those the reader finished, with "only unread"; never a
number queued or kept already, nor a chapter someone cancelled.
"""

from collections.abc import Sequence

from toshokan.core.downloads.store import Candidate, Keep
from toshokan.core.follows.found import KNOWN


def chosen(
    keep: Keep,
    recorded: Sequence[Candidate],
    *,
    finished: set[str],
    taken_numbers: set[float],
    skipped: set[str],
) -> list[Candidate]:
    """What ``keep`` asks to be queued of ``recorded``."""
    languages = set(keep.languages)
    usable = [
        c
        for c in recorded
        if (not languages or c.language in languages)
        and c.chapter not in skipped
        and not (keep.only_unread and c.chapter in finished)
    ]
    new = [c for c in usable if c.kind != KNOWN and c.found >= keep.since]
    old = [c for c in usable if c.kind == KNOWN or c.found < keep.since]
    wanted = _one_a_number(new, keep.groups)
    if keep.backfill:
        newest = sorted({c.number for c in old}, reverse=True)[: keep.backfill]
        wanted += _one_a_number([c for c in old if c.number in newest], keep.groups)
    seen = set(taken_numbers)
    picked = []
    for candidate in sorted(wanted, key=lambda c: c.number):
        if candidate.number not in seen:
            seen.add(candidate.number)
            picked.append(candidate)
    return picked


def _one_a_number(chapters: Sequence[Candidate], groups: Sequence[str]) -> list[Candidate]:
    """One chapter per number: the first preferred group's, else the first found."""
    rank = {group.casefold(): index for index, group in enumerate(groups)}
    best: dict[float, Candidate] = {}
    for chapter in sorted(chapters, key=lambda c: c.found):
        held = best.get(chapter.number)
        if held is None or _rank(chapter, rank) < _rank(held, rank):
            best[chapter.number] = chapter
    return list(best.values())


def _rank(chapter: Candidate, rank: dict[str, int]) -> int:
    return rank.get(chapter.scanlator.casefold(), len(rank))
