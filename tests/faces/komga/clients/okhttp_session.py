"""The network underneath the apps: Mihon's OkHttp client and cookie jar, and Aidoku's URLSession.

Mihon (mihonapp/mihon):

- ``core/common/src/main/kotlin/eu/kanade/tachiyomi/network/NetworkHelper.kt``:
  one ``OkHttpClient`` for the app, with ``cookieJar(AndroidCookieJar())``;
  the Komga extension (``network.client.newBuilder()`` in its ``Komga.kt``)
  and the Komga tracker (``networkService.client.newBuilder()`` in
  ``data/track/komga/Komga.kt``) both build on it, so both read and write
  the same jar.
- ``core/common/src/main/kotlin/eu/kanade/tachiyomi/network/AndroidCookieJar.kt``:
  the jar is the WebView's ``CookieManager``: a cookie is stored against the
  response's URL and sent where that store says it matches (RFC 6265 path
  matching; a ``Secure`` cookie only over https, and not accepted from an
  http answer). OkHttp's ``Cookie.parse`` gives a cookie without ``Path``
  the directory of the URL that set it (``/a/b/c`` sets ``/a/b``): a session
  cookie set on ``/api/v1/series`` without ``Path=/`` does not reach
  ``/api/v2/...``. :class:`CookieJar` keeps these rules with the standard
  library's ``http.cookiejar``.
- The extension's authenticator (keiyoushi/extensions-source
  ``src/all/komga/.../Komga.kt``, ``client``): OkHttp calls it on a 401; it
  gives up when an API key is set or the request already carried
  ``Authorization``, otherwise it repeats the request once with
  ``Authorization: Basic`` (``okhttp3.Credentials.basic``: ISO-8859-1, an
  unmappable character becomes ``?``). So the first request of a session
  goes out without credentials. With an API key, every request carries
  ``X-API-Key`` and no ``Authorization``.
- The tracker's client has no authenticator: a 401 is an ``HttpException``.
- OkHttp's ``BridgeInterceptor`` adds ``Accept-Encoding: gzip`` and the
  cookies; ``RetryAndFollowUpInterceptor`` follows redirects (a non-GET
  becomes a GET on 301/302/303 and is not followed on 307/308; credentials
  are dropped when the host changes) up to 20 follow-ups.
- ``HttpUrl.Builder.addQueryParameter`` encodes a value with
  ``QUERY_COMPONENT_ENCODE_SET`` (`` !"#$&'(),/:;<=>?@[]\\^`{|}~``, ``+``,
  ``%``, controls and non-ASCII as UTF-8): ``genre=a,b`` goes out as
  ``genre=a%2Cb``, a space as ``%20``; ``addPathSegments`` encodes each
  segment with ``PATH_SEGMENT_ENCODE_SET``.

Aidoku (Aidoku/Aidoku ``Shared/Sources/Komga/KomgaHelper.swift``,
``request``; ``Shared/Tracking/Trackers/komga/KomgaApi.swift``): every
request carries ``Authorization: Basic`` (UTF-8) and ``Accept:
application/json`` from the start; ``URLSession.shared`` keeps cookies too.

Not modelled: OkHttp's 5 MiB response cache, connection reuse, timeouts.
"""

import base64
import email.message
import inspect
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.cookiejar import Cookie, DefaultCookiePolicy
from http.cookiejar import CookieJar as StdlibCookieJar
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

OKHTTP_VERSION = "5.0.0"
EXTENSION_USER_AGENT = "TachiyomiKomga/1.4.68"
TRACKER_USER_AGENT = "Mihon v0.19.1 (app.mihon)"
AIDOKU_USER_AGENT = "Aidoku/1 CFNetwork/3826.500.131 Darwin/24.5.0"

_HEX = "0123456789ABCDEF"
QUERY_COMPONENT_ENCODE_SET = " !\"#$&'(),/:;<=>?@[]\\^`{|}~"
PATH_SEGMENT_ENCODE_SET = ' "<>^`{}|/\\?#'


def _canonicalize(text: str, encode_set: str, *, plus_is_space: bool) -> str:
    out: list[str] = []
    for char in text:
        code = ord(char)
        if (
            code < 0x20
            or code == 0x7F
            or code >= 0x80
            or char in encode_set
            or char == "%"
            or (char == "+" and plus_is_space)
        ):
            out.extend(
                f"%{_HEX[byte >> 4]}{_HEX[byte & 15]}"
                for byte in char.encode("utf-8", "surrogatepass")
            )
        else:
            out.append(char)
    return "".join(out)


