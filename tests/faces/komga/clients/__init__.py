"""Reader apps that speak Komga, as test clients: their requests, and how they decode the answers.

Each module says which files of which app it follows:

- :mod:`.mihon_extension`: Mihon's Komga extension (``MihonKomgaSource``):
  listings, search with filters, series, chapters, pages, images, filter
  options; :mod:`.mihon_extension_models`: the models it decodes and the
  mapping to what the user sees (``SManga``, ``SChapter``, ``Page``).
- :mod:`.mihon_tracker`: Mihon's Komga tracker (``MihonKomgaTracker``): the
  series lookup, ``/api/v2/series/{id}/read-progress/tachiyomi``, binding and
  marking chapters read.
- :mod:`.aidoku_source`: Aidoku's built-in Komga source and tracker.
- :mod:`.paperback_source`: Paperback's Komga source (0.9): search
  conditions, books by condition, the home page's sections.
- :mod:`.okhttp_session`: the networks underneath: ``MihonNetwork`` (one cookie
  jar for the extension and the tracker; Basic only after a 401) and
  ``aidoku_client`` (Basic on every request).
- :mod:`.kotlinx_json`: how Mihon's ``Json`` decodes (required, nullable,
  Int/Float); :mod:`.komga_dtos`: Komga's own answers, exactly, with its date
  patterns, enums, error body and session cookie; :mod:`.samples`: answers
  shaped like Komga's.

A session against a served host (``toshokan.testing.serve_host``)::

    network = MihonNetwork(host.client)
    source = MihonKomgaSource(network.extension_client("mika", "hunter22"), "http://testserver/_/komga")
    manga = (await source.search(1, "", SearchFilters(genres=("Action",)))).mangas[0]
    chapters = await source.chapter_list(manga.url)
    pages = await source.page_list(chapters[-1].url)
    tracker = MihonKomgaTracker(network.tracker_client())
    track, _ = await tracker.bind(manga.url, {chapter.chapter_number: False for chapter in chapters})
    await tracker.chapter_read(track, chapters[-1].chapter_number)

Decoding failures are pydantic ``ValidationError`` whose first error names the
field the app would fail on; a status outside 200-299 where the app checks it
is :class:`~.okhttp_session.HttpError`.
"""
