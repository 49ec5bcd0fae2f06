"""No module of the host imports itself through others: the house has no import circle.

A circle (the core's service imports the visit, which names the service back) means
neither module can be read, changed or tested without the other, and the next
module added to it joins the knot. Every import counts, those made only for type
checking or inside a function too: they tie modules together just the same.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import toshokan

SRC = Path(toshokan.__file__).parent.parent


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in SRC.joinpath("toshokan").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The host's modules ``name`` imports: ``from a import b`` is the module ``a.b`` when there
    is one, else ``a``."""

    def module(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(m for alias in node.names if (m := module(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            origin = (
                (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            )
            found.update(m for alias in node.names if (m := module(f"{origin}.{alias.name}")))
    found.discard(name)
    return found


def circles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for edge in edges:
                if edge not in index:
                    index[edge] = low[edge] = len(index)
                    stack.append(edge)
                    on_stack.add(edge)
                    work.append((edge, iter(sorted(graph[edge]))))
                    break
                if edge in on_stack:
                    low[node] = min(low[node], index[edge])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        yield sorted(group)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_the_walk_sees_the_imports():
    found = graph()
    assert "toshokan.core.visit" in found["toshokan.core.service"]
    assert "toshokan.core.authority" in found["toshokan.core.visit"]


def test_the_walk_finds_a_circle():
    assert list(circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others():
    assert list(circles(graph())) == []
