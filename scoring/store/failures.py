"""What went wrong with the database, in one line a user can act on: the CLI prints it on stderr
(exit 2) and the dashboard shows it as a page message, instead of a traceback or an "outage".

Only failures of *the database itself* are named here (a file that is not a database or is cut
short, a schema made by newer code, a locked or full disk, a wrong password, a server that is gone,
one run's stored bytes damaged: :class:`scoring.store.run_table.DamagedRun`); anything else is not
ours to explain and is left to propagate. ``outage`` says whether retrying may help (the
server or network came back): a damaged file or a too-new schema never heals by waiting.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError

from scoring.store.migrations import SchemaTooNew
from scoring.store.run_table import DamagedRun


@dataclass(frozen=True)
class Failure:
    """A database failure as the user reads it."""

    message: str
    outage: bool  #: the server or network is away: the next try may work unchanged


#: (text found in the driver's message, what it means, whether waiting may help)
_KNOWN = (
    (
        "file is not a database",
        "The database file is not a SQLite database (damaged, or another file given as "
        "REVIEW_DB_URL). Nothing was written. Point REVIEW_DB_URL at the right file, or move this one aside to "
        "start a new database.",
        False,
    ),
    (
        "database disk image is malformed",
        "The database file is damaged (cut short, or overwritten: for example "
        "copied while it was being written). Nothing was written. Restore it from a backup, or move it aside to start "
        "a new database; sqlite3's .recover command may save what is still readable.",
        False,
    ),
    (
        "unable to open database file",
        "The SQLite database file cannot be opened: its folder is missing or not "
        "writable. Nothing was written. Create the folder (or fix its permissions) and try again.",
        False,
    ),
    (
        "readonly database",
        "The SQLite database file is read-only for this user. Nothing was written. Make it "
        "writable (or run as its owner) and try again.",
        False,
    ),
    (
        "database or disk is full",
        "The disk holding the database is full. This change was not saved; earlier "
        "ones are. Free some space and try again.",
        False,
    ),
    (
        "disk i/o error",
        "The disk holding the database failed to read or write (full, or failing). This change "
        "was not saved; earlier ones are. Check the disk and try again.",
        False,
    ),
    (
        "database is locked",
        "The database stayed locked by another writer beyond the wait. This change was not "
        "saved; try again in a moment.",
        True,
    ),
    (
        "password authentication failed",
        "PostgreSQL refused the password in REVIEW_DB_URL. Nothing was written. Fix the password and try again.",
        False,
    ),
    (
        "does not exist",
        "PostgreSQL has no such database or role (see REVIEW_DB_URL). Nothing was written. "
        "Create it or fix the URL and try again.",
        False,
    ),
    (
        "connection refused",
        "The PostgreSQL server refuses connections (stopped, or the wrong host or port). "
        "Nothing was written; try again once it is running.",
        True,
    ),
    (
        "could not translate host name",
        "The PostgreSQL host in REVIEW_DB_URL is unknown. Nothing was written. Fix the host and try again.",
        False,
    ),
    (
        "server closed the connection",
        "The PostgreSQL server closed the connection (restarted or gone). This change "
        "was not saved; try again once it is back.",
        True,
    ),
    (
        "timeout expired",
        "The PostgreSQL server did not answer in time. This change was not saved; try again once it is reachable.",
        True,
    ),
)


def describe(exc: BaseException) -> Failure | None:
    """The :class:`Failure` an exception stands for, or None when it is not a database failure."""
    if isinstance(exc, (SchemaTooNew, DamagedRun)):
        return Failure(str(exc), False)  # its message names it, says what to do and that nothing was changed
    if not isinstance(exc, DBAPIError):
        return None
    text = str(exc.orig if exc.orig is not None else exc).lower()
    for needle, message, outage in _KNOWN:
        if needle in text:
            return Failure(message, outage)
    first = str(exc.orig or exc).strip().splitlines()[0] if str(exc.orig or exc).strip() else type(exc).__name__
    return Failure(f"The database failed: {first}. Nothing was written.", bool(exc.connection_invalidated))
