"""Schema migrations (Alembic): every database is brought to the newest revision when it is opened.

Each schema change is a new revision in ``versions/`` (``0001`` is the schema as the project made
it before migrations; later ones change it). :func:`upgrade` runs under the database's write lock
(SQLite ``BEGIN IMMEDIATE``, PostgreSQL an advisory lock), so two processes starting at once
migrate once: the second finds the work done. A database stamped with a revision this code does
not know (made by newer code) is refused, and nothing is written to it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import OperationalError

from scoring.store.engine import writer

HERE = Path(__file__).resolve().parent
#: The revision whose tables databases made before migrations already have (they have no
#: ``alembic_version`` table); later revisions are written to be safe on those databases too.
BASELINE = "0001"
#: Any constant: the PostgreSQL advisory lock that serialises migrations across processes.
_PG_LOCK = 80_870_001


class SchemaTooNew(RuntimeError):
    """The database was migrated by newer code than this; opening it could damage it."""


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.attributes["connection"] = connection
    return config


@functools.cache
def script() -> ScriptDirectory:
    """The revisions, read once per process (every ``make_engine`` asks for them)."""
    return ScriptDirectory.from_config(_config())


def head() -> str:
    """The newest revision this code knows."""
    found = script().get_current_head()
    assert found is not None, "no migrations found"
    return found


def current(connection: Connection) -> str | None:
    """The database's revision (None: never migrated, e.g. empty or made before migrations)."""
    return MigrationContext.configure(connection).get_current_revision()


@contextmanager
def _locked(engine: Engine) -> Iterator[Connection]:
    """A transaction holding the lock that only one migrating process may hold."""
    with writer(engine).begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        yield conn


def _refuse_unknown(revision: str | None) -> None:
    if revision is None:
        return
    try:
        known = script().get_revision(revision)
    except Exception:  # noqa: BLE001  (alembic raises several kinds for an unknown id)
        known = None
    if known is None:
        raise SchemaTooNew(
            f"The database is at schema revision {revision!r}, which this version of the dashboard does not "
            f"know (it knows up to {head()!r}): it was made by a newer version. Update the dashboard; "
            "nothing was changed in the database."
        )


def upgrade(engine: Engine, attempts: int = 5) -> None:
    """Bring the database to :func:`head` (a cheap read when it is there already).

    SQLite answers "database is locked" without waiting in a few cases (switching a file made in
    rollback-journal mode to WAL while another process migrates it, say); migrating is safe to
    repeat, so such a collision is retried after a short pause.
    """
    for attempt in range(1, attempts + 1):
        try:
            _upgrade(engine)
            return
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts:
                raise
            time.sleep(0.1 * attempt)


def _upgrade(engine: Engine) -> None:
    newest = head()
    with engine.connect() as conn:
        revision = current(conn)
    _refuse_unknown(revision)
    if revision == newest:
        return
    with _locked(engine) as conn:
        revision = current(conn)  # another process may have migrated meanwhile
        _refuse_unknown(revision)
        if revision == newest:
            return
        config = _config(conn)
        if revision is None and inspect(conn).has_table("runs"):
            command.stamp(config, BASELINE)
        command.upgrade(config, "head")
