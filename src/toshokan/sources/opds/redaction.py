"""Keeping catalogue keys and passwords out of every log line, the HTTP client's included.

Kavita-style catalogues carry their key in every URL, and httpx logs each
request's URL at INFO. A filter on httpx's logger takes the secrets of every
OPDS source out of its messages before any handler sees them.
"""

import logging

_SECRETS: set[str] = set()


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            message = record.getMessage()
            if any(secret in message for secret in _SECRETS):
                for secret in _SECRETS:
                    message = message.replace(secret, "***")
                record.msg, record.args = message, ()
        return True


_FILTER = _Redact()


def keep_out_of_logs(*secrets: str) -> None:
    """Never let ``secrets`` reach a log line of the HTTP client."""
    _SECRETS.update(secret for secret in secrets if len(secret) >= 4)
    for name in ("httpx", "httpcore"):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
