"""Open the project's database at the newest schema: what the app, every CLI and the tests call.

The connection details live in :mod:`scoring.store.engine` (re-exported here for callers); the schema
is brought up to date by :mod:`scoring.store.migrations` every time an engine is made.
"""

from __future__ import annotations

from sqlalchemy import Engine

from scoring.store import migrations
from scoring.store.engine import (
    ENV_VAR,
    PROJECT_ROOT,
    Base,
    database_url,
    default_sqlite_path,
    open_engine,
    read_secrets,
    writer,
)

__all__ = [
    "ENV_VAR", "PROJECT_ROOT", "Base", "database_url", "default_sqlite_path", "make_engine", "read_secrets", "writer",
]  # fmt: skip


def make_engine(url: str | None = None) -> Engine:
    """An engine with the schema at the newest migration; safe to call once per process and share.

    Raises :class:`scoring.store.migrations.SchemaTooNew` for a database made by newer code.
    """
    engine = open_engine(url)
    try:
        migrations.upgrade(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine
