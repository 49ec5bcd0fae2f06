"""The reader's static files under content-hashed names, read once and kept in memory.

A name that changes whenever the content does lets browsers keep a file for a
year without asking again (``immutable``), and never run an old script with a
new page. The files are few and small, so they are read, hashed and gzipped
once at start-up rather than on each request.
"""

import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

STATIC = Path(__file__).parent / "static"
#: The reader's script modules; ``app.js`` imports the others.
MODULES = tuple(sorted(path.name for path in STATIC.glob("*.js")))
#: Files the page shell links to; everything else in ``static/`` is not served.
SERVED = (*MODULES, "app.css", "icon.svg")


@dataclass(frozen=True)
class Asset:
    """One file: its bytes, their gzip, and the hashed name it is served under."""

    name: str
    body: bytes
    gzipped: bytes
    media_type: str

    @classmethod
    def read(cls, path: Path) -> "Asset":
        body = path.read_bytes()
        digest = hashlib.sha256(body).hexdigest()[:12]
        name = f"{path.stem}.{digest}{path.suffix}"
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type.endswith(("javascript", "svg+xml")):
            media_type += "; charset=utf-8"
        return cls(name, body, gzip.compress(body, mtime=0), media_type)


class Assets:
    """The served files by logical name (``app.js``) and by hashed name (``app.1a2b3c4d5e6f.js``)."""

    def __init__(self, folder: Path = STATIC, names: tuple[str, ...] = SERVED):
        self.by_logical = {name: Asset.read(folder / name) for name in names}
        self.by_hashed = {asset.name: asset for asset in self.by_logical.values()}

    def hashed(self, logical: str) -> str:
        return self.by_logical[logical].name

    def get(self, hashed: str) -> Asset | None:
        return self.by_hashed.get(hashed)
