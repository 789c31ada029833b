"""Issue 27, defect 8: bytes damaged inside one stored run (SQLite's own pages intact) ended
``export``, ``estimate``, ``judge-trust`` and ``compare`` in a polars traceback ("parquet: File out
of specification") and put an exception box on 8 of the 10 pages. Now the run is named as damaged,
in one line (the CLI: stderr, exit 2; the pages: one error naming the run), with what to do, and
every other run keeps working. A run's bytes carry a SHA-256 seal, so damage Parquet itself would
not notice (a flipped bit that still decodes, to other text) is named too.

A database file cut short gave the generic "database disk image is malformed": it now says the
file is damaged and what to do, as for a file that is not SQLite.

Real damage, not mocks: the run's stored bytes are changed with an UPDATE on ``run_parts`` (so
SQLite's integrity check still passes), or the database file is truncated.
"""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from apptest_support import APP, PAGES, TIMEOUT, ok, open_page
from streamlit.testing.v1 import AppTest

from scoring import ingest, store
from scoring.store import ENV_VAR, DamagedRun, describe_failure, load_table, make_engine
from scoring.store.run_table import SEAL_BYTES

ROOT = Path(__file__).resolve().parent.parent
UPLOAD_PAGE = next(p for p in PAGES if Path(p).stem == "upload")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding the bundled sample set (four runs), made once and copied per test."""
    path = tmp_path_factory.mktemp("template") / "review.db"
    engine = make_engine(f"sqlite:///{path}")
    ingest.ensure_sample(engine)
    engine.dispose()
    return path


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "review.db"
    shutil.copy(template, path)
    return path


def run_ids(path: Path) -> tuple[int, int]:
    """(the run every page opens on, another run sharing its questions): "Sample run" and its model B."""
    engine = make_engine(f"sqlite:///{path}")
    by_name = {r.name: r.id for r in store.list_runs(engine)}
    engine.dispose()
    return by_name["Sample run"], by_name["Sample run, model B"]


def stored_bytes(path: Path, run_id: int) -> bytes:
    with sqlite3.connect(path) as conn:
        parts = conn.execute("SELECT data FROM run_parts WHERE run_id = ? ORDER BY part", (run_id,)).fetchall()
    return b"".join(p[0] for p in parts)


def damage(path: Path, run_id: int, change: Callable[[bytes], bytes]) -> None:
    """Replace the run's stored bytes with ``change(bytes)`` through SQL: SQLite's pages stay intact."""
    data = stored_bytes(path, run_id)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM run_parts WHERE run_id = ? AND part > 0", (run_id,))
        conn.execute("UPDATE run_parts SET data = ? WHERE run_id = ? AND part = 0", (change(data), run_id))
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def scrambled(data: bytes) -> bytes:
    """64 bytes in the middle changed (the issue's case: polars says "File out of specification")."""
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :]


def unsealed(data: bytes) -> bytes:
    """The bytes as a run stored before the seal was added: the Parquet file alone."""
    return data[:-SEAL_BYTES]


