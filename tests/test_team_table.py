"""The table a team reports (issue 29 §2): ``python -m scoring table`` over stored runs, a row per
model and a column per language; an estimate with its interval where a random sample is
reviewed, else a metric's accuracy marked as such; reviewed rows per cell; paired differences per
language; CSV, JSON and picture outputs. Real database, real CLI processes."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from apptest_support import download, frame_with, open_page, record_media_managers, texts

from scoring import ingest
from scoring.core.metric_names import ADJUDICATED
from scoring.core.stats import wilson_interval
from scoring.store import ENV_VAR, list_runs, load_table, make_engine
from scoring.store.verdict_log import record_mark
from scoring.team_report import ESTIMATE, cell_text, table_figure, team_table, write_picture

ROWS = 20


def _body(language: str, right: int) -> bytes:
    """``ROWS`` questions shared by both models; the first ``right`` responses hold the answer."""
    lines = ["question,answer,Domain,response,question_id"]
    for i in range(ROWS):
        answer = f"{language[:2]}answer{i}"
        response = f"it is {answer}" if i < right else f"it is something else {i}"
        lines.append(f"{language} question {i}?,{answer},{'Art' if i % 2 else 'History'},{response},q{i}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Model A and model B, each a Hindi and an English run of the same 20 questions; every row of
    A's Hindi run reviewed through the queue (15 correct), nothing else reviewed."""
    url = f"sqlite:///{tmp_path_factory.mktemp('table') / 'review.db'}"
    engine = make_engine(url)
    runs = {}
    for model, language, right in (("model-a", "Hindi", 12), ("model-a", "English", 14), ("model-b", "Hindi", 16)):
        result = ingest.save_run(
            engine, _body(language, right), f"{model}_{language}.csv", model=model, language=language
        )
        runs[(model, language)] = result.run.id
    runs[("model-b", "English")] = ingest.save_run(
        engine, _body("English", 8), "model-b_english.csv", model="model-b", language="English"
    ).run.id
    keys = load_table(engine, runs[("model-a", "Hindi")])["item_key"].to_list()
    for i, key in enumerate(keys):
        record_mark(engine, key, runs[("model-a", "Hindi")], "alice", "correct" if i < 15 else "wrong")
    engine.dispose()
    return url


