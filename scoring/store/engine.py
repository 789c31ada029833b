"""Where the database is and how to connect to it; the tables' base class. No schema here: the
tables live in :mod:`scoring.store.orm_tables` and :mod:`scoring.store.judge_cache`, their history in
:mod:`scoring.store.migrations`, and :mod:`scoring.store.database` opens a database at the newest schema.

The URL comes from ``REVIEW_DB_URL``, then ``.streamlit/secrets.toml``, then a SQLite file in
the project's ``data/`` folder, so ``make run`` needs no configuration. Finding the URL creates
nothing: the SQLite file's folder is made when an engine is opened on it (:func:`open_engine`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import DeclarativeBase

from scoring.core.settings import PROJECT_ROOT, default_of, lookup

#: What a read or write raises when the database cannot be reached or refuses (a stopped server,
#: a lost network, a read-only file): pages catch it and say so instead of showing a traceback.
DatabaseError = DBAPIError
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


def default_sqlite_path(root: Path = PROJECT_ROOT) -> Path:
    return root / "data" / "review.db"


def database_url(root: Path = PROJECT_ROOT) -> str:
    """The configured database URL (see module docstring for the order). Creates nothing: the
    default file's folder is made by :func:`open_engine`."""
    url = lookup(ENV_VAR, root=root)
    if url:
        return str(url)
    return f"sqlite:///{default_sqlite_path(root)}"


def _make_sqlite_folder(url: str) -> None:
    """The folder of a SQLite file, made when it is missing and its own folder exists (``data/``
    in a fresh checkout). A path under several missing folders, or under a file, is left for
    SQLite to refuse with its own message."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    folder = Path(database).parent
    if not folder.is_dir():
        with contextlib.suppress(OSError):
            folder.mkdir(exist_ok=True)


def display_url(url: str) -> str:
    """The database as pages and messages show it: a SQLite file's path, or the URL with its
    password masked (``postgresql+psycopg://review:***@db:5432/review``). Never the secret."""
    if url.startswith("sqlite"):
        return url.split("///", 1)[-1] or url
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unreadable database URL)"


def _sqlite_pragmas(dbapi_conn, record) -> None:
    # WAL lets readers (the dashboard) run beside a writer (a marking reviewer, a judge run);
    # busy_timeout makes concurrent writers wait instead of failing with "database is locked".
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    wait = lock_wait_ms()
    cur.execute(f"PRAGMA busy_timeout={wait}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
    record.info["base_ms"] = record.info["busy_ms"] = wait  # what _sqlite_begin puts back


def _sqlite_autocommit_driver(dbapi_conn, _record) -> None:
    # Let SQLAlchemy, not the sqlite3 module, emit BEGIN, so writers can ask for IMMEDIATE.
    dbapi_conn.isolation_level = None


#: Environment variable that sets that wait in milliseconds (a script that would rather fail fast
#: than wait behind a long upload; the tests of a lock held beyond the wait). Environment only: it
#: is read on every new connection, where reading secrets.toml each time would cost a file read.
LOCK_WAIT_SETTING = "REVIEW_DB_LOCK_WAIT_MS"
#: How long a writer waits for SQLite's write lock unless it asks for less (see :func:`writer`).
BUSY_TIMEOUT_MS: int = default_of(LOCK_WAIT_SETTING)


def lock_wait_ms() -> int:
    """The wait for SQLite's write lock: :data:`LOCK_WAIT_SETTING` if set to a whole number, else
    :data:`BUSY_TIMEOUT_MS`."""
    raw = str(lookup(LOCK_WAIT_SETTING) or "").strip()
    return int(raw) if raw.isdigit() else BUSY_TIMEOUT_MS


def _sqlite_begin(conn) -> None:
    options = conn.get_execution_options()
    # The pool hands a connection on, so a short wait one writer asked for is put back for the
    # next; the setting is remembered per connection so other transactions send nothing extra.
    info = conn.connection.info
    busy_ms = int(options.get("lock_wait_ms", info.get("base_ms", BUSY_TIMEOUT_MS)))
    if info.get("busy_ms") != busy_ms:
        conn.exec_driver_sql(f"PRAGMA busy_timeout={busy_ms}")
        info["busy_ms"] = busy_ms
    conn.exec_driver_sql(f"BEGIN {options.get('sqlite_begin', '')}".strip())


def writer(engine: Engine, busy_ms: int | None = None) -> Engine:
    """The same engine, but its transactions take SQLite's write lock at BEGIN.

    A deferred transaction that reads and then writes fails at once with "database is locked"
    when another process committed in between (the busy timeout does not apply); BEGIN
    IMMEDIATE waits for the lock instead, so concurrent reviewers never lose a mark.
    PostgreSQL locks rows, not the database, and needs no such BEGIN. ``busy_ms`` bounds the wait
    for a lock on either engine (SQLite's busy timeout, PostgreSQL's ``lock_timeout``): a
    reviewer's mark would rather fail visibly after a moment than hang behind a stuck writer.
    """
    if busy_ms is None:
        return engine.execution_options(sqlite_begin="IMMEDIATE")
    return engine.execution_options(sqlite_begin="IMMEDIATE", lock_wait_ms=busy_ms)


def _postgres_begin(conn) -> None:
    wait_ms = conn.get_execution_options().get("lock_wait_ms")
    if wait_ms is not None:  # for this transaction only
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = {int(wait_ms)}")


def open_engine(url: str | None = None) -> Engine:
    """An engine on ``url`` with the SQLite settings; the schema is not touched (see
    :func:`scoring.store.database.make_engine`, which also brings it to the newest migration)."""
    url = url or database_url()
    if url.startswith("sqlite"):
        _make_sqlite_folder(url)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_autocommit_driver)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    else:
        # pre-ping: a server restarted under a running dashboard costs one failed mark at most,
        # never a pool of dead connections.
        engine = create_engine(url, pool_pre_ping=True)
        if engine.dialect.name == "postgresql":
            event.listen(engine, "begin", _postgres_begin)
    return engine
