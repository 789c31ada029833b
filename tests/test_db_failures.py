"""Issue 20: every way the database fails is one clear message naming the cause, in the CLI (one
stderr line, exit 2) and in the dashboard (a page message, no exception box), and never an
"outage" when waiting cannot help. Real failures: a text file given as the SQLite database, a
database migrated by newer code, a folder that does not exist, a read-only file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from apptest_support import APP, TIMEOUT
from sqlalchemy import create_engine, text
from streamlit.testing.v1 import AppTest

from scoring.store import ENV_VAR, describe_failure, listed_runs, make_engine, save_run
from scoring.store.migrations import SchemaTooNew

ROOT = Path(__file__).resolve().parents[1]


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
@pytest.mark.parametrize("command", [["export", "--run", "1", "--out", "x.csv"], ["estimate", "--run", "1"],
                                     ["runs", "list"], ["judge-trust", "--run", "1"]])  # fmt: skip
def test_every_cli_that_opens_the_database_says_one_line(tmp_path: Path, kind: str, command: list[str]) -> None:
    path = _damaged(tmp_path) if kind == "damaged" else _too_new(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "scoring", *command, "--db", f"sqlite:///{path}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    assert ("not a database" in lines[0]) if kind == "damaged" else ("newer version" in lines[0])


@pytest.mark.parametrize("kind", ["damaged", "too new", "missing folder"])
def test_the_dashboard_names_the_failure_instead_of_an_outage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              kind: str) -> None:  # fmt: skip
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


def _cli(args: list[str], cwd: Path, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(prefix or []), sys.executable, "-m", "scoring", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip


def test_a_read_only_database_for_a_non_root_user_is_named_and_nothing_is_lost() -> None:
    """The database file and its folder belong to root, read-only for everyone else: the user
    ``nobody`` archiving a run is told the file cannot be written (one line, exit 2), the run is
    untouched, and the same command works for the file's owner."""
    folder = Path(tempfile.mkdtemp(prefix="ro_db_", dir="/tmp"))
    try:
        folder.chmod(0o755)
        path = folder / "review.db"
        engine = make_engine(f"sqlite:///{path}")
        run = save_run(engine, b"answer,response\nDelhi,It is Delhi\n", "one.csv").run
        engine.dispose()
        path.chmod(0o644)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = _cli(["runs", "archive", str(run.id), "--db", f"sqlite:///{path}"], ROOT, nobody)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "read-only" in lines[0] or "cannot be opened" in lines[0], lines
        assert [r.id for r in listed_runs(make_engine(f"sqlite:///{path}"))] == [run.id]  # nothing changed
        assert _cli(["runs", "archive", str(run.id), "--db", f"sqlite:///{path}"], ROOT).returncode == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_once_the_damaged_file_is_moved_aside_the_next_command_works(tmp_path: Path) -> None:
    path = _damaged(tmp_path)
    assert _cli(["runs", "list", "--db", f"sqlite:///{path}"], tmp_path).returncode == 2
    path.rename(tmp_path / "damaged.db")
    make_engine(f"sqlite:///{path}").dispose()  # what the dashboard does on its next start
    again = _cli(["runs", "list", "--db", f"sqlite:///{path}"], tmp_path)
    assert again.returncode == 0 and "error" not in again.stderr, again.stderr
