"""Issue 20: a first start loads a sample set (two models x two languages sharing question ids)
that every page has real content for: each run holds all four agreement buckets, the runs share
questions by id (English with English, Hindi with Hindi, and across the languages), and the
comparison of the four has a heatmap and a paired table. Samples are marked in every run list and
archived like any run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
from sqlalchemy.engine import Engine

from scoring import ingest, store, team_report
from scoring.compare import default_key, match_runs, paired_comparisons
from scoring.compare.database_runs import stored_run
from scoring.core.protocols import BUCKETS
from scoring.store.samples import SCRIPT_NAMES

ROOT = Path(__file__).resolve().parents[1]


def test_a_first_start_loads_the_set_and_shows_the_first_sample(engine: Engine) -> None:
    shown = ingest.ensure_sample(engine)
    runs = store.list_runs(engine)
    assert shown is not None and runs[0].id == shown.id and shown.name == "Sample run" and shown.n_rows == 40
    assert sorted((r.model, r.language) for r in runs) == [
        ("sample-model-a", "English, Hindi, Tamil, Bengali"),
        ("sample-model-a", "Hindi"),
        ("sample-model-b", "English, Hindi, Tamil, Bengali"),
        ("sample-model-b", "Hindi"),
    ]
    assert [r.filename for r in runs] == [s.filename for s in reversed(store.SAMPLE_SET)]
    for run in runs:
        buckets = set(store.load_table(engine, run.id)["bucket"].to_list())
        assert buckets == set(BUCKETS), (run.name, buckets)  # the Agreement page has every bucket
        assert store.is_sample(run)
        label = f"#{run.id} {run.name} · {run.model} · {run.language} · sample ({run.n_rows} rows)"
        assert store.run_label(run) == label
    # Loaded once: a second start, or a database that has any run, gets nothing more.
    assert ingest.ensure_sample(engine) is None and store.count_runs(engine) == len(store.SAMPLE_SET)


def test_a_users_own_run_is_not_a_sample_and_a_database_with_one_gets_none(engine: Engine) -> None:
    mine = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "mine.csv").run
    assert ingest.ensure_sample(engine) is None
    assert [r.name for r in store.list_runs(engine)] == ["mine"]
    assert not store.is_sample(mine)
    assert store.run_label(mine) == f"#{mine.id} mine · mine (1 rows)"  # the model guessed from the file name


def test_the_samples_compare_by_question_id_with_a_heatmap_and_paired_statistics(engine: Engine) -> None:
    ingest.ensure_sample(engine)
    runs = [stored_run(engine, r.id) for r in store.list_runs(engine)]
    key = default_key(runs)
    assert key.by_id and key.key == ("question_id",)
    match = match_runs(runs, key.key)
    # The English pair shares all 40 questions, the Hindi pair its 20, and each Hindi question is
    # a translation of an English one (the same id).
    assert match.n_matched == 20
    assert sorted(match.shared.values()) == [20, 20, 20, 20, 20, 40]
    pairs = paired_comparisons(match, ["exact"])
    assert len(pairs) == 6 and all(p.n == 20 for p in pairs)
    assert any(p.b + p.c > 0 for p in pairs), "no pair of samples disagrees: the paired table would be empty"


def test_archiving_every_sample_empties_the_list_and_restores_nothing_by_itself(engine: Engine) -> None:
    ingest.ensure_sample(engine)
    for run in store.list_runs(engine):
        store.archive_run(engine, run.id)
    assert store.listed_runs(engine) == [] and ingest.ensure_sample(engine) is None
    assert all(store.is_sample(a.run) for a in store.archived_runs(engine))


def test_the_cli_lists_the_samples_marked(tmp_path: Path) -> None:
    db = tmp_path / "review.db"
    engine = store.make_engine(f"sqlite:///{db}")
    try:
        ingest.ensure_sample(engine)
    finally:
        engine.dispose()
    out = subprocess.run(
        [sys.executable, "-m", "scoring", "runs", "list", "--db", f"sqlite:///{db}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()[1:]  # under the header
    assert len(lines) == 4 and all(line.rstrip().endswith("(sample)") for line in lines), out.stdout
    assert pl.Series(lines).str.contains("Sample, Hindi, model B").sum() == 1


def test_the_sample_sets_rows_carry_their_language_so_no_script_stands_as_a_column(engine: Engine) -> None:
    """Issue 37: the mixed sample runs named their rows by script ("Devanagari") while the Hindi
    sample runs named theirs "Hindi": one language stood as two columns of the model x language
    table. Every sample row carries its language."""
    ingest.ensure_sample(engine)
    table = team_report.team_table(engine)
    assert table.languages == ["Bengali", "English", "Hindi", "Tamil"]
    for run in store.list_runs(engine):
        assert not set(store.load_table(engine, run.id)["language"].to_list()) & SCRIPT_NAMES, run.name
