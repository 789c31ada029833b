"""Where the database is and how to open it; the schema lives in :mod:`scoring.models`.

The URL comes from ``REVIEW_DB_URL``, then ``.streamlit/secrets.toml``, then a SQLite file in
the project's ``data/`` folder, so ``make run`` needs no configuration.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENV_VAR = "REVIEW_DB_URL"

# Explicit constraint names keep the schema diffable by a migration tool (Alembic) later.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def read_secrets(root: Path = PROJECT_ROOT) -> dict:
    """``.streamlit/secrets.toml`` as a dict, or empty when absent (read without streamlit)."""
    path = root / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return tomllib.load(fh)


def default_sqlite_path(root: Path = PROJECT_ROOT) -> Path:
    return root / "data" / "review.db"


def database_url(root: Path = PROJECT_ROOT) -> str:
    """The configured database URL (see module docstring for the order)."""
    url = os.environ.get(ENV_VAR) or read_secrets(root).get(ENV_VAR)
    if url:
        return str(url)
    path = default_sqlite_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    # WAL lets readers (the dashboard) run beside a writer (a marking reviewer, a judge run);
    # busy_timeout makes concurrent writers wait instead of failing with "database is locked".
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_autocommit_driver(dbapi_conn, _record) -> None:
    # Let SQLAlchemy, not the sqlite3 module, emit BEGIN, so writers can ask for IMMEDIATE.
    dbapi_conn.isolation_level = None


def _sqlite_begin(conn) -> None:
    mode = conn.get_execution_options().get("sqlite_begin", "")
    conn.exec_driver_sql(f"BEGIN {mode}".strip())


def writer(engine: Engine) -> Engine:
    """The same engine, but its transactions take SQLite's write lock at BEGIN.

    A deferred transaction that reads and then writes fails at once with "database is locked"
    when another process committed in between (the busy timeout does not apply); BEGIN
    IMMEDIATE waits for the lock instead, so concurrent reviewers never lose a mark.
    Other databases ignore the option.
    """
    return engine.execution_options(sqlite_begin="IMMEDIATE")


def make_engine(url: str | None = None) -> Engine:
    """An engine with the schema created; safe to call once per process and share."""
    url = url or database_url()
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_autocommit_driver)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    init_schema(engine)
    return engine


def init_schema(engine: Engine) -> None:
    """Create missing tables. A migration tool can take over from this point."""
    import scoring.judge_store  # noqa: F401
    import scoring.models  # noqa: F401  (registers the tables on Base.metadata)

    Base.metadata.create_all(engine)
