"""The adapters that ship with toshokan; each is a package registered as an entry point."""
