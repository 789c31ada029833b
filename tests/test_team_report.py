"""Issue 37, point 4: the report a team sends, outside the browser (``tests/test_browser_report.py``
opens it in chromium with the network off). Real SQLite databases, the real command line.

- the HTML file and its Markdown twin hold the same cells, and the command line's JSON the same;
- a model named like Markdown or HTML stays text in both files (dataset text is untrusted);
- the provenance holds what recomputes the figures: restoring each run's export into a fresh
  database gives the same rows sha256, review seed and cells;
- titles say what the cells hold; bad options are one line each.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from scoring import ingest
from scoring import verdict_export as E
from scoring.store import load_table, make_engine
from scoring.store.verdict_log import record_mark
from scoring.team_report import report_html, report_markdown, table_title, team_report

HOSTILE = "![x](http://example.invalid/p.png)<b>|m"
ROWS = 24


def _body(right: int) -> bytes:
    lines = ["question,answer,Domain,response,language"]
    for i in range(ROWS):
        response = f"it is ans{i}" if i < right else f"no {i}"
        lines.append(f"q{i}?,ans{i},{('Art', 'History')[i % 2]},{response},{('Hindi', 'Tamil')[i // 12]}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two models on the same 24 questions (12 Hindi, 12 Tamil); every row of the first reviewed."""
    url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'review.db'}"
    engine = make_engine(url)
    first = ingest.save_run(engine, _body(18), "a.csv", model="model-a").run
    ingest.save_run(engine, _body(10), "b.csv", model=HOSTILE)
    for i, key in enumerate(load_table(engine, first.id)["item_key"].to_list()):
        record_mark(engine, key, first.id, "asha", "correct" if i < 18 else "wrong")
    engine.dispose()
    return url


def figures(text: str) -> list[str]:
    return re.findall(r"\d+\.\d%", text)


def test_html_markdown_and_json_hold_the_same_cells(db: str, run_cli, tmp_path: Path) -> None:
    html_file, md_file = tmp_path / "r.html", tmp_path / "r.md"
    for target in (html_file, md_file):
        out = run_cli("scoring", "report", "--db", db, "--out", target)
        assert out.returncode == 0 and out.stdout.startswith(f"wrote the report to {target}"), out.stderr
    out = run_cli("scoring", "report", "--db", db, "--json", "--out", tmp_path / "again.html")
    report = json.loads(out.stdout)  # the JSON alone on stdout; what --out wrote on stderr
    assert "wrote the report" in out.stderr
    assert report["models"] == sorted(["model-a", HOSTILE]) and report["languages"] == ["Hindi", "Tamil"]
    page, markdown = html_file.read_text(encoding="utf-8"), md_file.read_text(encoding="utf-8")
    for cell in report["cells"]:
        shown = [f"{100 * cell[k]:.1f}%" for k in ("value", "ci_low", "ci_high")]
        assert all(s in page and s in markdown for s in shown), (cell["model"], cell["language"], shown)
    estimates = [c for c in report["cells"] if c["kind"] == "estimate"]
    assert [(c["model"], c["language"], c["reviewed"]) for c in estimates] == [
        ("model-a", "Hindi", 12),
        ("model-a", "Tamil", 12),
    ]
    assert report["title"].startswith("Accuracy by model and language: estimated true accuracy where rows")
    assert html.escape(report["title"]) in page and report["title"] in markdown.replace("\\", "")
    for text in (page, markdown):
        assert "How the figures were made" in text
        assert "Provenance" in text and report["provenance"][0]["rows_sha256"] in text


def test_a_hostile_model_name_stays_text(db: str) -> None:
    engine = make_engine(db)
    try:
        report = team_report(engine)
    finally:
        engine.dispose()
    page, markdown = report_html(report), report_markdown(report)
    assert "<img" not in page and "<b>" not in page and "&lt;b&gt;" in page
    assert "](http" not in markdown and "\\!\\[x\\]\\(http" in markdown and "\\<b\\>\\|m" in markdown
    assert not re.search(r"(src|href)=\"?https?:", page)  # nothing to fetch


def test_restoring_the_exports_recomputes_the_same_report(db: str, tmp_path: Path) -> None:
    """What the provenance promises: each run's export, uploaded into a fresh database, gives the
    same rows sha256 and review seed, and the report the same cells and sentences."""
    engine = make_engine(db)
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        before = team_report(engine)
        for run in sorted(before.runs, key=lambda r: r.id):  # in the order they were first uploaded
            data = E.export_file(engine, run.id, "csv").data
            ingest.save_run(fresh, data, f"export_{run.id}.csv")
        after = team_report(fresh)
    finally:
        engine.dispose()
        fresh.dispose()
    key = lambda r: r.model  # noqa: E731
    pairs = [(a.rows_sha256, a.review_seed, a.model) for a in sorted(before.runs, key=key)]
    assert [(a.rows_sha256, a.review_seed, a.model) for a in sorted(after.runs, key=key)] == pairs
    assert [c.as_dict() | {"runs": None} for c in after.table.cells] == [
        c.as_dict() | {"runs": None} for c in before.table.cells
    ]
    assert [p.sentence for p in after.table.pairs] == [p.sentence for p in before.table.pairs]


def test_titles_say_what_the_cells_hold(db: str) -> None:
    engine = make_engine(db)
    try:
        cells = team_report(engine).table.cells
    finally:
        engine.dispose()
    estimates = [c for c in cells if c.kind == "estimate"]
    metrics = [c for c in cells if c.kind != "estimate"]
    assert table_title(estimates) == "Estimated true accuracy by model and language (95% intervals)"
    assert table_title(metrics).startswith("Exact substring's accuracy by model and language (no reviewed rows")
    assert "else exact substring's (marked)" in table_title(cells)
    assert not any(t.startswith("True accuracy") for t in map(table_title, (cells, metrics, estimates)))
    # Cells that wait for reviews hold no figure: the title does not promise one (it did).
    waiting = [replace(c, needed=6) for c in estimates]
    assert table_title(waiting) == (
        "Estimated true accuracy by model and language: no figure yet (each cell says what to review)"
    )
    assert table_title([*waiting, *estimates]) == table_title(estimates)


def test_bad_options_are_one_line(db: str, run_cli, tmp_path: Path) -> None:
    for args, words in (
        (["--out", tmp_path / "r.pdf"], "--out: 'r.pdf' must end in .html or .md."),
        (["--runs", "99"], "99"),
        (["--runs", "x"], "--runs"),
    ):
        out = run_cli("scoring", "report", "--db", db, *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and words in out.stderr, out.stderr
