"""Each face's failures in its own shape: handlers scoped to the face's prefix, and the sign-in
routes whose failures take the authenticate form named by the faces, not by the edge."""

from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from toshokan.core.face import Face, exception_handlers
from toshokan.edge.paths import PathBudgets
from toshokan.errors import HostError, NotFound
from toshokan.faces import FACES


def refusing(request: Request) -> Response:
    raise NotFound("gone")


def shaped(shape: str) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handler(request: Request, error: Exception) -> Response:
        return PlainTextResponse(f"{shape}: {error}", 404)

    return handler


def test_a_failure_is_answered_by_the_face_whose_prefix_the_path_is_under() -> None:
    root = Face(
        name="root",
        prefix="/",
        routes=lambda: [Route("/thing", refusing)],
        exception_handlers={HostError: shaped("root")},
    )
    other = Face(
        name="other",
        prefix="/_/other",
        routes=lambda: [Route("/_/other/thing", refusing)],
        exception_handlers={HostError: shaped("other")},
    )
    silent = Face(
        name="silent", prefix="/_/silent", routes=lambda: [Route("/_/silent/x", refusing)]
    )
    faces = [root, other, silent]
    app = Starlette(
        routes=[route for face in faces for route in face.routes()],
        exception_handlers=exception_handlers(faces),
    )
    client = TestClient(app)
    assert client.get("/thing").text == "root: gone"
    assert client.get("/_/other/thing").text == "other: gone"
    # A face with no handler of its own is answered by the face at ``/``.
    assert client.get("/_/silent/x").text == "root: gone"
    # Whichever face is listed first.
    reversed_app = Starlette(
        routes=[route for face in faces for route in face.routes()],
        exception_handlers=exception_handlers(list(reversed(faces))),
    )
    assert TestClient(reversed_app).get("/_/other/thing").text == "other: gone"


def test_a_face_leaves_a_failure_to_the_face_at_the_root_by_answering_none() -> None:
    async def only_refusals(request: Request, error: Exception) -> Response | None:
        return None if "bug" in str(error) else PlainTextResponse("mine", 404)

    def bug(request: Request) -> Response:
        raise NotFound("a bug")

    root = Face(
        name="root", prefix="/", routes=list, exception_handlers={HostError: shaped("root")}
    )
    other = Face(
        name="other",
        prefix="/_/other",
        routes=lambda: [Route("/_/other/thing", refusing), Route("/_/other/bug", bug)],
        exception_handlers={HostError: only_refusals},
    )
    app = Starlette(routes=other.routes(), exception_handlers=exception_handlers([root, other]))
    client = TestClient(app)
    assert client.get("/_/other/thing").text == "mine"
    assert client.get("/_/other/bug").text == "root: a bug"


def test_the_sign_in_routes_are_those_the_faces_name() -> None:
    paths = PathBudgets(FACES)
    assert paths.answers_auth_failures("POST", "/mangadex/authenticate")
    assert paths.answers_auth_failures("POST", "/_/alethia/mangadex/authenticate")
    assert not paths.answers_auth_failures("GET", "/mangadex/authenticate")
    assert not paths.answers_auth_failures("POST", "/_/opds/mangadex/authenticate")
    assert not paths.answers_auth_failures("POST", "/mangadex/search")
