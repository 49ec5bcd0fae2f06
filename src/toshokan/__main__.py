"""``python -m toshokan``: the same as the ``toshokan`` command."""

from toshokan.cli import main

main()
