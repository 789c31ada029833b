"""Alembic's environment: always run from :func:`scoring.store.migrations.upgrade` on a connection it
opened and locked, never from a URL of its own (so the app, every CLI and the tests share one path).
"""

from __future__ import annotations

from alembic import context

from scoring.store.migrations.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata(),
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():  # inside upgrade()'s locked transaction: no new one
    context.run_migrations()
