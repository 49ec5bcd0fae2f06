"""Following series: follows per reader, checks on a schedule, updates, and their announcement.

:func:`follows_for` is where the core gets its follows and their job engine: the one
place they are wired.
"""

from typing import TYPE_CHECKING

from toshokan.core.follows.service import Follow, Follows, Originals
from toshokan.core.jobs import Jobs

if TYPE_CHECKING:
    from toshokan.core.parts import CoreParts


def engine_for(core: "CoreParts") -> Jobs:
    """The job engine of the deployment: procrastinate on ``[cluster] database``, else
    APScheduler over the host's SQLite."""
    url = core.settings.cluster.database
    if url is not None:
        from toshokan.core.jobs.cluster import ProcrastinateJobs

        return ProcrastinateJobs(url)
    from toshokan.core.jobs.local import LocalJobs

    return LocalJobs(core.database, core.settings.host.data_dir / "jobs.lock")


def follows_for(core: "CoreParts", originals: Originals | None = None) -> Follows:
    """The core's follows, on the engine its deployment calls for; a kept series followed as
    its ``originals``."""
    return Follows(core, engine_for(core), originals)


__all__ = ["Follow", "Follows", "Originals", "follows_for"]