def encode_query_component(value: str) -> str:
    """``addQueryParameter``'s encoding of a name or value."""
    return _canonicalize(value, QUERY_COMPONENT_ENCODE_SET, plus_is_space=True)


def encode_path_segment(segment: str) -> str:
    """``addPathSegment``'s encoding of one segment."""
    return _canonicalize(segment, PATH_SEGMENT_ENCODE_SET, plus_is_space=False)


def http_url(base: str, segments: Iterable[str], params: Iterable[tuple[str, str]]) -> str:
    """``base.toHttpUrl().newBuilder().addPathSegments(...).addQueryParameter(...)...build()``."""
    path = "/".join(encode_path_segment(segment) for segment in segments)
    query = "&".join(
        f"{encode_query_component(name)}={encode_query_component(value)}" for name, value in params
    )
    return f"{base.rstrip('/')}/{path}" + (f"?{query}" if query else "")


def okhttp_basic(username: str, password: str) -> str:
    """``okhttp3.Credentials.basic(username, password)``: ISO-8859-1 by default."""
    raw = f"{username}:{password}".encode("latin-1", errors="replace")
    return "Basic " + base64.b64encode(raw).decode("ascii")


def utf8_basic(username: str, password: str) -> str:
    """Aidoku's ``Data("\\(username):\\(password)".utf8).base64EncodedString()``."""
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode("ascii")


class HttpError(Exception):
    """``eu.kanade.tachiyomi.network.HttpException``: what ``awaitSuccess`` throws outside 200-299."""

    def __init__(self, response: "Response") -> None:
        super().__init__(f"HTTP error {response.status_code}")
        self.response = response
        self.code = response.status_code


