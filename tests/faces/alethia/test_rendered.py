"""Translations are kept by key, within a bound in bytes."""

from functools import partial

from toshokan.faces.alethia.rendered import Rendered


def test_a_translation_is_rendered_once_per_key() -> None:
    rendered = Rendered(max_bytes=100)
    calls: list[str] = []

    def render(text: str) -> bytes:
        calls.append(text)
        return text.encode()

    assert rendered.get("a", lambda: render("first")) == b"first"
    assert rendered.get("a", lambda: render("second")) == b"first"
    assert rendered.get("b", lambda: render("other")) == b"other"
    assert calls == ["first", "other"]


def test_memory_stays_within_the_bound() -> None:
    rendered = Rendered(max_bytes=100)
    for n in range(10):
        rendered.get(n, lambda: b"x" * 40)
    rendered_again: list[int] = []

    def again(n: int) -> bytes:
        rendered_again.append(n)
        return b"x" * 40

    for n in range(10):
        rendered.get(n, partial(again, n))
    assert rendered_again[:8] == list(range(8))  # only two of 40 bytes fit in 100
    huge = rendered.get("huge", lambda: b"y" * 1000)
    assert huge == b"y" * 1000  # answered, just not kept
    assert rendered.get("huge", lambda: b"z") == b"z"
