"""KOReader's progress sync, served at ``/_/kosync`` over the host's readers and progress store."""

from toshokan.core.face import Face, Need
from toshokan.faces.kosync.routes import PREFIX, kosync_routes

FACE = Face(
    name="kosync",
    prefix=PREFIX,
    routes=kosync_routes,
    names=frozenset({"kosync"}),
    needs=frozenset({Need.CORE}),
)

__all__ = ["FACE", "PREFIX"]
