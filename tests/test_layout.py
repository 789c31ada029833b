"""The layout keeps its promises (issues 9 and 28): every module of ``scoring/``, ``ui/``, ``views/``
and ``app.py`` sits in a named layer that says what it may import, arrows point downwards, a module
in no layer fails, no module uses another's private names, no import cycle, no import hidden inside
a function, no module past 450 lines, and the pages use only the packages' public names. Read from
the source with ``ast``.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCORING = ROOT / "scoring"
MAX_LINES = 450
PROJECT_ROOTS = ("scoring", "ui", "views", "app")


@dataclass(frozen=True)
class Layer:
    """Modules (``pkg.*`` also holds everything under ``pkg``), the layers they may import besides
    their own, and the outside packages they may not import."""

    holds: tuple[str, ...]
    uses: frozenset[str] = frozenset()
    banned: frozenset[str] = frozenset()


def package(name: str) -> tuple[str, str]:
    return name, name + ".*"


NOT_PAGES = frozenset({"streamlit"})  # scoring/ never imports streamlit (nor does anything below ui)
#: Each layer, lowest first: what it holds and what it may use. Every module is in exactly one.
LAYERS: dict[str, Layer] = {
    "version": Layer(("scoring",), banned=NOT_PAGES),  # scoring/__init__.py: __version__ and a docstring
    "core": Layer(package("scoring.core"), banned=NOT_PAGES | {"sqlalchemy", "alembic", "openai", "httpx"}),
    "store": Layer(package("scoring.store"), frozenset({"core"}), NOT_PAGES | {"openai"}),
    # Optional matchers beside the spec's two (issue 29): pure text functions, no database.
    "match": Layer(package("scoring.match"), frozenset({"core"}), NOT_PAGES | {"sqlalchemy", "alembic", "openai"}),
    "judge": Layer(package("scoring.judge"), frozenset({"core", "store"}), NOT_PAGES),
    "review": Layer(package("scoring.review"), frozenset({"core", "store"}), NOT_PAGES | {"openai"}),
    "ingest": Layer(package("scoring.ingest"), frozenset({"core", "store"}), NOT_PAGES | {"openai"}),
    "export": Layer(
        ("scoring.verdict_export",), frozenset({"version", "core", "store", "judge", "review"}), NOT_PAGES | {"openai"}
    ),
    "estimate": Layer(
        package("scoring.estimate"),
        frozenset({"version", "core", "match", "store", "review", "export"}),
        NOT_PAGES | {"openai"},
    ),
    "compare": Layer(
        package("scoring.compare"),
        frozenset({"version", "core", "match", "store", "review", "export"}),
        NOT_PAGES | {"openai"},
    ),
    # The table a team reports (issue 29): estimate and compare over stored runs, one level up.
    "team report": Layer(
        package("scoring.team_report"),
        frozenset({"version", "core", "match", "store", "review", "export", "estimate", "compare"}),
        NOT_PAGES | {"openai"},
    ),
    "cli": Layer(
        package("scoring.cli"),
        frozenset(
            {
                "version",
                "core",
                "match",
                "store",
                "ingest",  # runs add-samples loads the bundled samples as the app does (issue 37)
                "judge",
                "review",
                "export",
                "estimate",
                "compare",
                "team report",
            }
        ),
        NOT_PAGES | {"openai"},
    ),
    "entry points": Layer(
        ("scoring.__main__", "scoring.exact_substring", "scoring.llm_judge", "scoring.word_overlap"),
        frozenset({"cli"}),
        NOT_PAGES,
    ),
    "ui": Layer(
        package("ui"),
        frozenset(
            {"version", "core", "match", "store", "ingest", "judge", "review", "export", "estimate", "compare"}
            | {"team report"}
        ),
        frozenset({"openai", "alembic"}),
    ),
    "views": Layer(
        package("views"),
        frozenset(
            {"version", "core", "match", "store", "ingest", "judge", "review", "export", "estimate", "compare", "ui"}
            | {"team report"}
        ),
        frozenset({"openai", "alembic", "sqlalchemy"}),
    ),
    "app": Layer(
        ("app",),
        frozenset({"version", "core", "store", "judge", "review", "ui", "views"}),
        frozenset({"openai", "alembic"}),
    ),
}
PACKAGES = ("scoring.store", "scoring.ingest", "scoring.judge", "scoring.review")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def scoring_modules() -> dict[str, Path]:
    return {module_name(p): p for p in SCORING.rglob("*.py") if "versions" not in p.parts}


def project_modules() -> dict[str, Path]:
    pages = [*ROOT.joinpath("ui").rglob("*.py"), *ROOT.joinpath("views").rglob("*.py"), ROOT / "app.py"]
    return {**scoring_modules(), **{module_name(p): p for p in pages}}


MODULES = scoring_modules()
PROJECT = project_modules()


def in_project(module: str) -> bool:
    return module.split(".")[0] in PROJECT_ROOTS


def imports(path: Path, top_level_only: bool = True, known: Iterable[str] = PROJECT) -> list[tuple[str, ast.AST]]:
    """(module imported, node): ``from a.b import c`` gives ``a.b.c`` when that is a module, else ``a.b``.

    A relative import gives ``.`` plus its dots and module (the layer check refuses it). With
    ``top_level_only=False`` the whole tree is read, and ``importlib.import_module("a.b")`` with a
    literal name counts as importing ``a.b``.
    """
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: list[tuple[str, ast.AST]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, node) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append(("." * node.level + (node.module or ""), node))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append((sub if sub in known else node.module, node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            name, call = node.args[0], node.func
            if (
                call.attr == "import_module"
                and isinstance(call.value, ast.Name)
                and call.value.id == "importlib"
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
            ):
                found.append((name.value, node))
    return found


def layer_of(module: str) -> str | None:
    """The layer holding ``module`` (or ``None``); a module inside a module is in its layer."""
    for name, layer in LAYERS.items():
        if any(fnmatchcase(module, pattern) for pattern in layer.holds):
            return name
    return None


def layer_breaches(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """What breaks the layers in ``graph`` (module -> [(module imported, line)]): empty when nothing.

    A module in no layer is a breach, and so is importing one: only the table above says where a
    new folder may sit.
    """
    found: list[str] = []
    for module, targets in graph.items():
        own = layer_of(module)
        if own is None:
            found.append(f"{module} is in no layer of LAYERS: add it to one (or a new one) in tests/test_layout.py")
            continue
        layer = LAYERS[own]
        for target, line in targets:
            root = target.split(".")[0]
            if target.startswith("."):
                found.append(f"{module} (line {line}) imports {target} relatively: name the module in full")
            elif root in layer.banned:
                found.append(f"{module} ({own}) may not import {target} (line {line})")
            elif in_project(target):
                other = layer_of(target)
                if other is None:
                    found.append(f"{module} (line {line}) imports {target}, which is in no layer of LAYERS")
                elif other != own and other not in layer.uses:
                    found.append(f"{module} ({own}) may not import {target} ({other}, line {line})")
    return found


def graph_of(modules: dict[str, Path]) -> dict[str, list[tuple[str, int]]]:
    return {m: [(t, n.lineno) for t, n in imports(p, top_level_only=False)] for m, p in modules.items()}


@pytest.mark.parametrize("module", sorted(PROJECT))
def test_each_layer_imports_only_what_its_layer_allows(module: str) -> None:
    assert layer_breaches(graph_of({module: PROJECT[module]})) == []


def test_every_module_is_in_exactly_one_layer_and_every_layer_holds_one() -> None:
    for module in PROJECT:
        holders = [n for n, layer in LAYERS.items() if any(fnmatchcase(module, p) for p in layer.holds)]
        assert len(holders) == 1, f"{module} is in layers {holders}: exactly one"
    empty = [n for n in LAYERS if not any(layer_of(m) == n for m in PROJECT)]
    assert empty == [], f"layers holding no module (renamed folder?): {empty}"
    unknown = sorted({u for layer in LAYERS.values() for u in layer.uses} - set(LAYERS))
    assert unknown == [], f"layers used but not defined: {unknown}"


def test_the_layer_check_catches_core_importing_compare_and_modules_in_no_layer() -> None:
    """A synthetic graph: each wrong arrow is reported, the right ones are not."""
    graph = {
        "scoring.core.loader": [("scoring.core.stats", 1), ("scoring.compare.compared_runs", 2), ("sqlalchemy", 3)],
        "scoring.store.runs": [("scoring.core.loader", 1), ("scoring.cli.common", 2)],
        "scoring.estimate.ppi": [("scoring.compare.paired", 1)],
        "scoring.compare.compared_runs": [("scoring.estimate.ppi", 1), ("scoring.verdict_export", 2)],
        "scoring.newpkg.thing": [("scoring.core.stats", 1)],
        "scoring.cli.common": [("scoring.newpkg.thing", 4), (".runs", 5)],
        "ui.state": [("scoring.store", 1), ("views.start", 2), ("streamlit", 3)],
        "views.start": [("ui.state", 1), ("sqlalchemy", 2)],
    }
    breaches = layer_breaches(graph)
    assert breaches == [
        "scoring.core.loader (core) may not import scoring.compare.compared_runs (compare, line 2)",
        "scoring.core.loader (core) may not import sqlalchemy (line 3)",
        "scoring.store.runs (store) may not import scoring.cli.common (cli, line 2)",
        "scoring.estimate.ppi (estimate) may not import scoring.compare.paired (compare, line 1)",
        "scoring.compare.compared_runs (compare) may not import scoring.estimate.ppi (estimate, line 1)",
        "scoring.newpkg.thing is in no layer of LAYERS: add it to one (or a new one) in tests/test_layout.py",
        "scoring.cli.common (line 4) imports scoring.newpkg.thing, which is in no layer of LAYERS",
        "scoring.cli.common (line 5) imports .runs relatively: name the module in full",
        "ui.state (ui) may not import views.start (views, line 2)",
        "views.start (views) may not import sqlalchemy (line 2)",
    ]


def test_a_broken_copy_with_core_importing_compare_fails(tmp_path: Path) -> None:
    """The whole check on a copy of scoring/ where one core module imports compare."""
    copy = tmp_path / "scoring"
    shutil.copytree(SCORING, copy, ignore=shutil.ignore_patterns("__pycache__", "versions"))
    loader = copy / "core" / "loader.py"
    text = loader.read_text(encoding="utf-8")
    loader.write_text(
        text.replace("\nimport ", "\nfrom scoring.compare import compared_runs\nimport ", 1), encoding="utf-8"
    )
    modules = {
        ".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): p for p in copy.rglob("*.py")
    }
    assert set(modules) == set(MODULES)
    assert layer_breaches(graph_of(modules)) == [
        f"scoring.core.loader (core) may not import scoring.compare.compared_runs (compare, line {line})"
        for line in [text[: text.index("\nimport ")].count("\n") + 2]
    ]


# --- private names --------------------------------------------------------------------------------


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(module: str, path: Path) -> list[str]:
    """Another module's private names used here: ``from m import _x``, ``m._x`` on an imported
    project module, or a private module (``pkg._common``) from outside its package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: set[str] = set()  # local names that are project modules (or packages)
    found: list[str] = []
    package_of = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if in_project(alias.name):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and in_project(node.module):
            hidden = [p for p in node.module.split(".") if is_private(p)]
            home = node.module.rpartition(".")[0]  # the package a private module is private to
            if hidden and not (package_of == home or package_of.startswith(home + ".")):
                found.append(f"{module}:{node.lineno} imports from the private module {node.module}")
            for alias in node.names:
                if is_private(alias.name):
                    found.append(f"{module}:{node.lineno} imports the private {node.module}.{alias.name}")
                elif f"{node.module}.{alias.name}" in PROJECT:
                    bound.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            chain = ast.unparse(node.value)
            if chain.split(".")[0] in bound and all(part.isidentifier() for part in chain.split(".")):
                found.append(f"{module}:{node.lineno} uses the private {chain}.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(PROJECT))
def test_no_module_uses_another_modules_private_names(module: str) -> None:
    assert private_uses(module, PROJECT[module]) == [], "give the name a public home in its module"


def test_the_private_name_check_sees_each_form(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import scoring.store\nfrom scoring import review\nfrom scoring.store.runs import RunInfo, _info\n"
        "from scoring.core.harness._common import cell\nfrom ui import state as s\nimport streamlit as st\n\n"
        "x = review._queue(scoring.store._engine, s._cache, st.session_state._mine, scoring.__version__)\n"
    )
    assert private_uses("scoring.cli.bad", bad) == [
        "scoring.cli.bad:3 imports the private scoring.store.runs._info",
        "scoring.cli.bad:4 imports from the private module scoring.core.harness._common",
        "scoring.cli.bad:8 uses the private review._queue",
        "scoring.cli.bad:8 uses the private scoring.store._engine",
        "scoring.cli.bad:8 uses the private s._cache",
    ]
    inside = private_uses("scoring.core.harness.lm_eval", bad)
    assert len(inside) == 4 and not any("private module" in line for line in inside)  # its own package's


# --- size, hidden imports, cycles, the pages' public names ----------------------------------------


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
                cycle = stack[stack.index(nxt) :] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


@pytest.mark.parametrize(
    "path",
    sorted([*ROOT.glob("views/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]),
    ids=lambda p: str(p.relative_to(ROOT)),
)
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
    bad.write_text(
        "import sqlalchemy\nfrom scoring.store import runs\n\n"
        "def f():\n    import openai\n    importlib.import_module('scoring.compare.database_runs')\n"
    )
    found = [t for t, _ in imports(bad)]
    assert found == ["sqlalchemy", "scoring.store.runs"]
    assert [t for t, _ in imports(bad, top_level_only=False)] == [
        "sqlalchemy",
        "scoring.store.runs",
        "openai",
        "scoring.compare.database_runs",
    ]
    assert layer_of("scoring.core.loader") == "core" and "sqlalchemy" in LAYERS["core"].banned
