"""Who reads: the session cookie, HTTP Basic or ``X-API-Key``, as Komga's clients sign in.

Mihon's extension asks without credentials and answers the 401 with Basic
(OkHttp's authenticator retries once); Aidoku sends Basic up front; Komelia
and scripts may send a reader's API key as ``X-API-Key``. Mihon's tracker sends
no credentials at all: it rides the session cookie Komga sets on a Basic
sign-in, kept in the app's shared cookie jar. So a successful Basic sign-in
sets a session cookie, scoped to this face's path (which covers ``/api/v1``
and ``/api/v2``), HttpOnly, and Secure only when the request came over https
(a cookie marked Secure is never sent back over plain http). The session is
the host's (the same store as the web reader's) under a name of its own: a
browser holding the web reader's cookie (path ``/``) sends it to this face
too, and two cookies of one name on one request leave only one of them read.
For a source that accepts the host's readers, the core checks the reader, and
reads the host's cookie name: the face's way (:data:`PASSING`) hands it this face's
token under that name.

With no readers on the host it is open: every request is the implicit reader.
"""

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.passing import ReadersOnly
from toshokan.core.readers import SESSION_SECONDS, Signing

#: Not Komga's own ``KOMGA-SESSION``: a Komga served at the root of the same host would set
#: that name for path ``/``, and its cookie would reach this face as well.
SESSION_COOKIE = "toshokan_komga_session"
#: How the face's readers' credentials reach a source: the host's readers', this face's session
#: presented as the host's (Mihon's tracker sends nothing else), a locked source's own Basic.
PASSING = ReadersOnly(session_cookie=SESSION_COOKIE)
#: How the face's readers sign in: Basic, ``X-API-Key``, or this face's session, which a Basic
#: sign-in is given.
SIGNING = Signing(cookie=SESSION_COOKIE, sessions=True)


def set_session(request: Request, response: Response, token: str, path: str) -> None:
    """The session cookie, sent back on every path under ``path`` (the face's prefix)."""
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=SESSION_SECONDS,
        path=path,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
