"""Issue 20, the last two ways the database fails: the disk holding it is full while saving, and
another writer holds its lock beyond the wait. Real conditions, not mocks: a 2 MB tmpfs mounted
for the test (as root, like the read-only test's ``setpriv``) filled by a file until writes get
ENOSPC, and a second connection holding SQLite's write lock. Each is one clear message (CLI: one
stderr line, exit 2; dashboard: a page message, no exception box), nothing already saved is lost,
and the same action works once the cause is gone."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from apptest_support import APP, TIMEOUT
from streamlit.testing.v1 import AppTest

from scoring import review
from scoring.store import ENV_VAR, LOCK_WAIT_SETTING, listed_runs, load_scored, make_engine, save_run

ROOT = Path(__file__).resolve().parents[1]
RUN = b"question,answer,Domain,response\nCapital?,Delhi,Geography,It is Delhi\nRiver?,Ganga,Geography,Yamuna\n"


def _cli(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), **env})  # fmt: skip


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 2 MB tmpfs of its own (unmounted after)."""
    where = Path(tempfile.mkdtemp(prefix="full_disk_", dir="/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        where.rmdir()


def _fill(disk: Path) -> Path:
    """Write a filler file until the disk is full (ENOSPC); returns it, to delete to make room."""
    filler = disk / "filler.bin"
    with open(filler, "wb", buffering=0) as out:  # unbuffered: nothing left to write on close
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC: the disk is full, not another failure
    return filler


def _checkpointed(url: str) -> None:
    """Fold the WAL into the file so the next write needs new pages (a full disk then shows)."""
    engine = make_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()


def test_a_full_disk_is_named_by_the_cli_nothing_saved_is_lost_and_freeing_space_is_enough(small_disk: Path) -> None:
    url = f"sqlite:///{small_disk / 'review.db'}"
    engine = make_engine(url)
    first = save_run(engine, RUN, "first.csv").run
    key = load_scored(engine, first.id)["item_key"].iloc[0]
    review.record_mark(engine, key, first.id, "ana", "correct")
    engine.dispose()
    _checkpointed(url)
    reader = sqlite3.connect(small_disk / "review.db")  # a dashboard has it open: its WAL files exist
    reader.execute("SELECT count(*) FROM runs").fetchall()
    filler = _fill(small_disk)
    try:  # nothing on the command line stores a run; archiving writes, and a full disk refuses it
        line = _one_error_line(_cli(["runs", "archive", str(first.id), "--db", url]))
        assert "disk holding the database is full" in line and "earlier ones are" in line, line
        engine = make_engine(url)
        assert [r.id for r in listed_runs(engine)] == [first.id]  # not archived, and still there
        assert review.current_verdicts(engine)["verdict"].tolist() == ["correct"]  # ana's mark kept
        engine.dispose()
    finally:
        filler.unlink()
        reader.close()
    assert _cli(["runs", "archive", str(first.id), "--db", url]).returncode == 0  # room again: it works
    engine = make_engine(url)
    assert listed_runs(engine) == [] and review.current_verdicts(engine)["verdict"].tolist() == ["correct"]
    engine.dispose()


def test_a_full_disk_while_uploading_is_a_page_message_and_the_upload_works_once_there_is_room(
        small_disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    url = f"sqlite:///{small_disk / 'review.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    engine = make_engine(url)
    first = save_run(engine, RUN, "first.csv").run  # (no sample set: the database has a run)
    engine.dispose()
    _checkpointed(url)
    rows = b"question,answer,Domain,response\n" + b"".join(b"Q%d?,Delhi,Geography,Delhi %d\n" % (i, i)
                                                           for i in range(5_000))  # fmt: skip
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.switch_page("views/upload.py")
    at.run()  # the dashboard is open (its database files in place) when the disk fills
    assert not at.exception, at.exception
    filler = _fill(small_disk)
    at.file_uploader(key="uploads").set_value(("five_thousand.csv", rows, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    said = [str(e.value) for e in at.error]
    assert any("disk holding the database is full" in m for m in said), said
    engine = make_engine(url)
    assert [r.id for r in listed_runs(engine)] == [first.id]  # the first run intact, no half run listed
    engine.dispose()
    filler.unlink()
    at.file_uploader(key="uploads").set_value(("five_thousand.csv", rows, "text/csv"))  # as a person retries
    at.run()
    assert not at.exception, at.exception
    engine = make_engine(url)
    names = [r.filename for r in listed_runs(engine)]
    engine.dispose()
    assert names == ["five_thousand.csv", "first.csv"], names


def test_a_lock_held_beyond_the_wait_is_named_and_the_command_works_once_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "review.db"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    run = save_run(engine, RUN, "first.csv").run
    engine.dispose()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer (a stuck script, say) holds the write lock
    holder.execute("UPDATE runs SET name = name")
    try:
        done = _cli(["runs", "archive", str(run.id), "--db", url], **{LOCK_WAIT_SETTING: "300"})
        line = _one_error_line(done)
        assert "stayed locked by another writer" in line and "not saved" in line, line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [r.id for r in listed_runs(make_engine(url))] == [run.id]  # not archived by the failed command
    assert _cli(["runs", "archive", str(run.id), "--db", url], **{LOCK_WAIT_SETTING: "300"}).returncode == 0
    assert listed_runs(make_engine(url)) == []
