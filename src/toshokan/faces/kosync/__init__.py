"""KOReader's progress sync, served at ``/_/kosync`` over the host's readers and progress store."""

from toshokan.faces.kosync.routes import PREFIX, kosync_routes

__all__ = ["PREFIX", "kosync_routes"]
