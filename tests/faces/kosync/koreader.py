"""KOReader's sync client, request for request, as decoded from its source.

What KOReader sends (koreader/koreader, ``plugins/kosync.koplugin``):

- ``KOSyncClient.lua`` builds every call with the Spore library from
  ``api.json``: middlewares ``Format.JSON`` (the payload JSON-encoded, sent as
  ``Content-Type: application/json``), ``GinClient`` (``Accept:
  application/vnd.koreader.v1+json``, replacing Format.JSON's own Accept) and,
  except for ``register``, ``KOSyncAuth`` (``x-auth-user``: the user name,
  ``x-auth-key``: the key).
- ``main.lua`` makes the key ``md5(password)`` in hex, for login and register
  alike: the password itself never leaves the device. ``register`` POSTs
  ``{"username", "password": <that key>}`` to ``/users/create`` and succeeds
  on 201; ``authorize`` GETs ``/users/auth`` and succeeds on 200; failures show
  the body's ``message``.
- ``update_progress`` PUTs ``/syncs/progress`` with ``{"document", "progress",
  "percentage", "device", "device_id"}``: ``progress = tostring(progress)``,
  for a paged document (a CBZ, a PDF) the current page number from 1, and
  ``percentage`` that page over the page count; ``device`` is the model name,
  ``device_id`` a UUID kept in its settings. Success is status 200.
- ``get_progress`` GETs ``/syncs/progress/<document>``; a body without
  ``percentage`` means "no progress found"; otherwise it jumps to
  ``progress`` (``GotoPage(tonumber(progress))`` for paged documents) and
  compares ``timestamp`` with its last page turn.
- ``document`` is ``partial_md5_checksum`` (``frontend/util.lua``,
  ``util.partialMD5``): MD5 over 1024-byte samples at ``lshift(1024, 2*i)`` for
  i = -1..10, stopping at the first empty read; or, with "Filename" matching,
  md5 of the file name.

What the official server answers (koreader/koreader-sync-server,
``app/controllers/1/syncs_controller.lua``, ``config/errors.lua``, and Gin's
own errors): ``{"code", "message"}`` with 2001/401 "Unauthorized", 2002/402
"Username is already registered.", 2003/403 "Invalid request", 2004/403
"Field 'document' not provided.", 2005/402 "User registration is disabled.";
Gin's 100-102/412 for a missing, malformed or other-version Accept and
103/104/400 for a body that is not JSON or not an object. ``/users/auth`` is
``{"authorized": "OK"}``, ``/healthcheck`` ``{"state": "OK"}``, ``/users/create``
201 ``{"username"}``, ``PUT`` 200 ``{"document", "timestamp"}`` (the server's
``os.time()``), ``GET`` 200 with the stored fields and ``document``, or ``{}``.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx

ACCEPT = "application/vnd.koreader.v1+json"
DEVICE = "Kobo_frost"
DEVICE_ID = "6a6b7a0e-7a2b-4b0e-9a35-8f9e0c2d1f3a"


def lshift32(value: int, count: int) -> int:
    """LuaJIT's ``bit.lshift``: the count masked to 5 bits, the result a 32-bit integer."""
    return (value << (count & 31)) & 0xFFFFFFFF


def koreader_partial_md5(data: bytes) -> str:
    """``util.partialMD5`` over ``data``, written from KOReader's Lua, not from the host's code."""
    md5 = hashlib.md5()
    step, size = 1024, 1024
    for i in range(-1, 11):
        offset = lshift32(step, 2 * i)
        sample = data[offset : offset + size]  # file:seek then file:read(size)
        if not sample:  # read returns nil at or past the end
            break
        md5.update(sample)
    return md5.hexdigest()


def userkey(password: str) -> str:
    return hashlib.md5(password.encode()).hexdigest()


class KOReader:
    """One device: its sync settings, and the requests its plugin makes."""

    def __init__(self, client: httpx.AsyncClient, username: str, password: str, **device: str):
        self.client = client
        self.username = username
        self.userkey = userkey(password)
        self.device = device.get("device", DEVICE)
        self.device_id = device.get("device_id", DEVICE_ID)

    def _auth(self) -> dict[str, str]:
        return {"accept": ACCEPT, "x-auth-user": self.username, "x-auth-key": self.userkey}

    async def register(self) -> httpx.Response:
        body = json.dumps({"username": self.username, "password": self.userkey})
        headers = {"content-type": "application/json", "accept": ACCEPT}
        return await self.client.post("/_/kosync/users/create", content=body, headers=headers)

    async def authorize(self) -> httpx.Response:
        return await self.client.get("/_/kosync/users/auth", headers=self._auth())

    async def update_progress(
        self, document: str, page: int, pages: int, **fields: Any
    ) -> httpx.Response:
        body = {
            "document": document,
            "progress": str(page),
            "percentage": round(page / pages, 4),
            "device": self.device,
            "device_id": self.device_id,
            **fields,
        }
        headers = {**self._auth(), "content-type": "application/json"}
        return await self.client.put(
            "/_/kosync/syncs/progress", content=json.dumps(body), headers=headers
        )

    async def get_progress(self, document: str) -> httpx.Response:
        return await self.client.get(f"/_/kosync/syncs/progress/{document}", headers=self._auth())


def book_digest(path: Path) -> str:
    return koreader_partial_md5(path.read_bytes())
