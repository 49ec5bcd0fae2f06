"""The official OPDS 2.0 and Readium JSON Schemas, checked offline with ``jsonschema``.

The schema files under ``schemas/`` are copies of the upstream files (see its
README). Each is registered under the URIs other schemas reach it by (its
``$id``, and the ``http://`` or ``drafts.opds.io`` spellings some of them
use), in a local :class:`referencing.Registry` that has no retrieval
function: a reference to anything not copied here fails instead of fetching.

Two things are adapted in memory, neither changing what a document must be:
the BCP 47 patterns use ECMA-262 named groups (``(?<name>``), which Python's
``re`` rejects, so they are read as plain groups; and formats (``uri``,
``uri-template``, ``date-time``...) are checked, as the schemas intend.
"""

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

SCHEMAS = Path(__file__).parent / "schemas"
OPDS = "https://specs.opds.io/schema/"
READIUM = "https://readium.org/webpub-manifest/schema/"
FEED = f"{OPDS}feed.schema.json"
PUBLICATION = f"{OPDS}publication.schema.json"
MANIFEST = f"{READIUM}publication.schema.json"

#: Spellings by which the schemas refer to one another, besides each file's own ``$id``.
ALIASES = {
    # readium's properties.schema.json points at OPDS's link properties by their draft address.
    "https://drafts.opds.io/schema/properties.schema.json": "opds/properties.schema.json",
}

_NAMED_GROUP = re.compile(r"\(\?<(?![=!])[A-Za-z][A-Za-z0-9]*>")


def _python_regex(pattern: str) -> str:
    return _NAMED_GROUP.sub("(?:", pattern)


def _adapted(node: Any, key: str = "") -> Any:
    if isinstance(node, dict):
        if key == "patternProperties":
            return {_python_regex(k): _adapted(v) for k, v in node.items()}
        return {k: _adapted(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_adapted(item) for item in node]
    if key == "pattern" and isinstance(node, str):
        return _python_regex(node)
    return node


@cache
def registry() -> Registry[Any]:
    resources: list[tuple[str, Resource[Any]]] = []
    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        relative = path.relative_to(SCHEMAS).as_posix()
        contents = _adapted(json.loads(path.read_text(encoding="utf-8")))
        resource = DRAFT7.create_resource(contents)
        family, name = relative.split("/", 1)
        if family == "opds":
            uris = [f"{OPDS}{name}"]
        else:  # some readium files still name their siblings with http://
            uris = [f"{READIUM}{name}", f"http://readium.org/webpub-manifest/schema/{name}"]
        uris += [alias for alias, target in ALIASES.items() if target == relative]
        resources += [(uri, resource) for uri in uris]
    return Registry().with_resources(resources)


def errors(document: Any, schema_uri: str) -> list[ValidationError]:
    """Every way ``document`` breaks the schema at ``schema_uri`` (empty when it is valid)."""
    validator = Draft7Validator(
        {"$ref": schema_uri},
        registry=registry(),
        format_checker=Draft7Validator.FORMAT_CHECKER,
    )
    return list(validator.iter_errors(document))


def assert_valid(document: Any, schema_uri: str) -> None:
    found = errors(document, schema_uri)
    assert not found, "\n".join(
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found[:10]
    )


def assert_feed(document: Any) -> None:
    assert_valid(document, FEED)


def assert_manifest(document: Any) -> None:
    assert_valid(document, MANIFEST)
