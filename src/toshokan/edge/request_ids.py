"""Request ids made without a system call: a random prefix per process, then a counter.

An id only has to tell one request's lines from every other's, across the
worker processes and restarts of a host. 64 random bits drawn once per
process (again in a forked child, which would otherwise repeat its parent's
ids) make two processes sharing a prefix as unlikely as a collision of random
ids is for any log; the counter never repeats within a process. Reading
``os.urandom`` for every request instead is a system call per request. An id
is 32 hexadecimal digits, as a random one was.
"""

import itertools
import os

_prefix = ""
_counter = itertools.count()


def _draw() -> None:
    global _prefix, _counter
    _prefix = os.urandom(8).hex()
    _counter = itertools.count()


_draw()
os.register_at_fork(after_in_child=_draw)


def new_request_id() -> str:
    """An id no other request of this host has had."""
    return f"{_prefix}{next(_counter):016x}"
