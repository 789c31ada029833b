"""The documentation stays true to the repository.

- Every relative link in ``README.md`` and ``docs/*.md`` points to a file that exists, inside the
  repository, and a ``#anchor`` to a heading of that file (GitHub's slug rule).
- ``README.md`` stays a five-minute page (at most :data:`README_MAX_LINES` lines).
- Every ``python -m scoring <command>`` the pages show names a subcommand the command line
  registers (read from ``scoring/cli`` without importing it), and every module they run with
  ``python -m`` exists.
- No docstring or comment of the Python sources names a path outside the repository (a folder
  beside the checkout, a workspace or home folder) or a dotted name under ``scoring`` that
  resolves to no module, and neither do the pages.

Everything is read from disk with ``ast``, ``tokenize`` and regular expressions: nothing is run.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
README_MAX_LINES = 150
PY_DIRS = ("scoring", "ui", "views", "tests")
PY_FILES = ("app.py",)

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"\]\(\s*<?([^()\s<>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
LINE_ANCHOR = re.compile(r"^L\d+(?:-L\d+)?$")

SCORING_COMMAND = re.compile(r"python3?\s+-m\s+scoring\s+([A-Za-z][\w-]*)")
SCORING_MODULE_RUN = re.compile(r"python3?\s+-m\s+(scoring(?:\.\w+)+)")
DOTTED_SCORING = re.compile(r"(?<![\w.])scoring(?:\.[A-Za-z_]\w*)+")
# A path that leaves the repository: climbing out of it, or into a workspace or home folder.
# System locations (/usr/lib/postgresql, /proc/PID/status) and the tools' caches (~/.cache/...)
# name the machine, not a file of some other checkout, and are allowed.
OUTSIDE_PATH = re.compile(r"(?<![\w.~:/])(?:\.\./|/(?:work|home|Users|root|mnt)/)|\bfile://")
# A code span that is a repository path: it must exist (a file the pages name, moved or renamed).
REPO_PATH = re.compile(r"(?:scoring|ui|views|tests|deploy|docs|sample_data)/[\w./-]*|app\.py|Makefile")


def doc_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def python_files() -> list[Path]:
    found = [ROOT / name for name in PY_FILES]
    for folder in PY_DIRS:
        found += sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)
    return found


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --- Markdown ---------------------------------------------------------------------------------


def outside_fences(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line outside fenced code blocks."""
    lines, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append((number, line))
    return lines


def prose_lines(text: str) -> list[tuple[int, str]]:
    """Lines outside fenced code blocks, code spans blanked out (a link written as code is not a
    link)."""
    return [(number, CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), line)) for number, line in outside_fences(text)]


def code_spans(text: str) -> list[tuple[int, str]]:
    """Inline code spans outside fenced blocks, with their line numbers."""
    return [(number, m.group(2).strip()) for number, line in outside_fences(text) for m in CODE_SPAN.finditer(line)]


def links(text: str) -> list[tuple[int, str]]:
    """Every link and image target (inline and reference definitions) outside code."""
    found = []
    for number, line in prose_lines(text):
        found += [(number, m.group(1)) for m in INLINE_LINK.finditer(line)]
        definition = REFERENCE_DEF.match(line)
        if definition:
            found.append((number, definition.group(1)))
    return found