def test_each_cell_is_an_estimate_where_reviewed_else_a_metric_marked_as_such(db: str, run_cli) -> None:
    out = run_cli("scoring", "table", "--by", "model,language", "--db", db, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["models"] == ["model-a", "model-b"] and report["languages"] == ["English", "Hindi"]
    cells = {(c["model"], c["language"]): c for c in report["cells"]}
    hindi_a = cells[("model-a", "Hindi")]
    assert hindi_a["kind"] == ESTIMATE and hindi_a["reviewed"] == ROWS and hindi_a["rows"] == ROWS
    assert hindi_a["value"] == pytest.approx(15 / ROWS)  # every row reviewed: the estimate is the census
    assert hindi_a["ci_low"] <= 0.75 <= hindi_a["ci_high"] and hindi_a["shown"]
    english_b = cells[("model-b", "English")]
    assert english_b["kind"] == "exact" and english_b["reviewed"] == 0 and english_b["title"] == "Exact substring"
    assert english_b["value"] == pytest.approx(8 / ROWS)
    assert (english_b["ci_low"], english_b["ci_high"]) == pytest.approx(wilson_interval(8, ROWS))
    assert english_b["metrics"]["overlap"]["n"] == ROWS
    # Paired differences per language, on the 20 questions both models answered.
    pairs = {p["language"]: p for p in report["pairs"]}
    assert set(pairs) == {"English", "Hindi"}
    assert pairs["English"]["n"] == ROWS and pairs["English"]["difference"] == pytest.approx((14 - 8) / ROWS)
    assert "model-a is ahead of model-b" in pairs["English"]["sentence"] or "No clear" in pairs["English"]["sentence"]


def test_the_text_table_marks_metric_cells_and_can_be_turned(db: str, run_cli) -> None:
    out = run_cli("scoring", "table", "--db", db)
    assert out.returncode == 0, out.stderr
    assert "model-a\n  English: Exact substring: 70.0%" in out.stdout and "· no review" in out.stdout
    assert "  Hindi: 75.0% [" in out.stdout and "· 20 reviewed" in out.stdout
    assert "Paired differences per language" in out.stdout
    turned = run_cli("scoring", "table", "--by", "language,model", "--db", db)
    assert turned.returncode == 0 and "Hindi\n  model-a: 75.0% [" in turned.stdout


def test_csv_and_html_outputs_carry_every_cell(db: str, run_cli, tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    out = run_cli("scoring", "table", "--db", db, "--out", target)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert len(rows) == 4 and {r["kind"] for r in rows} == {"estimate", "exact"}
    assert [r["reviewed"] for r in rows if r["kind"] == "estimate"] == ["20"]
    # Issue 37: percentages with their intervals, n and the source in words; no raw fraction.
    cells = {(r["model"], r["language"]): r for r in rows}
    hindi_a, english_b = cells[("model-a", "Hindi")], cells[("model-b", "English")]
    assert (hindi_a["source"], hindi_a["accuracy_pct"], hindi_a["n"]) == ("estimate", "75.0", "20")
    interval = f"[{hindi_a['ci_low_pct']}%, {hindi_a['ci_high_pct']}%]"  # every row reviewed: may be a point
    assert hindi_a["cell"] == f"75.0% {interval} · 20 reviewed"
    low, high = wilson_interval(8, ROWS)
    assert (english_b["source"], english_b["accuracy_pct"], english_b["n"]) == ("metric: exact substring", "40.0", "20")
    assert (english_b["ci_low_pct"], english_b["ci_high_pct"]) == (f"{100 * low:.1f}", f"{100 * high:.1f}")
    assert english_b["cell"].startswith("Exact substring: 40.0% [")  # the cell as the page shows it
    fractions = [v for r in rows for v in r.values() if re.fullmatch(r"0\.\d{4,}", v)]
    assert not fractions, fractions
    page = tmp_path / "table.html"
    out = run_cli("scoring", "table", "--db", db, "--out", page)
    assert out.returncode == 0 and page.stat().st_size > 10_000
    assert "no review" in page.read_text(encoding="utf-8")


def test_json_with_out_prints_only_the_json(db: str, run_cli, tmp_path: Path) -> None:
    """Issue 37: ``table --json --out F`` printed "wrote 4 cells to F" after the JSON, so a pipe
    to a JSON reader broke; as ``score --json --out`` does, stdout holds the JSON alone."""
    for name in ("t.csv", "t.json", "t.html"):
        out = run_cli("scoring", "table", "--db", db, "--json", "--out", tmp_path / name)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["models"] == ["model-a", "model-b"], out.stdout[-200:]
        assert "wrote" in out.stderr and (tmp_path / name).exists()
    text = run_cli("scoring", "table", "--db", db, "--out", tmp_path / "again.csv")
    assert text.stdout.rstrip().endswith(f"wrote 4 cells to {tmp_path / 'again.csv'}")  # said where it is read


def test_wrong_options_are_one_line_each(db: str, run_cli) -> None:
    for args, words in (
        (["--by", "model,domain"], "--by: 'model,domain' is not one of model,language, language,model"),
        (["--runs", "1,x"], "--runs: '1,x' is not a list of run ids"),
        (["--runs", "99"], "No run #99 in the database"),
        (["--out", "t.txt"], "--out: 't.txt' must end in one of .csv"),
    ):
        out = run_cli("scoring", "table", "--db", db, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert words in out.stderr and "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_a_selection_of_runs_gives_only_their_cells(db: str) -> None:
    engine = make_engine(db)
    table = team_table(engine, [1, 3])
    assert [(c.model, c.language) for c in table.cells] == [("model-a", "Hindi"), ("model-b", "Hindi")]
    assert [p.language for p in table.pairs] == ["Hindi"]
    engine.dispose()


def test_the_picture_is_a_png_where_chromium_is_present(db: str, tmp_path: Path) -> None:
    """make test installs Debian's chromium: kaleido draws with it (a user without one gets HTML)."""
    engine = make_engine(db)
    table = team_table(engine)
    engine.dispose()
    written = write_picture(table_figure(table.models, table.languages, table.cells, "t"), tmp_path / "t.png")
    assert written.fallback_reason == "" and written.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_leads_with_the_table_and_exports_it(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, db)
    managers = record_media_managers(monkeypatch)
    at = open_page("languages")
    lead = texts(at)[0]  # issue 37: the head-to-head on the estimated truth first, per language
    assert lead.startswith("English: No head-to-head of model-a and model-b on the estimated true accuracy yet")
    assert any(t.startswith("2 models x 2 languages: 1 of 4 cells are estimated true accuracy") for t in texts(at))
    grid = frame_with(at, "Hindi")
    assert grid["model"].tolist() == ["model-a", "model-b"]
    assert grid["Hindi"][0].startswith("75.0% [") and grid["English"][1].startswith("Exact substring: 40.0%")
    assert any(t.startswith("English: ") and "on 20 matched questions" in t for t in texts(at))
    rows = list(csv.DictReader(download(at, managers, "lang_csv").decode("utf-8").splitlines()))
    assert {(r["model"], r["language"], r["kind"]) for r in rows} >= {("model-a", "Hindi", "estimate")}
    assert b"plotly" in download(at, managers, "lang_html")[:5000].lower()
    # a narrower choice of runs narrows the table
    at.multiselect(key="lang_runs").set_value([1]).run()
    assert frame_with(at, "Hindi")["model"].tolist() == ["model-a"]


def test_a_run_whose_verdicts_are_withheld_gives_its_model_no_figure_built_on_them(db: str) -> None:
    """Issue 36, point 8: for a viewer who may not see run A-Hindi's verdicts (double-blind review),
    model A's cells show a metric, say why, and no pair compares adjudicated verdicts; the same
    table for an adjudicator has the estimate and the adjudicated pairs."""
    engine = make_engine(db)
    try:
        hindi_a = next(r.id for r in list_runs(engine) if (r.model, r.language) == ("model-a", "Hindi"))
        seen = team_table(engine)
        blind = team_table(engine, withheld=[hindi_a])
    finally:
        engine.dispose()
    assert seen.cell("model-a", "Hindi").kind == ESTIMATE  # what is withheld below
    assert {p.source for p in seen.pairs} == {ADJUDICATED}
    assert blind.withheld == {hindi_a} and not seen.withheld
    for cell in blind.cells:
        withheld = cell.model == "model-a"
        assert cell.withheld is withheld and cell.kind != ESTIMATE and cell.reviewed == 0, cell
        assert ("reviews withheld (double-blind)" in cell_text(cell)) is withheld
    assert blind.pairs and ADJUDICATED not in {p.source for p in blind.pairs}
    assert {r["id"]: r["withheld"] for r in blind.as_dict()["runs"]}[hindi_a] is True
    # Model B's cells are the same either way: nothing of theirs is withheld.
    assert [c for c in blind.cells if c.model == "model-b"] == [c for c in seen.cells if c.model == "model-b"]
