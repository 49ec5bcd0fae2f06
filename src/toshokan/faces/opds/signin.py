"""Which reader walks the catalogue: HTTP Basic or ``X-API-Key``, refused as OPDS readers expect.

With readers on the host, every request of the face (feeds, pages,
progression) names one, because what a feed shows depends on who reads it.
A refusal is a 401 carrying both challenges clients look for: ``WWW-Authenticate:
Basic`` (OPDS 1.2 readers ask for a name and password on it) and, per
Authentication for OPDS 1.0, the Authentication Document as the body and in
a ``Link`` header. The document itself is open, as that draft requires.

A source that is locked with its own credentials still receives the same
Basic header (:mod:`toshokan.faces.opds.access`): a reader whose name and
password are that source's opens it.
"""

import json
from typing import Any

from starlette.responses import Response

from toshokan.core import Core, Query, Urls
from toshokan.core.cache_control import NO_STORE
from toshokan.core.credentials import basic_challenge

AUTH_DOCUMENT = "application/opds-authentication+json"
REL_AUTH_DOCUMENT = "http://opds-spec.org/auth/document"
BASIC_FLOW = "http://opds-spec.org/auth/basic"
DOCUMENT_PATH = "authentication.json"
#: The catalogue's name under the host's ``/_/``.
CATALOGUE = "opds"


def catalogue(urls: Urls, *parts: str, query: Query | None = None, template: str = "") -> str:
    """An address of the catalogue: ``catalogue(urls)`` is its root, ``/_/opds``."""
    return urls.face(CATALOGUE, *parts, query=query, template=template)


def authentication_document(core: Core, urls: Urls) -> dict[str, Any]:
    name = core.settings.host.name
    return {
        "id": catalogue(urls, DOCUMENT_PATH),
        "title": name,
        "description": f"Sign in as a reader of {name}: your name and password, or an API key "
        "as the password.",
        "authentication": [
            {"type": BASIC_FLOW, "labels": {"login": "Reader", "password": "Password or API key"}}
        ],
    }


def refusal(core: Core, urls: Urls, message: str) -> Response:
    """The 401 that makes a reader ask for a name and password (or follow the document)."""
    body = {**authentication_document(core, urls), "error": message}
    headers = {
        "WWW-Authenticate": basic_challenge(core.settings.host.name),
        "Link": f'<{catalogue(urls, DOCUMENT_PATH)}>; rel="{REL_AUTH_DOCUMENT}"; '
        f'type="{AUTH_DOCUMENT}"',
        "Cache-Control": NO_STORE,
    }
    return Response(json.dumps(body), 401, headers=headers, media_type=AUTH_DOCUMENT)
