"""Review guidelines of a run (issue 27): adjudicators write them, every reviewer reads them above
the queue, opened the first time they meet a version, collapsed afterwards.

The one way to write them is :func:`save_guidelines` (or :func:`reuse_guidelines`), which checks
the adjudicator role itself, as :func:`scoring.review.adjudicate.record_adjudication` checks its
setting, so no page or script can bypass it. "First time" is remembered in the database per
reviewer and version (:mod:`scoring.store.guideline_log`): session state is wiped by a refresh, so
a reviewer would be shown the same text opened on every new tab. A new version opens again.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from scoring.core.errors import InputError
from scoring.core.export_format import TIME_FORMAT
from scoring.core.settings import read_secrets
from scoring.core.verdict_rules import check_reviewer
from scoring.review.roles import ADJUDICATORS_SETTING, identity
from scoring.store import guideline_log as stored
from scoring.store.failures import describe
from scoring.store.guideline_log import Guidelines

#: How long recording "shown" may wait for the write lock (ms): the queue draws without it rather than wait.
READ_MARK_BUSY_MS = 1_000
_TIME = "%Y-%m-%d %H:%M UTC"


class GuidelinesRefused(InputError):
    """Someone who is not an adjudicator tried to write guidelines; nothing was written."""


@dataclass(frozen=True)
class ShownGuidelines:
    """What the queue shows: the text (plain), who wrote it and when, and whether it opens."""

    text: str
    byline: str
    expanded: bool


def byline(found: Guidelines) -> str:
    """``Written by ana on 2026-12-03 10:00 UTC.`` (plain text: the name is the user's)."""
    return f"Written by {found.written_by} on {found.written_at.strftime(_TIME)}."


def _require_adjudicator(by: str) -> None:
    name = check_reviewer(by)
    if not identity(read_secrets()).may_adjudicate(name):
        raise GuidelinesRefused(
            f"{name} is not an adjudicator here ({ADJUDICATORS_SETTING}): "
            "only adjudicators write the review guidelines."
        )


def save_guidelines(engine: Engine, run_id: int, text: str, by: str) -> str:
    """Save ``text`` as the run's guidelines (an empty text clears them); returns the line to show.

    Unchanged text writes nothing, so reviewers are not shown the same guidelines opened again.
    Raises :class:`GuidelinesRefused` (not an adjudicator), ValueError (too long, no name)."""
    _require_adjudicator(by)
    clean = stored.check_text(text)
    before = stored.current(engine, run_id)
    if clean == (before.text if before is not None else ""):
        return "Nothing to save: the guidelines are unchanged."
    saved = stored.save(engine, run_id, clean, by)
    if saved is None:
        return "Saved: this run has no guidelines now; the queue shows none."
    return f"Saved: the guidelines ({len(saved.text):,} characters); every reviewer sees them above the queue."


def current_text(engine: Engine, run_id: int) -> str:
    """The run's guidelines in force as the editor starts from ("" when none)."""
    found = stored.current(engine, run_id)
    return found.text if found is not None else ""


def not_saved(exc: Exception, doing: str = "Not saved") -> str:
    """The one line the editor shows when a save (or a read: ``doing``) failed: the refusal or
    limit as it is, a database failure in words (never its SQL)."""
    if isinstance(exc, DBAPIError):
        failure = describe(exc)
        return f"{doing}: {failure.message if failure is not None else 'the database failed.'}"
    return f"{doing}: {exc}"


def reuse_offer(engine: Engine, run_id: int) -> str | None:
    """The plain line naming the guidelines :func:`reuse_guidelines` would copy, or None when no
    other run has guidelines or they equal this run's."""
    found = stored.latest_elsewhere(engine, run_id)
    here = stored.current(engine, run_id)
    if found is None or (here is not None and here.text == found[0].text):
        return None
    other, name = found
    return f'The last guidelines written for another run: run #{other.run_id} "{name}". {byline(other)}'


def reuse_guidelines(engine: Engine, run_id: int, by: str) -> tuple[str, str]:
    """Copy the last run's guidelines (:func:`reuse_offer`) to this run: (the text now in force,
    the line to show). :class:`InputError` when no other run has any."""
    found = stored.latest_elsewhere(engine, run_id)
    if found is None:
        raise InputError("No other run has guidelines to reuse.")
    other, name = found
    message = save_guidelines(engine, run_id, other.text, by)
    return other.text, f'{message} Copied from run #{other.run_id} "{name}".'


def guidelines_to_show(engine: Engine, run_id: int, reader: str | None) -> ShownGuidelines | None:
    """The run's guidelines for ``reader``, opened when they have not been shown this version
    before (which is then remembered), collapsed afterwards; None when the run has none.

    Without a name nothing can be remembered: they open. A busy database only means the next visit
    opens them once more; the queue never waits on it (:data:`READ_MARK_BUSY_MS`)."""
    found = stored.current(engine, run_id)
    if found is None:
        return None
    first = True
    if reader:
        first = not stored.has_read(engine, found.id, reader)
        if first:
            try:
                stored.mark_read(engine, found.id, reader, busy_ms=READ_MARK_BUSY_MS)
            except DBAPIError:
                pass  # not remembered this time: shown opened again next visit, nothing lost
    return ShownGuidelines(found.text, byline(found), first)


def manifest_entry(engine: Engine, run_id: int) -> dict[str, str] | None:
    """The guidelines in force, as the export manifest carries them (``review_guidelines``), or None."""
    found = stored.current(engine, run_id)
    if found is None:
        return None
    return {"text": found.text, "written_by": found.written_by, "written_at": found.written_at.strftime(TIME_FORMAT)}
