"""Schema migrations (issue 9): a database made before migrations is upgraded with every row kept,
the models and the migrations agree, a database from newer code is refused untouched, and two
processes opening an old database at once migrate it once. Real SQLite files (copies of the
fixtures in tests/fixtures/), real processes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from apptest_support import frame_with, open_page
from sqlalchemy import inspect

from scoring import ingest, judge, review, store
from scoring.core.order import seed_from_sha
from scoring.estimate.stored_matchers import run_matchers, save_run_matchers
from scoring.match import MATCHERS
from scoring.review.reader_languages import reviewer_languages, set_reviewer_languages
from scoring.store import ENV_VAR, make_engine, migrations
from scoring.store.migrations.schema import metadata

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TODAY = FIXTURES / "review_2026-11-30.db"
OLDER = FIXTURES / "review_before_undo_index.db"


def _copy(src: Path, folder: Path) -> Path:
    dst = folder / src.name
    shutil.copyfile(src, dst)
    return dst


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _has_undo_index(engine) -> bool:
    return any(
        i["name"] == "ux_verdict_events_undoes" and i["unique"] for i in inspect(engine).get_indexes("verdict_events")
    )


def test_a_new_database_is_created_at_the_newest_revision_and_matches_the_models(tmp_path: Path) -> None:
    engine = make_engine(_url(tmp_path / "new.db"))
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert _has_undo_index(engine)


@pytest.mark.parametrize("fixture", [TODAY, OLDER], ids=["made-before-migrations", "older-without-undo-index"])
def test_an_old_database_is_upgraded_with_every_row_kept(tmp_path: Path, fixture: Path) -> None:
    path = _copy(fixture, tmp_path)
    with sqlite3.connect(path) as raw:
        counts = {
            t: raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("runs", "run_rows", "verdict_events", "judge_verdicts")
        }
    assert counts == {"runs": 1, "run_rows": 40, "verdict_events": 6, "judge_verdicts": 1}
    with sqlite3.connect(path) as raw:
        before = raw.execute(
            "SELECT item_key, question, answer, domain, response, exact_correct, overlap_correct, matching_words, "
            "total_golden_words, is_blank, bucket FROM run_rows ORDER BY row_idx"
        ).fetchall()

    engine = make_engine(_url(path))
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert _has_undo_index(engine)
    with sqlite3.connect(path) as raw:  # 0003: the rows now live in run_parts, as Parquet
        kept = ("runs", "verdict_events", "judge_verdicts")
        after = {t: raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in kept}
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert after == {t: counts[t] for t in kept}
    assert "run_rows" not in tables and "run_parts" in tables

    runs = store.list_runs(engine)  # the run is complete (an added column's default)
    assert [(r.name, r.n_rows) for r in runs] == [("Sample run", 40)]
    frame = store.load_scored(engine, runs[0].id)
    columns = [
        "item_key",
        "question",
        "answer",
        "Domain",
        "response",
        "exact_correct",
        "overlap_correct",
        "matching_words",
        "total_golden_words",
        "is_blank",
        "bucket",
    ]
    assert [tuple(row) for row in frame[columns].itertuples(index=False)] == [
        (*row[:5], bool(row[5]), bool(row[6]), *row[7:9], bool(row[9]), row[10]) for row in before
    ]  # every row, in order, with its stored verdicts
    keys = frame["item_key"].tolist()
    current = review.current_verdicts(engine)
    got = {(r.reviewer, keys.index(r.item_key), r.verdict, r.reason, r.note) for r in current.itertuples()}
    assert got == {
        ("alice", 3, "correct", "paraphrase", "same claim"),
        ("alice", 4, "wrong", "", ""),
        ("bob", 4, "correct", "", "bob thinks so"),
    }  # alice's mark on row 7 stays undone
    assert review.skipped_keys(engine, "alice") == {keys[5]}
    assert judge.stored_labels(engine, keys, prompt_version=None) == {keys[3]: "CORRECT"}
    # The index works: the undone mark cannot be undone a second time.
    assert review.undo_last(engine, "alice", run_id=runs[0].id) == keys[4]
    engine.dispose()


def test_a_database_from_newer_code_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    make_engine(_url(path)).dispose()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE alembic_version SET version_num = '0099_future'")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(migrations.SchemaTooNew) as caught:
        make_engine(_url(path))
    message = str(caught.value)
    assert "'0099_future'" in message and f"'{migrations.head()}'" in message
    assert "nothing was changed" in message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


#: A child process that waits for the go file, then opens (and so migrates) the database. Run as a
#: plain interpreter, not through multiprocessing: a spawned child re-runs the parent's __main__,
#: which an earlier test in the same pytest worker (an AppTest page) may have left pointing at a
#: Streamlit script.
_OPEN = """
import sys, time
from pathlib import Path
from scoring.store import make_engine
go = Path(sys.argv[2])
Path(sys.argv[3]).touch()  # imported and ready
while not go.exists():
    time.sleep(0.005)
