"""Faces: the host's interface spoken in the dialects of readers that do not speak the spec.

Each face translates requests into calls on :class:`toshokan.core.Core` and
its answers into the reader's shapes. It never validates, authorises, caches
or maps errors itself, so the same request is valid or invalid on every face.
"""