def heading_text(raw: str) -> str:
    """The text GitHub renders for a heading's Markdown: links and images as their text, code
    without its backticks, HTML tags dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "")


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lowercase, every character that is not a letter, mark, digit,
    connector (``_``), hyphen or space dropped, spaces turned into hyphens."""
    kept = "".join(
        c
        for c in heading_text(text).strip().lower()
        if c in "- " or unicodedata.category(c)[0] in "LM" or unicodedata.category(c) in ("Nd", "Pc")
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown file offers: its headings' slugs (repeats numbered -1, -2, ... as
    GitHub does) and explicit ``<a name=...>``/``id=`` anchors."""
    titles, previous = [], ""
    for _number, line in outside_fences(text):
        atx = ATX_HEADING.match(line)
        underline = SETEXT_UNDERLINE.match(line)
        if atx:
            titles.append(atx.group(2) or "")
        elif underline and previous.strip() and not ATX_HEADING.match(previous):
            titles.append(previous.strip())
        previous = line
    found, seen = set(), {}
    for title in titles:
        slug = github_slug(title)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    found.update(m.group(1) for m in HTML_ANCHOR.finditer(text))
    return found


def link_problems(doc: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with each relative link of ``doc``: a missing file, a path leaving ``root``,
    an anchor with no heading."""
    problems = []
    for number, target in links(doc.read_text(encoding="utf-8")):
        if not target or SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        where = f"{doc.relative_to(root).as_posix()}:{number}: {target}"
        dest = (doc.parent / unquote(path_part)).resolve() if path_part else doc.resolve()
        if not dest.is_relative_to(root):
            problems.append(f"{where}: leaves the repository")
            continue
        if not dest.exists():
            problems.append(f"{where}: no such file")
            continue
        if not anchor:
            continue
        if dest.suffix.lower() == ".md":
            if unquote(anchor) not in anchors(dest.read_text(encoding="utf-8")):
                problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(root).as_posix()}")
        elif not LINE_ANCHOR.match(anchor):
            problems.append(f"{where}: an anchor into a file that is not Markdown")
    return problems


# --- The command line's subcommands, read from its source ---------------------------------------


def module_path(dotted: str) -> Path | None:
    """The file of a ``scoring...`` module or package, if it exists."""
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def registered_names(path: Path) -> set[str]:
    """The subcommand names a module passes to ``register("name", ...)`` (as a decorator or a call)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        first = node.args[0]
        if called == "register" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


@cache
def cli_modules() -> dict[str, str]:
    """``COMMAND_MODULES`` of ``scoring/cli/__init__.py``: each subcommand and the module that
    registers it (``main`` imports only those)."""
    tree = ast.parse((ROOT / "scoring" / "cli" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "COMMAND_MODULES" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    raise AssertionError("scoring/cli/__init__.py has no COMMAND_MODULES")


@cache
def subcommands() -> frozenset[str]:
    """The real ``python -m scoring`` subcommands: listed in ``COMMAND_MODULES`` and registered by
    the module listed for them."""
    real = set()
    for name, module in cli_modules().items():
        path = module_path(module)
        if path is not None and name in registered_names(path):
            real.add(name)
    return frozenset(real)


# --- Docstrings and comments ----------------------------------------------------------------------


def docstrings_and_comments(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and every string statement (module, class and function
    docstrings, attribute docstrings) of a Python file; other strings are code, not prose."""
    source = path.read_text(encoding="utf-8")
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found += [(node.lineno + i, line) for i, line in enumerate(node.value.value.splitlines())]
    return found


@cache
def top_level_names(path: Path) -> frozenset[str]:
    """What a module defines or imports at its top level (``if``/``try`` blocks included)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body + node.orelse + getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return frozenset(names)


def unresolved_scoring_name(dotted: str) -> str | None:
    """Why a dotted name under ``scoring`` names nothing on disk, or None: its longest prefix that
    is a module must define the next part (a function, class, constant or import); later parts
    (attributes of a class) are not checked."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        path = module_path(".".join(parts[:k]))
        if path is None:
            continue
        if k == len(parts) or parts[k] in top_level_names(path):
            return None
        missing = ".".join(parts[: k + 1])
        return f"{missing} is no module (no {missing.replace('.', '/')}.py) and {rel(path)} defines no {parts[k]}"
    return f"{dotted}: no such package"


def prose_problems(where: str, text: str) -> list[str]:
    problems = [
        f"{where}: names a path outside the repository: {m.group(0)!r} in {text.strip()[:160]!r}"
        for m in OUTSIDE_PATH.finditer(text)
    ]
    for m in DOTTED_SCORING.finditer(text):
        why = unresolved_scoring_name(m.group(0))
        if why:
            problems.append(f"{where}: {why}")
    return problems


def python_file_problems(path: Path) -> list[str]:
    """:func:`prose_problems` of a Python file's docstrings and comments. The raw text is checked
    first: a file with no problem anywhere in it (code included) is not tokenized."""
    if not prose_problems("", path.read_text(encoding="utf-8")):
        return []
    return [p for line, text in docstrings_and_comments(path) for p in prose_problems(f"{rel(path)}:{line}", text)]


