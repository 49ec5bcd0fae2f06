"""The host manifest served at ``GET /``."""

from enum import StrEnum

from pydantic import Field

from toshokan.models.base import SpecModel

LOWER_AZ_2_50 = r"^[a-z]{2,50}$"


class SourceStatus(StrEnum):
    ACTIVE = "active"
    DEPRECATED = "deprecated"
    REMOVED = "removed"


class SourceManifestEntry(SpecModel):
    version: str
    hash: str
    status: SourceStatus = SourceStatus.ACTIVE


class HostManifest(SpecModel):
    name: str = Field(pattern=LOWER_AZ_2_50)
    author: str = Field(pattern=LOWER_AZ_2_50)
    repository: str
    version: str
    hash: str = ""
    sources: list[str]
    manifest: dict[str, SourceManifestEntry]
