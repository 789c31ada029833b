"""Runs a team can tidy (issue 19): archive, restore and delete for good in the store (SQLite and
PostgreSQL), ``python -m scoring runs list | archive | restore`` as a process, and the Upload
page's Archive / Restore / Delete for good through AppTest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from apptest_support import APP, TIMEOUT, click, markdown_texts, ok, open_page, sample_database, texts
from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from scoring import ingest, review, store
from scoring.core.errors import InputError
from scoring.store import judge_choice, make_engine
from scoring.store.orm_tables import AuditRow, BlindScope, JudgeChoice, Run, RunPart, VerdictEvent
from scoring.store.runs import _remove_abandoned

ROOT = Path(__file__).resolve().parent.parent
DATA = b"question,answer,Domain,response\nq1,Delhi,Geo,It is Delhi\nq2,Ganga,Geo,the Yamuna\nq3,red,Art,\n"
SAME_ROWS = DATA + b"q4,blue,Art,blue sky\n"  # other bytes, three rows in common


def _count(engine: Engine, table, run_id: int | None = None) -> int:
    query = select(func.count()).select_from(table)
    if run_id is not None:
        query = query.where(table.run_id == run_id)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def test_archive_and_restore_keep_the_run_and_its_verdicts(engine: Engine) -> None:
    old = ingest.save_run(engine, DATA, "old.csv").run
    new = ingest.save_run(engine, SAME_ROWS, "new.csv").run
    keys = store.load_scored(engine, old.id)["item_key"].tolist()
    review.record_mark(engine, keys[1], old.id, "alice", "wrong")
    before = store.load_scored(engine, old.id)

    archived = store.archive_run(engine, old.id)
    assert archived == old
    assert [r.id for r in store.listed_runs(engine)] == [new.id]
    (item,) = store.archived_runs(engine)
    assert item.run == old and item.archived_at is not None and store.archived_at(engine, old.id) is not None
    assert [(r.id, a is not None) for r, a in store.all_runs(engine)] == [(new.id, False), (old.id, True)]
    assert [r.id for r, _ in store.all_runs(engine, archived=True)] == [old.id]
    assert [r.id for r, _ in store.all_runs(engine, archived=False)] == [new.id]
    # Still a run (by id, for the CLIs), rows and verdicts untouched; the verdict carries over.
    assert store.get_run(engine, old.id) == old and store.load_scored(engine, old.id).equals(before)
    current = review.current_verdicts(engine, store.load_scored(engine, new.id)["item_key"])
    assert current[["item_key", "reviewer", "verdict"]].values.tolist() == [[keys[1], "alice", "wrong"]]
    first = store.archived_at(engine, old.id)
    store.archive_run(engine, old.id)  # again: the first time is kept
    assert store.archived_at(engine, old.id) == first
    assert store.count_runs(engine) == 2  # archived runs still count (no sample is loaded over them)

    assert store.restore_run(engine, old.id) == old
    assert [r.id for r in store.listed_runs(engine)] == [new.id, old.id] and store.archived_runs(engine) == []
    assert store.archived_at(engine, old.id) is None
    for action in (store.archive_run, store.restore_run, store.delete_run, store.delete_summary):
        with pytest.raises(store.UnknownRun, match="^No run with id 999.$"):
            action(engine, 999)


def test_delete_for_good_needs_archiving_and_keeps_the_verdict_log(engine: Engine) -> None:
    keep = ingest.save_run(engine, SAME_ROWS, "keep.csv").run
    run = ingest.save_run(engine, DATA, "gone.csv").run  # the newest: its id is SQLite's next one
    keys = store.load_scored(engine, run.id)["item_key"].tolist()
    review.record_mark(engine, keys[0], run.id, "alice", "correct")
    review.record_mark(engine, keys[1], run.id, "bob", "wrong")
    review.record_skip(engine, keys[2], run.id, "bob")
    review.set_blind(engine, run.id, "overlap_only", "ana")
    review.set_audit(engine, run.id, keys[:2], "ana")
    judge_choice.set_choice(engine, run.id, judge_choice.JudgeConfig("m", "v1"), "ana")
    events = _count(engine, VerdictEvent)

    with pytest.raises(InputError, match="not archived: archive it before deleting it for good"):
        store.delete_run(engine, run.id)
    store.archive_run(engine, run.id)
    summary = store.delete_summary(engine, run.id)
    assert (summary.rows, summary.parts, summary.log_events) == (3, 1, 3)
    warning = store.delete_warning(summary)
    assert "removes its 3 rows" in warning and "3 verdicts, skips and decisions" in warning
    assert "gone" in store.archive_prompt(run) and "verdicts stay" in store.archive_prompt(run)
    assert [store.confirms_delete(run, t) for t in (str(run.id), f"#{run.id}", " gone ", "", "go", "1000")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]

    assert store.delete_run(engine, run.id) == summary
    assert store.get_run(engine, run.id) is None and store.listed_runs(engine) == [keep]
    assert store.archived_runs(engine) == [] and store.count_runs(engine) == 1
    for table in (RunPart, BlindScope, AuditRow, JudgeChoice):
        assert _count(engine, table, run.id) == 0, table.__tablename__
    assert _count(engine, VerdictEvent) == events  # the log keeps every event
    assert review.current_verdicts(engine, keys)["verdict"].tolist() == ["correct", "wrong"]
    with pytest.raises(store.UnknownRun):
        store.delete_run(engine, run.id)
    # The id stays taken (a placeholder row nobody sees, left alone by the abandoned-upload
    # clean-up): a new upload never inherits the deleted run's log entries or caches.
    _remove_abandoned(engine)
    with engine.connect() as conn:
        assert conn.execute(select(Run.sha256, Run.complete).where(Run.id == run.id)).one() == (
            f"deleted-{run.id}",
            False,
        )
    again = ingest.save_run(engine, DATA, "gone.csv")
    assert again.created and again.run.id > run.id
    assert review.current_verdicts(engine, keys)["verdict"].tolist() == ["correct", "wrong"]  # carried over


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoring", "runs", *args, "--db", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_runs_list_archive_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scoring.cli import main

    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    first = ingest.save_run(engine, DATA, "first.csv", name="first\x1b[31m\nrun").run
    second = ingest.save_run(engine, SAME_ROWS, "second.csv").run
    engine.dispose()
    # Two processes (a start costs seconds): one that works, one that fails; the listing in-process.
    done = _cli(url, "archive", str(first.id))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"archived run {first.id} (first?[31m run); its verdicts stay.")
    bad = _cli(url, "restore", "999")
    assert bad.returncode == 2 and bad.stderr.splitlines() == ["error: No run with id 999."] and not bad.stdout
    assert main(["runs", "list", "--all", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].split() == ["id", "rows", "uploaded", "name"]
    assert lines[1].split()[0] == str(second.id) and "archived" not in lines[1]
    assert lines[2].split()[0] == str(first.id) and "first?[31m run  archived 20" in lines[2]


def test_cli_runs_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scoring.cli import main

    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    run = ingest.save_run(engine, DATA, "only.csv").run
    assert main(["runs", "archive", str(run.id), "--db", url]) == 0
    assert main(["runs", "list", "--db", url]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["id", "rows", "uploaded", "name"]  # none listed
    assert main(["runs", "list", "--archived", "--db", url]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split()[:3] == [str(run.id), "3", "rows"]
    assert main(["runs", "restore", str(run.id), "--db", url]) == 0
    assert [r.id for r in store.listed_runs(engine)] == [run.id]
    assert main(["runs", "archive", "77", "--db", url]) == 2
    assert capsys.readouterr().err == "error: No run with id 77.\n"
    engine.dispose()


def test_upload_page_archives_restores_and_deletes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = next(gen := sample_database(tmp_path, monkeypatch))
    try:
        samples = [r.id for r in store.list_runs(engine)]  # the sample set, newest first
        sample = store.list_runs(engine)[0]
        other = ingest.save_run(engine, DATA, "other.csv", name="![x](http://host/i.png) other").run
        at = open_page("upload", run_id=other.id)
        assert any(t.startswith(f'Archive run #{other.id} "![x](http://host/i.png) other"') for t in texts(at))
        assert at.button(key="archive_run").disabled  # not before the confirmation is ticked
        at.checkbox(key=f"archive_sure_{other.id}").check()
        at.run()
        click(at, "archive_run")
        assert [r.id for r in store.listed_runs(engine)] == samples
        assert f"Run #{other.id} archived" in at.success[0].value
        assert at.query_params["run"] == str(sample.id)  # the page moved on to a listed run
        listed = f"#{other.id} ![x](http://host/i.png) other · other (3 rows)\nfile other.csv"
        assert any(t.startswith(listed) for t in texts(at))
        # Gone from the run picker every page shares; a link to it says it is archived.
        fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        fresh.query_params.update(reviewer="alice", run=str(other.id))
        ok(fresh.run())  # app.py: the sidebar's run picker and the URL's run
        assert fresh.sidebar.selectbox(key="run_picker").value == sample.id
        assert [o for o in fresh.sidebar.selectbox(key="run_picker").options if "other" in o] == []
        assert [w.value for w in fresh.sidebar.warning] == [  # Markdown-escaped: the ?run= value is quoted
            rf"Run {other.id} is archived \(restore it on the Upload page\)\; showing the newest run\."
        ]
        click(at, f"restore_run_{other.id}")
        assert [r.id for r in store.listed_runs(engine)] == [other.id, *samples]
        assert at.query_params["run"] == str(other.id)

        store.archive_run(engine, other.id)
        at.run()
        at.checkbox(key=f"delete_open_{other.id}").check()
        at.run()
        assert any("for good removes its 3 rows" in t for t in texts(at))
        assert not [t for t in markdown_texts(at) if "http://host" in t]  # the name never as Markdown
        assert at.button(key=f"delete_run_{other.id}").disabled
        at.text_input(key=f"delete_confirm_{other.id}").set_value("other")  # not the whole name
        at.run()
        assert at.button(key=f"delete_run_{other.id}").disabled
        at.text_input(key=f"delete_confirm_{other.id}").set_value(str(other.id))
        at.run()
        click(at, f"delete_run_{other.id}")
        assert store.get_run(engine, other.id) is None and store.archived_runs(engine) == []
        assert f"Run #{other.id} deleted for good" in at.success[0].value
        assert not at.exception
    finally:
        gen.close()


def test_uploading_an_archived_runs_bytes_again_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes open the same run; when that run is archived the upload brings it back to the
    run list (and says so) instead of opening a run no page can select."""
    engine = next(gen := sample_database(tmp_path, monkeypatch))
    try:
        other = ingest.save_run(engine, DATA, "other.csv").run
        store.archive_run(engine, other.id)
        at = open_page("upload")
        at.file_uploader(key="uploads").set_value(("again.csv", DATA, "text/csv"))
        ok(at.run())
        assert other.id in [r.id for r in store.listed_runs(engine)]
        assert at.query_params["run"] == str(other.id)
    finally:
        gen.close()
