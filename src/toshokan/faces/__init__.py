"""The faces over the core: every way readers reach the sources, each a package here.

Each face translates its readers' requests into calls on :class:`toshokan.core.Core`
and the answers back into its own shapes; validation, authorisation, caching and
images stay in the core. A face exports one :class:`toshokan.core.face.Face`
declaring its prefix, routes, names under ``/_/``, image routes and needs, and
imports nothing from another face. :data:`FACES` is the one list the router,
the edge and the core read: adding a face is a new package and a line here.
"""

from toshokan.core.face import Face
from toshokan.faces import (
    alethia,
    downloads,
    follows,
    komga,
    kosync,
    metrics,
    opds,
    ready,
    sources,
    spec,
    web,
)

#: Every face, in the order their routes are tried: the spec's interface last, since
#: its ``/{source}/{manga}`` would match any other face's two-segment path.
FACES: tuple[Face, ...] = (
    web.FACE,
    sources.FACE,
    opds.FACE,
    alethia.FACE,
    kosync.FACE,
    follows.FACE,
    downloads.FACE,
    komga.FACE,
    ready.FACE,
    metrics.FACE,
    spec.FACE,
)

__all__ = ["FACES"]
