from tests.edge.conftest import make_host

__all__ = ["make_host"]
