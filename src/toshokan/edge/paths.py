"""Which budget a request spends, told from its path alone.

Readers fetch one image per page, so page images and covers count against a
budget of their own, larger than the API's: reading a long chapter never
exhausts the budget for searches. The web reader's static assets share that
budget rather than the API's. Health checks spend nothing, so a load
balancer is never refused.
"""

import re
from enum import Enum


class Budget(Enum):
    REQUESTS = "requests"
    IMAGES = "images"
    EXEMPT = "exempt"


#: Routes serving images (or static assets) under the host's namespace ``/_/``.
#: Adding a kind of image route is one line here.
IMAGE_ROUTES = (
    r"/_/image(?:/|$)",  # the host's image endpoint (covers, thumbnails, proxied pages)
    r"/_/opds/[a-z]+/series/[^/]+/[^/]+/pages/",  # OPDS page streaming
    r"/_/(?:docs/)?assets/",  # the web reader's and the API docs' static files
    r"/_/(?!(?:opds|docs|alethia|kosync|image|assets)/)[a-z]+/",  # a source's own routes: pages, covers
)
_IMAGE = re.compile("|".join(f"(?:{route})" for route in IMAGE_ROUTES))
_HEALTH = re.compile(r"/[a-z]+/health/?")


def budget_of(path: str) -> Budget:
    if path.startswith("/_/"):
        return Budget.IMAGES if _IMAGE.match(path) else Budget.REQUESTS
    if path.endswith(("/health", "/health/")) and _HEALTH.fullmatch(path):
        return Budget.EXEMPT
    return Budget.REQUESTS
