"""The layout keeps its promises (issue 9): each folder of ``scoring/`` touches only what its name
says, arrows point downwards, no import cycle, no import hidden inside a function, no module past
450 lines, and the pages use only the packages' public names. Read from the source with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCORING = ROOT / "scoring"
MAX_LINES = 450
#: What each layer of scoring/ may import from the project (besides itself) and from outside.
LAYERS: dict[str, tuple[set[str], set[str]]] = {
    "scoring.core": (set(), {"sqlalchemy", "alembic", "openai", "streamlit", "httpx"}),
    "scoring.store": ({"scoring.core"}, {"openai", "streamlit"}),
    "scoring.judge": ({"scoring.core", "scoring.store"}, {"streamlit"}),
    "scoring.review": ({"scoring.core", "scoring.store"}, {"openai", "streamlit"}),
    "scoring.export": ({"scoring.core", "scoring.store", "scoring.judge", "scoring.review"}, {"openai", "streamlit"}),
}
PACKAGES = ("scoring.store", "scoring.judge", "scoring.review")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def scoring_modules() -> dict[str, Path]:
    return {module_name(p): p for p in SCORING.rglob("*.py") if "versions" not in p.parts}


MODULES = scoring_modules()


def imports(path: Path, top_level_only: bool = True) -> list[tuple[str, ast.stmt]]:
    """(module imported, node): ``from a.b import c`` gives ``a.b.c`` when that is a module, else ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: list[tuple[str, ast.stmt]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, node) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append((sub if sub in MODULES else node.module, node))
    return found


def layer_of(module: str) -> str | None:
    for layer in LAYERS:
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_layer_imports_only_what_its_folder_allows(module: str) -> None:
    own = layer_of(module)
    for target, node in imports(MODULES[module]):
        root = target.split(".")[0]
        assert root != "streamlit", f"{module} imports streamlit (line {node.lineno}): scoring/ never does"
        if own is None:
            continue
        allowed, banned = LAYERS[own]
        assert root not in banned, f"{module} ({own}) may not import {target} (line {node.lineno})"
        if target.startswith("scoring."):
            other = layer_of(target)
            assert other in (own, None, *allowed) and not target.startswith("scoring.cli"), (
                f"{module} ({own}) may not import {target} (line {node.lineno}): arrows point down only"
            )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_hides_inside_a_function_and_no_module_is_too_long(module: str) -> None:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    hidden = sorted({i.lineno for f in functions for i in ast.walk(f) if isinstance(i, ast.Import | ast.ImportFrom)})
    assert hidden == [], f"{module}: imports inside functions at lines {hidden}"
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES}): split it by job"


def test_no_import_cycle_between_modules() -> None:
    graph = {m: sorted({t for t, _ in imports(p) if t in MODULES and t != m}) for m, p in MODULES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


@pytest.mark.parametrize("path", sorted([*ROOT.glob("views/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]),
                         ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_pages_use_only_public_names_of_the_packages(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scoring"):
            inner = [p for p in PACKAGES if node.module.startswith(p + ".")]
            assert not inner, f"{path.name}:{node.lineno} reaches inside {inner[0]}: import from the package"
            private = [a.name for a in node.names if a.name.startswith("_")]
            assert not private, f"{path.name}:{node.lineno} imports private names {private}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_"):
            assert node.value.id not in {"store", "judge", "review", "export"}, (
                f"{path.name}:{node.lineno} uses the private {node.value.id}.{node.attr}"
            )


def test_the_check_would_catch_a_database_import_in_core(tmp_path: Path) -> None:
    """The walker sees what it must forbid (so the layer test cannot pass by reading nothing)."""
    bad = tmp_path / "bad.py"
    bad.write_text("import sqlalchemy\nfrom scoring.store import runs\n\ndef f():\n    import openai\n")
    found = [t for t, _ in imports(bad)]
    assert found == ["sqlalchemy", "scoring.store.runs"]
    assert [t for t, _ in imports(bad, top_level_only=False)] == ["sqlalchemy", "scoring.store.runs", "openai"]
    assert layer_of("scoring.core.loader") == "scoring.core" and "sqlalchemy" in LAYERS["scoring.core"][1]
