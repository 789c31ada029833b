"""Every CLI report by language (issue 29 §2): ``score --by language`` groups the spec's two
metrics and the buckets by each row's language column, else by its script (named as a script,
never guessed as a language). Real CLI processes."""

from __future__ import annotations

import json
from pathlib import Path

from apptest_support import open_page, texts
from language_sim import PLAN, mixed_database

from scoring import ingest
from scoring.store import ENV_VAR, make_engine

MIXED = (
    "question,answer,Domain,response,language\n"
    "q1,Delhi,Geo,Delhi it is,English\n"
    "q2,Agra,Geo,Mumbai,English\n"
    "q3,दिल्ली,Geo,दिल्ली,hi\n"
    "q4,சென்னை,Geo,மதுரை,Tamil\n"
)


def test_score_by_language_reads_the_language_column(tmp_path: Path, run_cli) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(MIXED, encoding="utf-8")
    out = run_cli("scoring", "score", "--responses", path, "--by", "language", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)["by_language"]
    exact = {r["domain"]: (r["n"], r["correct"]) for r in report["metrics"]["exact_substring"]}
    assert exact == {"English": (2, 1), "Hindi": (1, 1), "Tamil": (1, 0), "combined": (4, 2)}  # "hi" is Hindi
    assert report["buckets"]["Tamil"]["both_fail"] == 1
    text = run_cli("scoring", "score", "--responses", path, "--by", "language").stdout
    assert "Exact substring by language" in text and "\nlanguage " in text and "Agreement buckets by language" in text


def test_without_a_language_column_rows_are_named_by_their_script(tmp_path: Path, run_cli) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("\n".join(line.rsplit(",", 1)[0] for line in MIXED.splitlines()) + "\n", encoding="utf-8")
    out = run_cli("scoring", "score", "--responses", path, "--by", "language", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["by_language"]["metrics"]["word_overlap"]
    assert [r["domain"] for r in rows] == ["Devanagari", "Latin", "Tamil script", "combined"]
    plain = json.loads(run_cli("scoring", "score", "--responses", path, "--json").stdout)
    assert "by_language" not in plain  # the default report is the spec's, unchanged


def test_agreement_shows_the_buckets_per_language(tmp_path: Path, monkeypatch) -> None:
    url, run_id = mixed_database(tmp_path)
    monkeypatch.setenv(ENV_VAR, url)
    at = open_page("agreement", run_id=run_id)
    assert "The run's rows are in 3 languages: English, Hindi, Tamil." in texts(at)
    table = next(d.value for d in at.dataframe if d.value.index.name == "language")
    rows = {language: rows for language, rows, _ in PLAN}
    assert table.loc[["English", "Hindi", "Tamil"]].sum(axis=1).to_dict() == rows


def test_the_overview_shows_each_language(tmp_path: Path, monkeypatch) -> None:
    url, run_id = mixed_database(tmp_path)
    monkeypatch.setenv(ENV_VAR, url)
    at = open_page("overview", run_id=run_id)
    line = next(t for t in texts(at) if t.startswith("Estimated true accuracy by language: "))
    for language, rows, right in PLAN:  # every row reviewed: each estimate is the language's share
        assert f"{language} {100 * right / rows:.1f}% (95% CI " in line, line
    assert len(at.dataframe) == 1  # the Overview keeps one table (per domain); True accuracy has the rest


def test_before_any_review_the_overview_shows_each_languages_metrics(tmp_path: Path, monkeypatch) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    engine = make_engine(url)
    run = ingest.save_run(engine, MIXED.encode(), "mixed.csv").run
    engine.dispose()
    monkeypatch.setenv(ENV_VAR, url)
    at = open_page("overview", run_id=run.id)
    line = next(t for t in texts(at) if t.startswith("By language (the metrics; no estimate before a review): "))
    assert "English 2 rows, exact 50.0%, overlap 50.0%; Hindi 1 rows, exact 100.0%" in line, line
    assert "Estimated true accuracy by language" not in " ".join(texts(at))  # no figure before its evidence


def test_compare_by_language_pairs_the_runs_in_each_language(tmp_path: Path, run_cli) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(MIXED, encoding="utf-8")
    b.write_text(MIXED.replace("Mumbai", "Agra").replace("q3,दिल्ली,Geo,दिल्ली", "q3,दिल्ली,Geo,मुंबई"), encoding="utf-8")
    out = run_cli("scoring", "compare", a, b, "--by", "language", "--json")
    assert out.returncode == 0, out.stderr
    pairs = {p["language"]: p for p in json.loads(out.stdout)["by_language"]["pairs"]}
    assert set(pairs) == {"English", "Hindi", "Tamil"}
    assert (pairs["English"]["n"], pairs["English"]["difference"]) == (2, -0.5)  # b right on q2 as well
    assert (pairs["Hindi"]["n"], pairs["Hindi"]["difference"]) == (1, 1.0)
    text = run_cli("scoring", "compare", a, b, "--by", "language").stdout
    assert "Per language (each pair on the questions both answered in that language)" in text
    assert "\nHindi: " in text


def test_compare_and_score_name_a_blank_language_cell_by_the_same_rule(tmp_path: Path, run_cli) -> None:
    """Issue 37: one language rule for every command. ``score --by language`` names a row with a
    blank language cell by its script; ``compare --by language`` filed it under "(no language)",
    so its matched pairs vanished from the per-language sentences."""
    blank = MIXED.replace("q3,दिल्ली,Geo,दिल्ली,hi", "q3,दिल्ली,Geo,दिल्ली,")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(blank, encoding="utf-8")
    b.write_text(blank.replace("q3,दिल्ली,Geo,दिल्ली,", "q3,दिल्ली,Geo,मुंबई,"), encoding="utf-8")
    scored = json.loads(run_cli("scoring", "score", "--responses", a, "--by", "language", "--json").stdout)
    named = {r["domain"] for r in scored["by_language"]["metrics"]["exact_substring"]} - {"combined"}
    assert named == {"English", "Devanagari", "Tamil"}
    out = run_cli("scoring", "compare", a, b, "--by", "language", "--json")
    assert out.returncode == 0, out.stderr
    pairs = {p["language"]: p for p in json.loads(out.stdout)["by_language"]["pairs"]}
    assert set(pairs) == named and (pairs["Devanagari"]["n"], pairs["Devanagari"]["difference"]) == (1, 1.0)
