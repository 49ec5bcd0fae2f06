from tests.edge.conftest import make_host
from tests.sources.local.conftest import make_source

__all__ = ["make_host", "make_source"]
