"""Request ids made without a system call: a random prefix per process, then a counter.

An id only has to tell one request's lines from every other's, across the
worker processes and restarts of a host. 64 random bits drawn once per
process (again in a forked child, which would otherwise repeat its parent's
ids) make two processes sharing a prefix as unlikely as a collision of random
ids is for any log; the counter never repeats within a process. Reading
``os.urandom`` for every request instead is a system call per request. An id
is 32 hexadecimal digits, as a random one was, made as the bytes the answer's
header carries (the access log's writer thread decodes them, off the request
path).
"""

import itertools
import os

_template = b""
_counter = itertools.count()


def _draw() -> None:
    global _template, _counter
    _template = os.urandom(8).hex().encode() + b"%016x"
    _counter = itertools.count()


_draw()
os.register_at_fork(after_in_child=_draw)


def new_request_id() -> bytes:
    """An id no other request of this host has had."""
    return _template % next(_counter)
