"""What ``check-config``, and ``serve`` given a bad configuration, find wrong before anything
starts: every problem, each once, for one line.

A user who fixes the first problem named, only to be shown the next on the
following run, runs the command once per mistake. So the tables of the file
that fail are named and set aside (:func:`toshokan.config.settings_and_problems`)
and the checks go on over the rest: the data directory, the database, and each
source's settings and declared configuration. Nothing here writes: no secret is
generated, no adapter started, no index built, and the database is only asked
whether it answers.
"""

from dataclasses import dataclass, field

from toshokan.config import HostSettings
from toshokan.core.data_dir import DataDirError
from toshokan.core.data_dir import check as check_data_dir
from toshokan.core.database import DatabaseUnavailable, check_database
from toshokan.core.face import names_of
from toshokan.core.hosted import ConfigurationError, build_source, host_services
from toshokan.core.keeping.keeper import keep_library
from toshokan.models import SourceStatus


@dataclass
class Problems:
    """What is wrong, told apart: the configuration's own problems (a value, a source), and
    the places and servers it names that cannot be used (the data directory, the database),
    which a configuration without the others' problems is stopped by just the same."""

    configuration: list[str] = field(default_factory=list)
    surroundings: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.configuration or self.surroundings)


def configuration_problems(settings: HostSettings) -> Problems:
    """Every problem of ``settings`` beyond the file's own tables, in the order met."""
    from toshokan.faces import FACES

    problems = Problems()
    try:
        check_data_dir(settings.host.data_dir)
    except DataDirError as error:
        problems.surroundings.append(str(error))
    try:
        check_database(settings)
    except DatabaseUnavailable as error:
        problems.surroundings.append(str(error))
    # A throwaway signing key and no shared claims: building adapters writes nothing.
    services = host_services(settings, secret=b"check-config", claims=None)
    face_names = names_of(FACES)
    serving = []
    for slug, section in settings.sources.items():
        if not section.enabled:
            continue
        try:
            hosted = build_source(slug, section, services, face_names)
            if hosted.status is not SourceStatus.REMOVED:
                hosted.configuration()
                serving.append(hosted)
        except ConfigurationError as error:
            problems.configuration.append(str(error))
    try:  # kept copies go into a library the host serves, or are seen by no one
        keep_library(settings.keep, serving)
    except ConfigurationError as error:
        problems.configuration.append(str(error))
    return problems
