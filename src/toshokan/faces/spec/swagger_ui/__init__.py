"""Swagger UI 5, vendored from the npm package ``swagger-ui-dist`` so the API docs need no internet.

Version 5 reads OpenAPI 3.1, which the host's document is. Only the files the
docs page loads are kept, with Swagger UI's license and notice beside them
(Apache-2.0, ``dist/LICENSE``). To update: ``npm pack swagger-ui-dist@5``,
copy the same file names into ``dist/`` and set :data:`VERSION`.
"""

from pathlib import Path

#: The ``swagger-ui-dist`` release in ``dist/``.
VERSION = "5.35.0"
#: The folder the docs page's scripts, styles and icons are served from.
DIST = Path(__file__).parent / "dist"