def silent_flip(data: bytes) -> bytes:
    """One bit flipped where Parquet still decodes, to other values: only the seal can tell."""
    parquet = unsealed(data)
    original = pl.read_parquet(io.BytesIO(parquet))
    for pos in range(len(parquet) // 3, len(parquet) - 8):
        flipped = parquet[:pos] + bytes([parquet[pos] ^ 0x01]) + parquet[pos + 1 :]
        try:
            read = pl.read_parquet(io.BytesIO(flipped))
        except BaseException:  # noqa: BLE001  polars raises (or panics) on most damage: look further
            continue
        if read.columns == original.columns and not read.equals(original):
            return data[:pos] + bytes([data[pos] ^ 0x01]) + data[pos + 1 :]
    raise AssertionError("no bit flip found that Parquet reads back as other values")


DAMAGE = {
    "scrambled": scrambled,
    "one bit that still decodes": silent_flip,
    "cut short": lambda data: data[:-100],
    "stored before the seal, scrambled": lambda data: scrambled(unsealed(data)),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_run_is_named_and_the_others_load(db: Path, kind: str) -> None:
    damaged, other = run_ids(db)
    engine = make_engine(f"sqlite:///{db}")
    before = load_table(engine, damaged)
    damage(db, damaged, DAMAGE[kind])
    with pytest.raises(DamagedRun) as caught:
        load_table(engine, damaged)
    found = describe_failure(caught.value)
    assert found is not None and not found.outage
    assert found.message.startswith(f"Run #{damaged} (Sample run) is damaged in the database")
    assert "\n" not in found.message and "backup" in found.message
    assert load_table(engine, other).height == 40
    assert before.height == 40
    engine.dispose()


def test_a_run_stored_before_the_seal_still_loads(db: Path) -> None:
    run_id, _ = run_ids(db)
    engine = make_engine(f"sqlite:///{db}")
    before = load_table(engine, run_id)
    damage(db, run_id, unsealed)
    assert load_table(engine, run_id).equals(before)
    engine.dispose()


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


COMMANDS: dict[str, Callable[[int, int], list[str]]] = {
    "export": lambda run, other: ["export", "--run", str(run), "--out", "out.csv"],
    "estimate": lambda run, other: ["estimate", "--run", str(run)],
    "judge-trust": lambda run, other: ["judge-trust", "--run", str(run)],
    "compare": lambda run, other: ["compare", "--run", str(other), "--run", str(run)],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_names_the_damaged_run_in_one_line_and_works_on_the_others(
    db: Path, tmp_path: Path, command: str
) -> None:
    damaged, other = run_ids(db)
    damage(db, damaged, scrambled)
    url = ["--db", f"sqlite:///{db}"]
    done = _cli([*COMMANDS[command](damaged, other), *url], tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"error: Run #{damaged} (Sample run) is damaged in the database"), lines[0]
    assert not (tmp_path / "out.csv").exists()
    engine = make_engine(f"sqlite:///{db}")
    third = next(r.id for r in store.list_runs(engine) if r.id not in (damaged, other))
    engine.dispose()
    fine = _cli([*COMMANDS[command](other, third), *url], tmp_path)  # the other runs: as before
    assert fine.returncode == 0, fine.stderr


def _damaged_errors(at: AppTest, run_id: int) -> list[str]:
    return [str(e.value) for e in at.error if f"Run \\#{run_id}" in str(e.value) and "damaged" in str(e.value)]


def test_every_page_names_the_damaged_run_and_every_page_works_on_another(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AppTest over every page of app.py's navigation: on the damaged run no exception box and one
    error naming it (every page that reads its rows: all but Upload); on another run, no error."""
    damaged, other = run_ids(db)
    damage(db, damaged, scrambled)
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{db}")
    named = []
    for page in PAGES:
        at = open_page(Path(page).stem, run_id=damaged)  # fails on an exception box
        errors = _damaged_errors(at, damaged)
        assert len(errors) <= 1, errors
        if errors:
            named.append(page)
            assert "Sample run" in errors[0] and "backup" in errors[0]
    assert set(named) >= set(PAGES) - {UPLOAD_PAGE}, named
    for page in PAGES:
        at = open_page(Path(page).stem, run_id=other)
        assert not _damaged_errors(at, damaged), (page, [e.value for e in at.error])
        assert not any("damaged" in str(e.value) for e in at.error), (page, [e.value for e in at.error])


def test_the_sidebar_leads_away_from_the_damaged_run_and_its_name_stays_text(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run picker is still there beside the message, and picking another run works; the
    run's name (the uploader's text) is shown literally, not as Markdown."""
    damaged, other = run_ids(db)
    engine = make_engine(f"sqlite:///{db}")
    store.update_run_meta(engine, damaged, "![x](http://127.0.0.1:9/p.png) **bold**", "m", "English")
    engine.dispose()
    damage(db, damaged, scrambled)
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{db}")
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params["run"] = str(damaged)
    ok(at.run())
    errors = _damaged_errors(at, damaged)
    assert len(errors) == 1 and "![x](" not in errors[0] and "**bold**" not in errors[0], errors
    at.sidebar.selectbox(key="run_picker").set_value(other)
    ok(at.run())
    assert not [e.value for e in at.error]


def _truncated(db: Path) -> Path:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    return db


@pytest.mark.parametrize("command", [["runs", "list"], ["export", "--run", "1", "--out", "x.csv"]])
def test_a_truncated_database_file_is_named_damaged_with_what_to_do(
    db: Path, tmp_path: Path, command: list[str]
) -> None:
    path = _truncated(db)
    size = path.stat().st_size
    done = _cli([*command, "--db", f"sqlite:///{path}"], tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "The database file is damaged" in lines[0] and "backup" in lines[0] and "move it aside" in lines[0]
    assert path.stat().st_size == size  # nothing written to it


def test_a_truncated_database_file_is_a_page_message(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _truncated(db)
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{path}")
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    ok(at.run())
    errors = [str(e.value).replace("\\", "") for e in at.error]
    assert any("The database file is damaged" in e and "backup" in e for e in errors), errors
    assert not any("cannot be reached right now" in e for e in errors), errors