@dataclass(frozen=True)
class Response:
    status_code: int
    url: str
    headers: list[tuple[str, str]]
    content: bytes
    request_headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def headers_named(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def sent(self, name: str) -> str | None:
        """The value of a header the request carried."""
        for key, value in self.request_headers:
            if key.lower() == name.lower():
                return value
        return None


@dataclass(frozen=True)
class Exchange:
    """One request on the wire and its status, for tests to assert what a client sent."""

    method: str
    url: str
    request_headers: list[tuple[str, str]]
    status_code: int
    #: The whole answer, for checks of what the host sent back.
    response: "Response | None" = None

    def sent(self, name: str) -> str | None:
        for key, value in self.request_headers:
            if key.lower() == name.lower():
                return value
        return None


class AsyncHttpClient(Protocol):
    """What is needed of the client under test: ``httpx.AsyncClient`` (over ASGI) or Starlette's ``TestClient``."""

    def build_request(self, method: str, url: str, *, content: bytes | None = ...) -> Any: ...

    def send(self, request: Any, *, follow_redirects: bool = ...) -> Any: ...

    @property
    def cookies(self) -> Any: ...


class _SecureOriginPolicy(DefaultCookiePolicy):
    """The standard policy, plus: a ``Secure`` cookie is not taken from an http answer."""

    def set_ok(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        if cookie.secure and request.type not in ("https", "wss"):
            return False
        return super().set_ok(cookie, request)


class _SetCookieResponse:
    """The face ``http.cookiejar`` wants of a response: ``info()`` with its headers."""

    def __init__(self, headers: Iterable[tuple[str, str]]) -> None:
        self._message = email.message.Message()
        for name, value in headers:
            self._message[name] = value

    def info(self) -> email.message.Message:
        return self._message


class CookieJar:
    """The app's one cookie store, shared by every client built on it."""

    def __init__(self) -> None:
        self._jar = StdlibCookieJar(_SecureOriginPolicy())

    def cookie_header(self, url: str) -> str | None:
        request = urllib.request.Request(url)
        self._jar.add_cookie_header(request)
        return request.get_header("Cookie")

    def save(self, url: str, headers: Iterable[tuple[str, str]]) -> None:
        self._jar.extract_cookies(_SetCookieResponse(headers), urllib.request.Request(url))  # type: ignore[arg-type]

    def __iter__(self) -> Any:
        return iter(self._jar)

    def named(self, name: str) -> list[Cookie]:
        return [cookie for cookie in self._jar if cookie.name == name]

    def clear(self) -> None:
        self._jar.clear()


Authenticator = Callable[[Response, list[tuple[str, str]]], list[tuple[str, str]] | None]
"""Given the 401 and the headers that drew it, the headers to retry with, or ``None`` to give up."""


def komga_extension_authenticator(username: str, password: str, api_key: str = "") -> Authenticator:
    """The extension's ``authenticator { _, response -> ... }``."""

    def authenticate(
        response: Response, headers: list[tuple[str, str]]
    ) -> list[tuple[str, str]] | None:
        if api_key.strip() or any(name.lower() == "authorization" for name, _ in headers):
            return None
        return [*headers, ("Authorization", okhttp_basic(username, password))]

    return authenticate


_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_FOLLOW_UPS = 20


@dataclass
class OkHttpClient:
    """One client of the app, on the shared jar, sending through the client under test."""

    transport: AsyncHttpClient
    jar: CookieJar
    headers: Mapping[str, str] = field(default_factory=dict)
    authenticator: Authenticator | None = None
    accept_encoding: str = "gzip"
    exchanges: list[Exchange] = field(default_factory=list)

    async def _send_once(
        self, method: str, url: str, headers: list[tuple[str, str]], content: bytes | None
    ) -> Response:
        wire = list(headers)
        if not any(name.lower() == "user-agent" for name, _ in wire):
            wire.append(("User-Agent", f"okhttp/{OKHTTP_VERSION}"))
        wire.append(("Accept-Encoding", self.accept_encoding))
        cookies = self.jar.cookie_header(url)
        if cookies:
            wire.append(("Cookie", cookies))
        request = self.transport.build_request(method, url, content=content)
        for name in ("accept", "accept-encoding", "user-agent", "cookie", "connection"):
            if name in request.headers:
                del request.headers[name]
        for name, value in wire:
            request.headers[name] = value
        sent = self.transport.send(request, follow_redirects=False)
        answer = await sent if inspect.isawaitable(sent) else sent
        # The client under test keeps cookies of its own; only the app's jar may decide what is sent.
        self.transport.cookies.clear()
        response = Response(
            status_code=answer.status_code,
            url=str(answer.url),
            headers=list(answer.headers.multi_items()),
            content=answer.content,
            request_headers=list(request.headers.multi_items()),
        )
        self.jar.save(url, response.headers)
        self.exchanges.append(
            Exchange(method, url, response.request_headers, response.status_code, response)
        )
        return response

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        check: bool = False,
    ) -> Response:
        """``client.newCall(request).await()``; ``check=True`` is ``awaitSuccess()``."""
        merged = {**self.headers, **(headers or {})}
        wire = list(merged.items())
        for _ in range(_MAX_FOLLOW_UPS + 1):
            response = await self._send_once(method, url, wire, content)
            if response.status_code == 401 and self.authenticator is not None:
                retry = self.authenticator(response, wire)
                if retry is None:
                    break
                wire = retry
                continue
            location = response.header("Location")
            if response.status_code in _REDIRECTS and location:
                if response.status_code in (307, 308) and method not in ("GET", "HEAD"):
                    break
                target = urljoin(url, location)
                if urlsplit(target).netloc != urlsplit(url).netloc:
                    wire = [
                        (name, value) for name, value in wire if name.lower() != "authorization"
                    ]
                if method not in ("GET", "HEAD") and response.status_code not in (307, 308):
                    method, content = "GET", None
                url = target
                continue
            break
        else:
            raise RuntimeError(f"Too many follow-up requests: {_MAX_FOLLOW_UPS + 1}")
        if check and not 200 <= response.status_code < 300:
            raise HttpError(response)
        return response


class MihonNetwork:
    """Mihon's ``NetworkHelper``: the one cookie jar the extension and the tracker share."""

    def __init__(self, transport: AsyncHttpClient) -> None:
        self.transport = transport
        self.jar = CookieJar()

    def extension_client(
        self, username: str = "", password: str = "", api_key: str = ""
    ) -> OkHttpClient:
        """The Komga extension's client: its User-Agent, ``X-API-Key`` when set, Basic after a 401."""
        headers = {"User-Agent": EXTENSION_USER_AGENT}
        if api_key.strip():
            headers["X-API-Key"] = api_key
        return OkHttpClient(
            self.transport,
            self.jar,
            headers=headers,
            authenticator=komga_extension_authenticator(username, password, api_key),
        )

    def tracker_client(self) -> OkHttpClient:
        """The Komga tracker's client: no credentials of its own, only the shared cookies."""
        return OkHttpClient(self.transport, self.jar, headers={"User-Agent": TRACKER_USER_AGENT})


def aidoku_client(transport: AsyncHttpClient, username: str, password: str) -> OkHttpClient:
    """Aidoku's ``KomgaHelper.request``: Basic and ``Accept: application/json`` on every request."""
    return OkHttpClient(
        transport,
        CookieJar(),
        headers={
            "User-Agent": AIDOKU_USER_AGENT,
            "Authorization": utf8_basic(username, password),
            "Accept": "application/json",
        },
        accept_encoding="gzip, deflate, br",
    )
