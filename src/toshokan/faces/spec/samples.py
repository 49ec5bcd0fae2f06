"""The host's own content, as the docs page's examples: real slugs, real answers.

Swagger UI invents what a document does not say: a slug generated from its
pattern (``duulpzmsut3m1ff0t9...``), ``page: 0``, a ``source`` left empty, so
"Try it out" refused to run and the example answers described no host. Here
one source of the host that needs no sign-in is asked, once every few minutes
and through the core like any reader, for a search, the first title's details
and chapters, and one chapter's pages; the docs page then offers those slugs as
the parameters' values and those answers as the examples. What cannot be had
in time (an upstream down or slow) is left out, never waited for long.
"""

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from toshokan.core import Caller, Core
from toshokan.errors import HostError
from toshokan.models import SourceConfiguration

#: How long one sample is shown before the host is asked again, and how long asking may take.
SAMPLE_SECONDS = 300.0
SAMPLE_DEADLINE = 5.0
#: How much of each list an example keeps: enough to show its shape.
SHOWN = 3


@dataclass
class Sample:
    """What the docs page shows of the host; each part absent when it could not be had."""

    #: The source every example is of: one that needs no sign-in, if the host has any.
    source: str | None = None
    #: Search bodies the source accepts: its presets and a browse, by a short name.
    searches: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Real answers, as the JSON interface gives them, by operation (``manifest``,
    #: ``configuration``, ``search``, ``manga``, ``chapters``, ``pages``).
    answers: dict[str, Any] = field(default_factory=dict)
    manga: str | None = None
    chapter: str | None = None


def search_bodies(config: SourceConfiguration) -> dict[str, dict[str, Any]]:
    """Bodies a search of this source accepts as they are: its presets, then a browse by its
    first declared sort."""
    bodies: dict[str, dict[str, Any]] = {}
    for number, preset in enumerate(config.presets[:3], 1):
        body = preset.request.model_dump(mode="json", exclude_defaults=True)
        bodies[f"preset{number}"] = {"summary": preset.name, "value": {**body, "page": 1}}
    sort = config.search.sort[0].value
    bodies["browse"] = {
        "summary": f"Browse everything, by {sort}",
        "value": {"query": "", "page": 1, "limit": 20, "sort": sort, "direction": "desc"},
    }
    return bodies


class Samples:
    """The latest sample of one host, asked again once it is :data:`SAMPLE_SECONDS` old."""

    def __init__(self) -> None:
        self.sample = Sample()
        #: What the sample was taken for: the host's content (its manifest's ETag, which
        #: changes with any source's content) and the address links are built on.
        self.taken_for: tuple[str, str] | None = None
        self.taken = 0.0
        self.lock = asyncio.Lock()

    async def get(self, core: Core, base_url: str) -> Sample:
        taken_for = ((await core.manifest()).etag, base_url)
        async with self.lock:
            stale = time.monotonic() - self.taken > SAMPLE_SECONDS
            if taken_for != self.taken_for or stale:
                sample = Sample()
                # What was had by then is shown; the rest is left to the schemas.
                with contextlib.suppress(HostError, TimeoutError):
                    await asyncio.wait_for(take(core, base_url, sample), SAMPLE_DEADLINE)
                self.sample, self.taken_for, self.taken = sample, taken_for, time.monotonic()
            return self.sample


async def take(core: Core, base_url: str, sample: Sample) -> None:
    """Fill ``sample`` step by step, so that a step that fails leaves the earlier ones."""
    sample.answers["manifest"] = json.loads((await core.manifest()).body)
    serving = core.sources.serving()
    configs = [(hosted.slug, await core.configuration(hosted)) for hosted in serving]
    open_ones = [(slug, config) for slug, config in configs if not config.auth.required]
    if not (open_ones or configs):
        return
    slug, config = (open_ones or configs)[0]
    sample.source = slug
    sample.searches = search_bodies(config)
    sample.answers["configuration"] = json.loads((await core.configuration_answer(slug)).body)
    if not open_ones:
        return  # a source that needs signing in is not asked for content without it
    # No credentials: what every caller may see, so one sample serves every visitor.
    visit = await core.visit(slug, Caller(headers={}, base_url=base_url))
    found = (await visit.search(next(iter(sample.searches.values()))["value"])).value
    sample.answers["search"] = shown(found.model_dump(mode="json"), "results")
    if not found.results:
        return
    sample.manga = found.results[0].slug
    sample.answers["manga"] = json.loads((await visit.manga(sample.manga)).body)
    chapters = json.loads((await visit.chapters(sample.manga)).body)
    sample.answers["chapters"] = chapters[:SHOWN]
    if not chapters:
        return
    sample.chapter = chapters[-1]["slug"]  # the first chapter, where a reader starts
    pages = json.loads((await visit.pages(sample.manga, sample.chapter)).body)
    sample.answers["pages"] = pages[:SHOWN]


def shown(answer: dict[str, Any], key: str) -> dict[str, Any]:
    return {**answer, key: answer[key][:SHOWN]}
