"""Open the project's database at the newest schema: what the app, every CLI and the tests call.

The connection details live in :mod:`scoring.store.engine`; the schema is brought up to date by
:mod:`scoring.store.migrations` every time an engine is made.
"""

from __future__ import annotations

from sqlalchemy import Engine

from scoring.store import migrations
from scoring.store.engine import open_engine


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