make_engine(sys.argv[1]).dispose()
print("ok")
"""


def test_two_processes_opening_an_old_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = _copy(OLDER, tmp_path)
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    ready = [tmp_path / f"ready_{i}" for i in range(2)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN, _url(path), str(go), str(r)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for r in ready
    ]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # both interpreters are up and waiting: they open it at once
    outcomes = [p.communicate(timeout=120) for p in procs]
    assert [(p.returncode, out.strip()) for p, (out, _) in zip(procs, outcomes)] == [(0, "ok"), (0, "ok")], outcomes
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version_num FROM alembic_version").fetchall() == [(migrations.head(),)]
        assert raw.execute("SELECT count(*) FROM verdict_events").fetchone()[0] == 6


def test_the_dashboard_opens_an_old_database_with_its_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `make run` does with a data/review.db made before migrations: the pages show it."""
    path = _copy(OLDER, tmp_path)
    monkeypatch.setenv(ENV_VAR, _url(path))
    at = open_page("reviewers", reviewer="alice")
    per_reviewer = frame_with(at, "correct")
    assert per_reviewer["correct"].sum() == 2 and per_reviewer["wrong"].sum() == 1


def test_the_parquet_revision_downgrades_and_upgrades_with_every_row(tmp_path: Path) -> None:
    """0003 both ways on a database with a run with extra columns: the rows survive the trip."""
    engine = make_engine(_url(tmp_path / "both.db"))
    data = b"question,answer,Domain,response,id,bucket\nq1,a,D,a b,7,x\nq2,b,E,,8,y\n"
    run = ingest.save_run(engine, data, "both.csv").run
    before = store.load_scored(engine, run.id)
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0002")
    with sqlite3.connect(tmp_path / "both.db") as raw:
        assert raw.execute("SELECT count(*) FROM run_rows").fetchone()[0] == 2
        assert raw.execute("SELECT extra FROM run_rows ORDER BY row_idx").fetchall() == [
            ('{"id": "7", "bucket": "x"}',),
            ('{"id": "8", "bucket": "y"}',),
        ]
    engine.dispose()
    engine = make_engine(_url(tmp_path / "both.db"))  # upgrades again
    after = store.load_scored(engine, run.id)
    assert after.equals(before)
    assert after["extra:bucket"].tolist() == ["x", "y"] and after["id"].tolist() == ["7", "8"]
    # 0006 gave the run back the review seed an upload of the same file gets.
    again = store.get_run(engine, run.id)
    assert again is not None and again.review_seed == run.review_seed == seed_from_sha(run.sha256) != 0
    engine.dispose()


