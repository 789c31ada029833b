"""Open the project's database at the newest schema: what the app, every CLI and the tests call;
and an existing one (a command's ``--db``), refused in words when it is not there or cannot open.

The connection details live in :mod:`scoring.store.engine`; the schema is brought up to date by
:mod:`scoring.store.migrations` every time an engine is made.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from scoring.core.errors import InputError
from scoring.store import migrations
from scoring.store.engine import database_url, display_url, open_engine
from scoring.store.failures import describe as describe_failure


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


def open_existing(url: str) -> Engine:
    """An engine on an existing database; a SQLite file that does not exist is an input error
    (creating an empty database for a mistyped path would hide the mistake)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        # Not repeated in the message: an unparsable URL may still hold a password.
        raise InputError("Not a database URL: it could not be parsed.") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        if not Path(parsed.database).is_file():
            raise InputError(f"No database at {parsed.database!r}.")
    try:
        return make_engine(url)
    except SQLAlchemyError as exc:
        reason = _driver_reason(exc, parsed.password)
        found = describe_failure(exc)  # what the driver's reason means, and what to do
        said = f" ({reason}): {found.message}" if found is not None else f": {reason}"
        raise InputError(f"Cannot open the database {display_url(url)!r}{said}") from None


def _driver_reason(exc: SQLAlchemyError, password: str | None) -> str:
    """The driver's own first line ("password authentication failed", "Connection refused"), so a
    wrong password and a stopped server read differently; the password is masked should a driver
    ever echo it."""
    original = getattr(exc, "orig", None)
    line = str(original or exc).strip().splitlines()[0] if str(original or exc).strip() else ""
    if password:
        line = line.replace(str(password), "***")
    return f"{exc.__class__.__name__}: {line[:300]}" if line else f"{exc.__class__.__name__}."


def open_database(url: str | None = None) -> Engine:
    """The database a command's ``--db`` names, else the project's (``REVIEW_DB_URL``, secrets,
    data/review.db), through :func:`open_existing`: a missing SQLite file is an input error."""
    return open_existing(url or database_url())
