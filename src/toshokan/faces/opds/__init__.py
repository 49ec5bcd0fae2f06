"""The OPDS face: an OPDS 1.2 catalogue with page streaming (OPDS-PSE) at ``/_/opds``."""

from toshokan.faces.opds.routes import opds_routes

__all__ = ["opds_routes"]
