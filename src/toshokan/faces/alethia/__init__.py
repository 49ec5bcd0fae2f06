"""The Alethia app's dialect, served at ``/_/alethia`` over the same core as the spec's face."""

from toshokan.faces.alethia.routes import PREFIX, routes

__all__ = ["PREFIX", "routes"]
