"""Issue 20: every way the database fails is one clear message naming the cause, in the CLI (one
stderr line, exit 2) and in the dashboard (a page message, no exception box), and never an
"outage" when waiting cannot help; nothing already saved is lost, and the same action works once
the cause is gone. Real failures, not mocks: a text file given as the SQLite database, a database
migrated by newer code, a folder that does not exist, a read-only file, a full disk (a 2 MB tmpfs
mounted for the test, as root like the read-only test's ``setpriv``, filled until writes get
ENOSPC) and a second connection holding SQLite's write lock beyond the wait."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from apptest_support import APP, TIMEOUT
from sqlalchemy import create_engine, text
from streamlit.testing.v1 import AppTest

from scoring import review
from scoring.ingest import save_run
from scoring.store import (
    ENV_VAR,
    LOCK_WAIT_SETTING,
    describe_failure,
    listed_runs,
    load_scored,
    make_engine,
)
from scoring.store.migrations import SchemaTooNew

ROOT = Path(__file__).resolve().parents[1]
RUN = b"question,answer,Domain,response\nCapital?,Delhi,Geography,It is Delhi\nRiver?,Ganga,Geography,Yamuna\n"


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "review.db"
    path.write_text("these are not the bytes of a SQLite database\n" * 100, encoding="utf-8")
    return path


def _too_new(tmp_path: Path) -> Path:
    path = tmp_path / "newer.db"
    make_engine(f"sqlite:///{path}").dispose()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")
    return path


def test_failures_are_named_and_only_outages_invite_waiting(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{_damaged(tmp_path)}")
    with pytest.raises(Exception) as caught:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1 FROM runs"))
    found = describe_failure(caught.value)
    assert found is not None and not found.outage and "not a SQLite database" in found.message
    with pytest.raises(SchemaTooNew) as too_new:
        make_engine(f"sqlite:///{_too_new(tmp_path)}")
    found = describe_failure(too_new.value)
    assert found is not None and not found.outage and "'0099'" in found.message
    assert describe_failure(ValueError("not ours")) is None


@pytest.mark.parametrize("kind", ["damaged", "too new"])
@pytest.mark.parametrize(
    "command",
    [
        ["export", "--run", "1", "--out", "x.csv"],
        ["estimate", "--run", "1"],
        ["runs", "list"],
        ["judge-trust", "--run", "1"],
    ],
)
def test_every_cli_that_opens_the_database_says_one_line(tmp_path: Path, kind: str, command: list[str]) -> None:
    path = _damaged(tmp_path) if kind == "damaged" else _too_new(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "scoring", *command, "--db", f"sqlite:///{path}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    line = _one_error_line(done)
    assert line.startswith("error: "), done.stderr
    assert ("not a database" in line) if kind == "damaged" else ("newer version" in line)


@pytest.mark.parametrize("kind", ["damaged", "too new", "missing folder"])
def test_the_dashboard_names_the_failure_instead_of_an_outage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = {"damaged": _damaged, "too new": _too_new}.get(kind, lambda p: p / "gone" / "deeper" / "review.db")(tmp_path)
    if kind == "missing folder":
        (tmp_path / "gone").write_text("a file where the folder should be", encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{path}")
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    errors = [str(e.value) for e in at.error]
    assert errors and not any("cannot be reached right now" in e for e in errors), errors
    expected = {"damaged": "not a SQLite database", "too new": "newer version", "missing folder": "cannot be opened"}
    assert any(expected[kind] in e for e in errors), errors
    if kind == "damaged":
        assert path.read_text(encoding="utf-8").startswith("these are not")  # nothing written over it


def _cli(
    args: list[str], cwd: Path, prefix: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "scoring", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a command that failed with exit code 2 and no traceback."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@contextlib.contextmanager
def traversable(path: Path) -> Iterator[None]:
    """Every folder above ``path`` (the checkout, its interpreter and code) passable by other users
    for the block: a clone inside a folder only its owner can enter (``mktemp -d``, Debian's home
    folders since 12) kept ``nobody`` from the code ("No module named scoring"). Only the search
    bit is added, and each folder's mode is put back after."""
    changed: list[tuple[Path, int]] = []
    try:
        for folder in [path, *path.parents]:
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                changed.append((folder, mode))
        yield
    finally:
        for folder, mode in changed:
            folder.chmod(mode)


