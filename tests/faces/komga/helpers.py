"""What the Komga face's tests share: the host's secret, the address a person types, and
Mihon (the Komga extension over the app's one cookie jar) set up for a host."""

from typing import cast

from tests.faces.komga.clients.mihon_extension import MihonKomgaSource
from tests.faces.komga.clients.okhttp_session import AsyncHttpClient, MihonNetwork
from tests.helpers.hosts import add_reader
from toshokan.testing import ServedHost

__all__ = ["ATTEMPTS", "HOST", "SECRET", "SERVER", "add_reader", "mihon"]

SECRET = "test-secret-0123456789abcdef0123"
#: The address a person types into the extension: the host's, then the face's prefix.
HOST = "http://testserver"
SERVER = f"{HOST}/_/komga"
#: Failed sign-ins a client may make a minute on the hosts here.
ATTEMPTS = 6


def mihon(
    host: ServedHost, username: str = "", password: str = ""
) -> tuple[MihonNetwork, MihonKomgaSource]:
    """Mihon with the Komga extension set up for this host: the address, a name and password."""
    # httpx's client is what the protocol describes; its richer signatures are not the protocol's.
    network = MihonNetwork(cast(AsyncHttpClient, host.client))
    return network, MihonKomgaSource(network.extension_client(username, password), SERVER)
