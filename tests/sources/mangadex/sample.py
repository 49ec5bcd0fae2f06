"""The fake MangaDex the faces' tests serve: two series, one with an author, a tag and three
chapters by one group, the other bare."""

from .fake import FakeMangaDex, tag_id


def two_series() -> FakeMangaDex:
    fake = FakeMangaDex()
    author = fake.add_person("Oda Eiichirou")
    group = fake.add_group("Straw Hat Scans")
    manga = fake.add_manga(
        "pirates",
        "Pirate Voyage",
        authors=[author.id],
        description={"en": "A crew sails for the last island."},
        tags=[tag_id("action")],
    )
    fake.add_many_chapters(manga, 3, group)
    fake.add_manga("sky", "Sky Garden")
    return fake
