"""The import graph of the `lazyloop` package, read from the source (never by importing it):
every `import` and `from ... import`, at module level or inside a function, with relative
imports resolved. `import a.b` is an edge to `a.b`; `from a import b` is an edge to `a.b`
when `a.b` is a module of the package, else to `a`."""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "lazyloop"


def modules(root: pathlib.Path = ROOT) -> dict:
    """{dotted module name: path} of every module of the package."""
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: pathlib.Path, known) -> set:
    """The modules of the package that module `name` (at `path`) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        out |= {t for t in targets if t in known}
    out.discard(name)
    return out


def graph(root: pathlib.Path = ROOT) -> dict:
    """{module: the package's modules it imports}."""
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}