def test_a_read_only_database_for_a_non_root_user_is_named_and_nothing_is_lost() -> None:
    """The database file and its folder belong to root, read-only for everyone else: the user
    ``nobody`` archiving a run is told the file cannot be written (one line, exit 2), the run is
    untouched, and the same command works for the file's owner."""
    folder = Path(tempfile.mkdtemp(prefix="ro_db_", dir="/tmp"))
    with contextlib.ExitStack() as stack:
        stack.enter_context(traversable(ROOT))
        stack.callback(shutil.rmtree, folder, True)
        folder.chmod(0o755)
        path = folder / "review.db"
        engine = make_engine(f"sqlite:///{path}")
        run = save_run(engine, b"answer,response\nDelhi,It is Delhi\n", "one.csv").run
        engine.dispose()
        path.chmod(0o644)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        line = _one_error_line(_cli(["runs", "archive", str(run.id), "--db", f"sqlite:///{path}"], ROOT, nobody))
        assert "read-only" in line or "cannot be opened" in line, line
        assert [r.id for r in listed_runs(make_engine(f"sqlite:///{path}"))] == [run.id]  # nothing changed
        assert _cli(["runs", "archive", str(run.id), "--db", f"sqlite:///{path}"], ROOT).returncode == 0


def test_once_the_damaged_file_is_moved_aside_the_next_command_works(tmp_path: Path) -> None:
    path = _damaged(tmp_path)
    assert _cli(["runs", "list", "--db", f"sqlite:///{path}"], tmp_path).returncode == 2
    path.rename(tmp_path / "damaged.db")
    make_engine(f"sqlite:///{path}").dispose()  # what the dashboard does on its next start
    again = _cli(["runs", "list", "--db", f"sqlite:///{path}"], tmp_path)
    assert again.returncode == 0 and "error" not in again.stderr, again.stderr


# --- a full disk and a lock held beyond the wait ----------------------------------------------


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
        line = _one_error_line(_cli(["runs", "archive", str(first.id), "--db", url], ROOT))
        assert "disk holding the database is full" in line and "earlier ones are" in line, line
        engine = make_engine(url)
        assert [r.id for r in listed_runs(engine)] == [first.id]  # not archived, and still there
        assert review.current_verdicts(engine)["verdict"].tolist() == ["correct"]  # ana's mark kept
        engine.dispose()
    finally:
        filler.unlink()
        reader.close()
    assert _cli(["runs", "archive", str(first.id), "--db", url], ROOT).returncode == 0  # room again: it works
    engine = make_engine(url)
    assert listed_runs(engine) == [] and review.current_verdicts(engine)["verdict"].tolist() == ["correct"]
    engine.dispose()


def test_a_full_disk_while_uploading_is_a_page_message_and_the_upload_works_once_there_is_room(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{small_disk / 'review.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    engine = make_engine(url)
    first = save_run(engine, RUN, "first.csv").run  # (no sample set: the database has a run)
    engine.dispose()
    _checkpointed(url)
    rows = b"question,answer,Domain,response\n" + b"".join(
        b"Q%d?,Delhi,Geography,Delhi %d\n" % (i, i) for i in range(5_000)
    )
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
        done = _cli(["runs", "archive", str(run.id), "--db", url], ROOT, env={LOCK_WAIT_SETTING: "300"})
        line = _one_error_line(done)
        assert "stayed locked by another writer" in line and "not saved" in line, line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [r.id for r in listed_runs(make_engine(url))] == [run.id]  # not archived by the failed command
    assert _cli(["runs", "archive", str(run.id), "--db", url], ROOT, env={LOCK_WAIT_SETTING: "300"}).returncode == 0
    assert listed_runs(make_engine(url)) == []
