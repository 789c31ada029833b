"""The review plan's half-width kept with the run's audit scope (issue 27, revision 0012): stored
by :func:`scoring.store.audit.set_audit`, read back by :func:`audit_half_width`, replaced by the
next plan, and added or dropped by the migration with every audit row kept. (The page's use of it
is in tests/test_app_estimate.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from scoring import ingest, review, store
from scoring.store import make_engine, migrations
from scoring.store.audit import audit_half_width, set_audit
from scoring.store.migrations.schema import metadata

CSV = b"answer,response\na,a\nb,c\nc,c\n"


def _engine_with_run(path: Path) -> tuple:
    engine = make_engine(f"sqlite:///{path}")
    run = ingest.save_run(engine, CSV, "plan.csv").run
    return engine, run, store.load_scored(engine, run.id)["item_key"].tolist()


def test_the_half_width_is_kept_with_the_scope_and_replaced_by_the_next_plan(tmp_path: Path) -> None:
    engine, run, keys = _engine_with_run(tmp_path / "plan.db")
    assert audit_half_width(engine, run.id) is None  # no plan yet
    assert set_audit(engine, run.id, keys[:2], "ana", 0.05) == 2
    assert audit_half_width(engine, run.id) == pytest.approx(0.05)
    assert set_audit(engine, run.id, keys[1:], "bob", 0.02) == 2
    assert audit_half_width(engine, run.id) == pytest.approx(0.02)
    assert review.audit_keys(engine, run.id) == set(keys[1:])
    set_audit(engine, run.id, keys[:1], "bob")  # a plan that names no half-width keeps none
    assert audit_half_width(engine, run.id) is None
    for wrong in (0.0, 1.0, 5.0, -0.02):
        with pytest.raises(ValueError):
            set_audit(engine, run.id, keys, "ana", wrong)
    assert review.audit_keys(engine, run.id) == set(keys[:1])  # a refused plan writes nothing
    engine.dispose()


def test_the_half_width_revision_both_ways(tmp_path: Path) -> None:
    """0012 adds ``audit_rows.half_width``; the downgrade drops it with every audit row kept, the
    upgrade brings it back NULL (the planner then starts from its pilot)."""
    path = tmp_path / "half.db"
    engine, run, keys = _engine_with_run(path)
    set_audit(engine, run.id, keys, "ana", 0.03)
    with engine.begin() as conn:
        command.downgrade(migrations._config(conn), "0011")
    with sqlite3.connect(path) as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(audit_rows)")}
        assert raw.execute("SELECT count(*) FROM audit_rows").fetchone()[0] == len(keys)
    assert "half_width" not in columns and "created_by" in columns
    engine.dispose()
    engine = make_engine(f"sqlite:///{path}")  # upgrades again
    with engine.connect() as conn:
        assert migrations.current(conn) == migrations.head()
        assert compare_metadata(MigrationContext.configure(conn), metadata()) == []
    assert review.audit_keys(engine, run.id) == set(keys) and audit_half_width(engine, run.id) is None
    engine.dispose()
