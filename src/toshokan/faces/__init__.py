"""Faces: the ways readers other than the spec's JSON interface reach the core."""