# --- The checks -----------------------------------------------------------------------------------


def test_relative_links_point_to_existing_files_and_headings():
    docs = doc_files()
    assert len(docs) > 1, "no docs/*.md found beside README.md"
    problems = [p for doc in docs for p in link_problems(doc)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_readme_stays_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move detail into docs/"
    )


def test_docs_name_real_scoring_subcommands():
    real = subcommands()
    assert real == set(cli_modules()), (
        f"COMMAND_MODULES lists {sorted(cli_modules())} but only {sorted(real)} are registered by their module"
    )
    problems, shown = [], set()
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        for m in SCORING_COMMAND.finditer(text):
            shown.add(m.group(1))
            if m.group(1) not in real:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel(doc)}:{line}: python -m scoring {m.group(1)} (commands: {sorted(real)})")
        for m in SCORING_MODULE_RUN.finditer(text):
            if module_path(m.group(1)) is None:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel(doc)}:{line}: python -m {m.group(1)}: no such module")
    assert not problems, "the docs name commands that do not exist:\n" + "\n".join(problems)
    assert shown, "no `python -m scoring <command>` found in the docs: the pattern no longer matches them"


def test_docstrings_and_comments_name_nothing_outside_the_repository():
    files = python_files()
    assert len(files) > 50, f"only {len(files)} Python files found under {PY_DIRS}"
    problems = [p for path in files for p in python_file_problems(path)]
    assert not problems, "docstrings or comments name what is not in the repository:\n" + "\n".join(problems)


def test_docs_name_real_files_and_modules():
    """The pages' own prose: no path outside the repository, no ``scoring.…`` name that resolves
    to nothing, and every repository path written as code (``scoring/core/loader.py``) exists."""
    problems = []
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            # Link targets (a docs page's link up to the README) are the link check's, from their file.
            line = "" if REFERENCE_DEF.match(line) else INLINE_LINK.sub("]()", line)
            problems += prose_problems(f"{rel(doc)}:{number}", line)
        for number, span in code_spans(text):
            if REPO_PATH.fullmatch(span) and not (ROOT / span).exists():
                problems.append(f"{rel(doc)}:{number}: `{span}` does not exist")
    assert not problems, "the docs name what is not in the repository:\n" + "\n".join(problems)


# --- The checkers themselves catch what they are for ------------------------------------------------


def test_github_slug_rule():
    assert github_slug("Comparing runs: `compare`") == "comparing-runs-compare"
    assert github_slug("The nginx example (`deploy/`)") == "the-nginx-example-deploy"
    assert github_slug("Can this judge be trusted: kappa's interval") == "can-this-judge-be-trusted-kappas-interval"
    assert github_slug("हिंदी प्रश्न") == "हिंदी-प्रश्न"  # marks (the vowel signs) are kept
    assert anchors("# A\n\n## A\n\ntext\n") == {"a", "a-1"}


def test_link_checker_finds_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Title\n\n## Real heading\n", encoding="utf-8")
    doc = tmp_path / "README.md"
    doc.write_text(
        "[ok](docs/a.md#real-heading) [gone](docs/b.md) [bad anchor](docs/a.md#nope) [up](../x.md)\n"
        "`[not a link](nowhere.md)` [web](https://example.org/x)\n\n```\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    problems = link_problems(doc, root=tmp_path)
    assert len(problems) == 3, problems
    assert any("docs/b.md: no such file" in p for p in problems)
    assert any("no heading #nope" in p for p in problems)
    assert any("leaves the repository" in p for p in problems)


def test_prose_checker_finds_outside_paths_and_missing_modules():
    assert prose_problems("x", "see ``/work/shared/notes/a.md``")
    assert prose_problems("x", "tests must not read ``../shared`` at run time")
    assert prose_problems("x", ":mod:`scoring.core.no_such_module`")
    assert prose_problems("x", "scoring.cli.common.no_such_function")
    assert not prose_problems("x", ":mod:`scoring.cli.common` and scoring.cli.common.register, ~/.cache/x")
    assert not prose_problems("x", "``/usr/lib/postgresql/<version>/bin`` and http://host/home/p.png")
