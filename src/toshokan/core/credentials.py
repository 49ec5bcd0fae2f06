"""Credentials as a face meets them, in the forms the SDK defines.

A reader that can only send a name and password (HTTP Basic, as every OPDS
reader does) still reaches sources that expect a key, a token or a cookie:
the face reads the Basic pair here and asks for the headers the source's
auth type expects, so the core then authorises the request as it would any
other. The forms themselves stay the SDK's, which the sources share.
"""

from collections.abc import Mapping

from toshokan.models import AuthType
from toshokan.sdk.auth import Credentials, credentials_from_headers, headers_for

#: The field of :class:`Credentials` that carries a type's one secret.
SECRET_FIELDS = {AuthType.API_KEY: "apiKey", AuthType.BEARER: "token", AuthType.COOKIE: "cookie"}


def basic_challenge(realm: str) -> str:
    """The ``WWW-Authenticate`` value asking for Basic credentials for ``realm`` (a host's or a
    source's name): a ``"`` in the name would end the quoted realm, so it is shown as ``'``."""
    shown = realm.replace('"', "'")
    return f'Basic realm="{shown}", charset="UTF-8"'


def basic_credentials(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """The name and password of an ``Authorization: Basic`` header, if there is one."""
    sent = credentials_from_headers(AuthType.BASIC, headers)
    if sent is None or sent.username is None or sent.password is None:
        return None
    return sent.username, sent.password


def secret_headers(auth_type: AuthType, secret: str) -> dict[str, str]:
    """The headers carrying ``secret`` as the key, token or cookie ``auth_type`` expects."""
    return headers_for(
        Credentials.model_validate({"type": auth_type, SECRET_FIELDS[auth_type]: secret})
    )
