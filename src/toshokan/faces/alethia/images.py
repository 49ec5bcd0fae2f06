"""Image URLs the app can load: it sends no auth header, no cookie and no Referer.

Links to the host itself (a local library's pages and covers) already work
without headers: the source's own routes are signed, expiring links when it
requires authentication. A link to an upstream whose images need a Referer or
credentials cannot be handed to the app as it is; the host must fetch it on
the app's behalf, through the host's one image pipeline.
"""

from toshokan.core import Core, Urls
from toshokan.models import SourceConfiguration


def needs_headers(config: SourceConfiguration) -> bool:
    """Whether the source's upstream images are served only with a Referer or credentials."""
    return bool(config.referer) or config.auth.required


def header_free(
    core: Core, config: SourceConfiguration, urls: list[str], base_url: str
) -> list[str]:
    """``urls`` as links an image loader without headers can fetch."""
    if not needs_headers(config):
        return urls
    own = Urls(base_url).path("/")
    return [url if url.startswith(own) else via_host(core, config, url, base_url) for url in urls]


def via_host(core: Core, config: SourceConfiguration, url: str, base_url: str) -> str:
    """A signed, expiring, header-free host URL that fetches ``url`` as the upstream requires."""
    return core.images.signed_url(base_url, config.slug, url)
