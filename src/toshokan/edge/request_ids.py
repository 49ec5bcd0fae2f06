"""Request ids made without a system call: a random prefix per process, then a counter.

An id only has to tell one request's lines from every other's, across the
worker processes and restarts of a host. 64 random bits drawn once per
process (again in a forked child, which would otherwise repeat its parent's
ids) make two processes sharing a prefix as unlikely as a collision of random
ids is for any log; the counter never repeats within a process. Reading
``os.urandom`` for every request instead is a system call per request. An id
is 32 hexadecimal digits, as a random one was, made as the bytes the answer's
header carries (the access log's writer thread decodes them, off the request
path): the prefix, then the counter in 16 digits.

The ids are made :data:`BATCH` at a time, each batch's 14 leading digits of the
counter formatted once and its last two digits taken from a table: formatting
the whole counter for each request costs it several times what taking the
next id of a batch does. The ids are the same as one at a time would be.
"""

import itertools
import os
from collections.abc import Iterator
from functools import partial

#: Ids made at once: the counter's last two hexadecimal digits.
BATCH = 256
_ENDS = [b"%02x" % end for end in range(BATCH)]


def _batch(prefix: bytes, number: int) -> list[bytes]:
    """The ``number``-th batch of a process's ids, in order."""
    head = prefix + b"%014x" % number
    return [head + end for end in _ENDS]


def _ids() -> Iterator[bytes]:
    prefix = os.urandom(8).hex().encode()
    return itertools.chain.from_iterable(map(partial(_batch, prefix), itertools.count()))


#: This process's ids, each an id no other request of this host has had: ``next(new_ids)``
#: (read from the module each time: a forked child has its own).
new_ids = _ids()


def _draw() -> None:
    global new_ids
    new_ids = _ids()


os.register_at_fork(after_in_child=_draw)
