"""Fakes, fixtures and helpers more than one test folder uses (the root conftest registers
the fixture modules, so no folder imports another's conftest)."""
