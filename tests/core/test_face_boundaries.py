"""Every face reaches the host through the core alone: no face imports another, nor the SDK.

A face that imports another's module breaks when that face changes, and one
that reaches into the SDK duplicates what the core owns (authorisation,
credentials, caching). Walking the import statements of every module under
``src/toshokan/faces`` keeps that true as faces are added.
"""

import ast
from pathlib import Path

import toshokan

FACES = Path(toshokan.__file__).parent / "faces"
#: What a face may import from the host besides its own package.
ALLOWED = ("toshokan.core", "toshokan.models", "toshokan.errors", "toshokan.config")
VERSION = "toshokan.__version__"


def imported(path: Path, package: str) -> set[str]:
    """The modules and names ``path`` imports (``from a import b`` is ``a`` and ``a.b``),
    relative imports resolved against ``package``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = (
                (f"{base}.{node.module}" if node.module else base)
                if node.level
                else node.module or ""
            )
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def trespasses(face: str, module: str) -> bool:
    own = f"toshokan.faces.{face}"
    if module == own or module.startswith(own + "."):
        return False
    if module in ("toshokan", VERSION) or not module.startswith("toshokan"):
        return False  # the package's version, and libraries
    return not any(module == name or module.startswith(name + ".") for name in ALLOWED)


def face_imports() -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for package in sorted(p for p in FACES.iterdir() if (p / "__init__.py").exists()):
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(FACES.parent.parent).with_suffix("").parts
            module_package = ".".join(parts[:-1])
            found.extend(
                (package.name, str(path.relative_to(FACES)), name)
                for name in sorted(imported(path, module_package))
            )
    return found


def test_the_walk_sees_every_face_and_its_imports():
    faces = {face for face, _, _ in face_imports()}
    assert {"spec", "opds", "alethia", "web"} <= faces
    assert ("opds", "opds/routes.py", "toshokan.faces.opds.catalogue") in face_imports()


def test_no_face_imports_another_face_or_the_sdk():
    trespassing = [
        f"{path} imports {module}"
        for face, path, module in face_imports()
        if trespasses(face, module)
    ]
    assert trespassing == []


def test_the_rest_of_the_host_knows_the_faces_only_by_their_list():
    """Adding a face touches its package and ``FACES``: no module outside ``faces/`` names a
    face (the application, the edge, the core and the command line read the list)."""
    source = FACES.parent
    naming = [
        f"{path.relative_to(source)} imports {module}"
        for path in sorted(source.rglob("*.py"))
        if FACES not in path.parents
        for module in sorted(imported(path, "toshokan"))
        if module.startswith("toshokan.faces.") and module != "toshokan.faces.FACES"
    ]
    assert naming == []
