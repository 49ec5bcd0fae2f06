"""KOReader's progress sync, served at ``/_/kosync`` over the host's readers and progress store."""

from toshokan.core.face import AppState, Face
from toshokan.faces.kosync.routes import PREFIX, kosync_routes

FACE = Face(
    name="kosync",
    prefix=PREFIX,
    routes=kosync_routes,
    names=frozenset({"kosync"}),
    reads=frozenset({AppState.CORE}),
)

__all__ = ["FACE", "PREFIX"]
