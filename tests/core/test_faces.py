"""The faces are assembled from one list, and what each declares is what the host does.

The names a face takes under ``/_/`` are refused as source slugs and are not
budgeted as a source's images; its routes lie where it says; and no manga
slug a source makes can be taken for a word the faces route under a source.
"""

import pkgutil
import re

import pytest
from starlette.routing import BaseRoute, Mount, Route

from toshokan import faces
from toshokan.application import create_app
from toshokan.config import load_settings
from toshokan.core import ConfigurationError
from toshokan.edge.paths import BudgetKind, PathBudgets
from toshokan.faces import FACES
from toshokan.sdk.slugs import RESERVED_SLUGS, slugify

TAKEN = sorted(name for face in FACES for name in face.names)


def paths(routes: list[BaseRoute], prefix: str = "") -> list[str]:
    found = []
    for route in routes:
        if isinstance(route, Route):
            found.append(prefix + route.path)
        elif isinstance(route, Mount):
            found.extend(paths(list(route.routes), prefix + route.path))
    return found


def test_the_list_holds_every_face_once():
    """Every package under faces/ is plugged in, once: a face written but not listed is caught."""
    packages = [info.name for info in pkgutil.iter_modules(faces.__path__) if info.ispkg]
    assert sorted(face.name for face in FACES) == sorted(packages)
    assert len(TAKEN) == len(set(TAKEN))  # no two faces claim one name
    assert FACES[-1].name == "spec"  # its /{source}/{manga} would match any other's path


@pytest.mark.parametrize("name", TAKEN)
def test_a_name_a_face_takes_is_no_source_slug(name, tmp_path):
    settings = load_settings(
        None, host={"data_dir": str(tmp_path)}, sources={name: {"adapter": "local"}}
    )
    with pytest.raises(ConfigurationError, match=f"the host serves /_/{name} itself"):
        create_app(settings)


@pytest.mark.parametrize("name", TAKEN)
def test_a_name_a_face_takes_is_not_budgeted_as_a_sources_images(name):
    budgets = PathBudgets(FACES)
    face = next(face for face in FACES if name in face.names)
    path = f"/_/{name}/anything"
    declared = any(re.match(route, path) for route in face.image_routes)
    assert budgets.of(path) is (BudgetKind.IMAGES if declared else BudgetKind.REQUESTS)
    assert budgets.of("/_/shelf/anything") is BudgetKind.IMAGES  # a source's own route


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.name)
def test_every_route_of_a_face_is_under_its_prefix_or_names(face):
    under = (face.prefix, *(f"/_/{name}" for name in face.names))
    outside = [path for path in paths(list(face.routes())) if not path.startswith(under)]
    assert outside == []


def test_no_manga_slug_is_a_word_routed_beside_a_manga():
    """Where a face routes ``{source}/{manga}``, its fixed words there are never manga slugs."""
    words = set()
    for face in FACES:
        beside = {
            path.rsplit("/", 1)[0]
            for path in paths(list(face.routes()))
            if path.endswith("{source}/{manga}")
        }
        words |= {
            path.rsplit("/", 1)[1]
            for path in paths(list(face.routes()))
            if path.rsplit("/", 1)[0] in beside and "{" not in path.rsplit("/", 1)[1]
        }
    assert words == RESERVED_SLUGS
    assert all(slugify(word) != word for word in words)
