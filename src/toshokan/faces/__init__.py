"""Faces over the core for readers that do not speak the spec's JSON interface.

Each face translates its readers' requests into calls on :class:`toshokan.core.Core`
and the answers back into its own shapes; validation, authorisation, caching and
images stay in the core.
"""
