"""Issue 20: a first start loads a sample set (two models x two languages sharing question ids)
that every page has real content for: each run holds all four agreement buckets, the runs share
questions by id (English with English, Hindi with Hindi, and across the languages), and the
comparison of the four has a heatmap and a paired table. Samples are marked in every run list and
archived like any run.

Issue 37, point 5: only the embedded default loads them (a team database starts empty); they are
marked in the store, left out of every run list and table once the database holds a run of the
team's own, and removed all at once for good (they do not come back on the next start)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy.engine import Engine

from scoring import ingest, review, store, team_report
from scoring.compare import default_key, match_runs, paired_comparisons
from scoring.compare.database_runs import stored_run
from scoring.core.protocols import BUCKETS
from scoring.store import ENV_VAR
from scoring.store.samples import SAMPLES_SETTING, SCRIPT_NAMES
from scoring.team_report import team_table

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


def test_only_the_embedded_default_loads_the_samples_unless_the_setting_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "checkout"  # no .streamlit/secrets.toml: the environment alone decides
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv(SAMPLES_SETTING, raising=False)
    assert store.samples_on_first_start(root)  # no database named: data/review.db, a first look
    monkeypatch.setenv(ENV_VAR, "postgresql+psycopg://team@db/review")
    assert not store.samples_on_first_start(root)  # a team database starts empty
    for said, loads in (("true", True), ("Yes", True), ("1", True), ("off", False), ("", False), ("maybe", False)):
        monkeypatch.setenv(SAMPLES_SETTING, said)
        assert store.samples_on_first_start(root) is loads, said  # empty or unclear: the default rule
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv(SAMPLES_SETTING, "false")
    assert not store.samples_on_first_start(root)
    (root / ".streamlit").mkdir(parents=True)
    (root / ".streamlit" / "secrets.toml").write_text('REVIEW_DB_URL = "sqlite:///team.db"\n', encoding="utf-8")
    monkeypatch.delenv(SAMPLES_SETTING)
    assert not store.samples_on_first_start(root)  # named in the secrets: a team database too


def test_the_runs_every_table_shows_leave_the_samples_out_once_there_is_a_run_of_ones_own(engine: Engine) -> None:
    samples = ingest.load_samples(engine)
    assert all(store.is_sample(r) for r in samples)
    listed = store.listed_runs(engine)
    assert store.shown_runs(listed) == listed  # nothing else yet: a first look
    mine = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "mine.csv").run
    listed = store.listed_runs(engine)
    assert [r.id for r in store.shown_runs(listed)] == [mine.id]
    assert store.shown_runs(listed, show_samples=True) == listed
    # The table command's default runs follow the same rule.
    assert team_table(engine).models == ["mine"]
    store.archive_run(engine, mine.id)  # the team's own run archived: the samples are all there is
    assert store.shown_runs(store.listed_runs(engine)) == store.listed_runs(engine) != []


def test_removing_the_samples_deletes_them_all_for_good_and_keeps_ones_own(engine: Engine) -> None:
    samples = ingest.load_samples(engine)
    mine = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "mine.csv").run
    store.archive_run(engine, samples[0].id)  # an archived sample goes too
    key = store.load_scored(engine, samples[-1].id)["item_key"].iloc[0]
    review.record_mark(engine, key, samples[-1].id, "asha", "correct")
    removed = store.remove_samples(engine)
    assert sorted(s.run.id for s in removed) == sorted(r.id for r in samples)
    assert [r.id for r in store.list_runs(engine)] == [mine.id] and store.sample_runs(engine) == []
    said = store.removed_sentence(removed)
    assert said.startswith(f"Removed the {len(samples)} sample runs (#") and "The 1 verdicts" in said, said
    # The next start loads nothing: the database has held runs.
    assert store.ever_held_runs(engine) and ingest.ensure_sample(engine) is None
    assert [r.id for r in store.list_runs(engine)] == [mine.id]
    assert store.remove_samples(engine) == [] and "nothing removed" in store.removed_sentence([])


def test_the_samples_stay_gone_when_they_were_the_only_runs(engine: Engine) -> None:
    assert not store.ever_held_runs(engine)
    ingest.ensure_sample(engine)
    store.remove_samples(engine)
    assert store.list_runs(engine) == [] and ingest.ensure_sample(engine) is None
    assert store.list_runs(engine) == []


def test_the_cli_removes_the_samples(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'review.db'}"
    engine = store.make_engine(db)
    try:
        ingest.ensure_sample(engine)
        mine = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "mine.csv").run
    finally:
        engine.dispose()
    command = [sys.executable, "-m", "scoring", "runs", "remove-samples", "--db", db]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Removed the 4 sample runs (#1, #2, #3, #4) for good"), out.stdout
    listing = subprocess.run(
        [sys.executable, "-m", "scoring", "runs", "list", "--all", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listing.stdout.splitlines()[1:] and all("(sample)" not in line for line in listing.stdout.splitlines())
    assert f"{mine.id:>6}" in listing.stdout.splitlines()[1]
    # ... and loaded again on request, marked as samples (removal is one click: it can be undone).
    added = subprocess.run(
        [sys.executable, "-m", "scoring", "runs", "add-samples", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert added.returncode == 0 and added.stdout.startswith("loaded 4 sample runs (#"), added.stdout + added.stderr
    engine = store.make_engine(db)
    try:
        assert len(store.sample_runs(engine)) == 4 and not store.get_run(engine, mine.id).sample
    finally:
        engine.dispose()