def test_the_blind_scope_revision_keeps_bucket_scopes_both_ways(tmp_path: Path) -> None:
    """0005 rebuilds ``blind_scopes`` with a domain and a sample: a bucket's scope survives the
    upgrade; the downgrade keeps the scopes the older schema can hold and drops the narrower."""
    engine = make_engine(_url(tmp_path / "blind.db"))
    run = ingest.save_run(engine, b"answer,response\na,a\n", "blind.csv").run
    review.set_blind(engine, run.id, "overlap_only", "ana")
    review.set_blind(engine, run.id, review.BlindSpec("both_fail", "Food", 30), "ana")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0004")
    with sqlite3.connect(tmp_path / "blind.db") as raw:
        assert raw.execute("SELECT run_id, bucket, created_by FROM blind_scopes").fetchall() == [
            (run.id, "overlap_only", "ana")
        ]
    engine.dispose()
    engine = make_engine(_url(tmp_path / "blind.db"))  # upgrades again
    assert review.blind_scopes(engine, run.id) == [review.BlindSpec("overlap_only")]
    assert review.is_blind(engine, run.id, review.BlindSpec("overlap_only", "Food", 10))
    engine.dispose()


def test_the_judge_choice_revision_both_ways(tmp_path: Path) -> None:
    """0009 adds ``judge_choices``; the downgrade drops it (choices are lost, nothing else), the
    upgrade brings it back empty: the estimate falls back to the latest label of any judge."""
    from scoring.store import judge_choice

    engine = make_engine(_url(tmp_path / "choice.db"))
    run = ingest.save_run(engine, b"answer,response\na,a\n", "choice.csv").run
    judge_choice.set_choice(engine, run.id, judge_choice.JudgeConfig("m", "v1"), "ana")
    assert judge_choice.get_choice(engine, run.id) == judge_choice.JudgeConfig("m", "v1")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0008")
    with sqlite3.connect(tmp_path / "choice.db") as raw:
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert raw.execute("SELECT version_num FROM alembic_version").fetchall() == [("0008",)]
    assert "judge_choices" not in tables and "runs" in tables
    engine.dispose()
    engine = make_engine(_url(tmp_path / "choice.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert judge_choice.get_choice(engine, run.id) is None and store.get_run(engine, run.id) is not None
    engine.dispose()


def test_the_archive_revision_both_ways(tmp_path: Path) -> None:
    """0010 adds ``runs.archived_at`` and ``runs.column_map`` (both NULL for existing runs); the
    downgrade drops them with every run, part and verdict kept, the upgrade brings them back NULL."""
    engine = make_engine(_url(tmp_path / "archive.db"))
    run = ingest.save_run(engine, b"answer,response\na,a\nb,c\n", "archive.csv").run
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0009")
    with sqlite3.connect(tmp_path / "archive.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
        assert raw.execute("SELECT count(*) FROM run_parts").fetchone()[0] >= 1
    assert "archived_at" not in columns and "column_map" not in columns and "review_seed" in columns
    engine.dispose()
    engine = make_engine(_url(tmp_path / "archive.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    with sqlite3.connect(tmp_path / "archive.db") as raw:
        assert raw.execute("SELECT archived_at, column_map FROM runs").fetchall() == [(None, None)]
    assert store.get_run(engine, run.id) == run and len(store.load_scored(engine, run.id)) == 2
    engine.dispose()


def test_the_guidelines_revision_both_ways(tmp_path: Path) -> None:
    """0011 adds ``run_guidelines`` and ``guideline_reads``; the downgrade drops both (the
    guidelines are lost, every run and verdict kept), the upgrade brings them back empty."""
    from scoring.store import guideline_log as guidelines

    engine = make_engine(_url(tmp_path / "guide.db"))
    run = ingest.save_run(engine, b"answer,response\na,a\n", "guide.csv").run
    version = guidelines.save(engine, run.id, "Be strict.", "ana")
    assert version is not None and guidelines.mark_read(engine, version.id, "alice")
    review.record_mark(engine, store.load_scored(engine, run.id)["item_key"][0], run.id, "alice", "correct")
    with engine.begin() as conn:  # down to 0011 (past any later revision): the guidelines are there
        command.downgrade(migrations._config(conn), "0011")
    found = guidelines.current(engine, run.id)
    assert found is not None and found.text == "Be strict." and guidelines.has_read(engine, version.id, "alice")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0010")
    with sqlite3.connect(tmp_path / "guide.db") as raw:
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert raw.execute("SELECT version_num FROM alembic_version").fetchall() == [("0010",)]
        assert raw.execute("SELECT count(*) FROM verdict_events").fetchone()[0] == 1
    assert not {"run_guidelines", "guideline_reads"} & tables and "runs" in tables
    engine.dispose()
    engine = make_engine(_url(tmp_path / "guide.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert guidelines.current(engine, run.id) is None and store.get_run(engine, run.id) == run
    assert guidelines.save(engine, run.id, "Again.", "ana") is not None
    engine.dispose()


def test_the_language_revisions_both_ways(tmp_path: Path) -> None:
    """0013 adds ``runs.language_source`` and 0014 ``runs.languages`` (NULL for existing runs, whose
    rows have no ``language`` column: reading fills it); the downgrades drop them with every run
    and its rows' languages kept, the upgrades bring them back NULL."""
    engine = make_engine(_url(tmp_path / "lang.db"))
    run = ingest.save_run(engine, "question,answer,lang,response\nq,a,hi,a\nक,ख,ta,ग\n".encode(), "lang.csv").run
    assert store.language_source(engine, run.id) == "column:lang" and run.language == ""  # mixed: no one language
    assert run.languages == ("Hindi", "Tamil") and store.run_label(run).endswith("· Hindi, Tamil (2 rows)")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0013")
    with sqlite3.connect(tmp_path / "lang.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
    assert "languages" not in columns and "language_source" in columns
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0012")
    with sqlite3.connect(tmp_path / "lang.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
    assert "language_source" not in columns and "column_map" in columns
    engine.dispose()
    engine = make_engine(_url(tmp_path / "lang.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert store.language_source(engine, run.id) is None and store.get_run(engine, run.id) == run
    assert store.get_run(engine, run.id).languages == ()  # named by its own language again, as before
    assert store.load_table(engine, run.id)["language"].to_list() == ["Hindi", "Tamil"]  # the stored column
    engine.dispose()


def test_the_run_matchers_revision_both_ways(tmp_path: Path) -> None:
    """0015 adds ``run_matchers`` (no row for existing runs: every matcher, as before); the
    downgrade drops it with every run kept, the upgrade brings it back empty."""
    engine = make_engine(_url(tmp_path / "match.db"))
    run = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "m.csv").run
    assert run_matchers(engine, run.id) == MATCHERS  # never chosen
    save_run_matchers(engine, run.id, ["chrf", "norm_exact"])
    assert run_matchers(engine, run.id) == ("norm_exact", "chrf")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0014")
    with sqlite3.connect(tmp_path / "match.db") as raw:
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "run_matchers" not in tables and "runs" in tables
    engine.dispose()
    engine = make_engine(_url(tmp_path / "match.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert store.get_run(engine, run.id) == run and run_matchers(engine, run.id) == MATCHERS
    save_run_matchers(engine, run.id, [])
    assert run_matchers(engine, run.id) == ()  # none on: saved as such, not "never chosen"
    engine.dispose()


def test_the_reader_languages_revision_both_ways(tmp_path: Path) -> None:
    """0016 adds ``reader_languages`` (no row for existing reviewers: any row is theirs, as before);
    the downgrade drops it with every run and verdict kept, the upgrade brings it back empty."""
    engine = make_engine(_url(tmp_path / "readers.db"))
    run = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "r.csv").run
    key = store.load_scored(engine, run.id)["item_key"].iloc[0]
    review.record_mark(engine, key, run.id, "asha", "correct")
    assert reviewer_languages(engine, "asha") == ()
    assert set_reviewer_languages(engine, "asha", ["ta", "Hindi", "tamil"]) == ("Hindi", "Tamil")
    assert reviewer_languages(engine, "asha") == ("Hindi", "Tamil")
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0015")
    with sqlite3.connect(tmp_path / "readers.db") as raw:
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        verdicts = raw.execute("SELECT count(*) FROM verdict_events").fetchone()[0]
    assert "reader_languages" not in tables and "runs" in tables and verdicts == 1
    engine.dispose()
    engine = make_engine(_url(tmp_path / "readers.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert store.get_run(engine, run.id) == run and reviewer_languages(engine, "asha") == ()
    engine.dispose()


def test_the_content_hash_revision_both_ways(tmp_path: Path) -> None:
    """0017 adds ``runs.file_sha256`` and ``runs.content_sha256`` (NULL for existing runs: the file's
    sha256 is theirs, their content is hashed when an upload of as many rows looks for it); the
    downgrade drops them with every run of a two-model file and its rows kept, the upgrade brings
    them back NULL, and the same rows shuffled still open the stored runs."""
    engine = make_engine(_url(tmp_path / "content.db"))
    data = b"question,answer,response,model\nq,a,a,A\nr,b,c,A\nq,a,x,B\nr,b,b,B\n"
    a, b = ingest.save_file(engine, data, "two.csv")
    assert a.run.file_sha256 == b.run.file_sha256 == store.sha256_bytes(data) and a.run.content_sha256
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0016")
    with sqlite3.connect(tmp_path / "content.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
        parts = raw.execute("SELECT count(*) FROM run_parts").fetchone()[0]
    assert {"file_sha256", "content_sha256"}.isdisjoint(columns) and "languages" in columns and parts == 2
    engine.dispose()
    engine = make_engine(_url(tmp_path / "content.db"))  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert store.get_run(engine, a.run.id) == a.run and store.get_run(engine, a.run.id).content_sha256 == ""
    assert store.load_table(engine, b.run.id)["response"].to_list() == ["x", "b"]
    shuffled = b"question,answer,response,model\nq,a,x,B\nr,b,b,B\nr,b,c,A\nq,a,a,A\n"
    again = ingest.save_file(engine, shuffled, "two_again.csv")
    assert {(r.found, r.run.id) for r in again} == {("same_rows", a.run.id), ("same_rows", b.run.id)}


def test_the_sample_runs_revision_marks_the_shipped_samples_and_nothing_else(tmp_path: Path) -> None:
    """0018 adds ``runs.sample``: on a database from before it, the runs whose bytes are a shipped
    sample file are marked, an upload is not; the downgrade drops the mark with every run kept."""
    engine = make_engine(_url(tmp_path / "samples.db"))
    samples = ingest.load_samples(engine)
    mine = ingest.save_run(engine, b"question,answer,response\nq,a,a\n", "mine.csv").run
    assert [r.sample for r in samples] == [True] * len(store.SAMPLE_SET) and not mine.sample
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0016")
    with sqlite3.connect(tmp_path / "samples.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
    assert "sample" not in columns
    engine.dispose()
    engine = make_engine(_url(tmp_path / "samples.db"))  # upgrades again: marks by the shipped bytes
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    marked = {r.id: r.sample for r in store.list_runs(engine)}
    assert marked == {**{r.id: True for r in samples}, mine.id: False}
    engine.dispose()


def test_a_run_stored_before_rows_had_a_language_reads_with_one(tmp_path: Path) -> None:
    """The fixture database (made before migrations, one 40-row run, no language anywhere): after
    upgrading, its rows read with a ``language`` column from their script, and naming the run's
    language later names every row."""
    engine = make_engine(_url(_copy(TODAY, tmp_path)))
    run = store.list_runs(engine)[0]
    assert store.language_source(engine, run.id) is None
    table = store.load_table(engine, run.id)
    assert table.columns[:6] == ["row_idx", "item_key", "question", "answer", "Domain", "language"]
    assert set(table["language"]) <= {"Latin", "Devanagari", "Tamil script", "Bengali script"}
    assert "Latin" in set(table["language"])
    store.update_run_meta(engine, run.id, run.name, run.model, "hindi")
    assert set(store.load_table(engine, run.id)["language"]) == {"Hindi"}
    engine.dispose()
