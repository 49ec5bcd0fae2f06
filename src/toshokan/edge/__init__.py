"""The edge: the outermost layer, between the server and the application.

It bounds what clients send, resolves trusted proxies, answers CORS,
counts budgets, replays cached public answers and writes the access log;
:mod:`toshokan.serving` bounds connections and runs the worker processes.
"""

from toshokan.edge.accesslog import AccessLog
from toshokan.edge.edge import Edge

__all__ = ["AccessLog", "Edge"]
