"""Cached data of the Model x language page: the team table of the chosen runs, kept in the
server's per-run cache per (database, runs, verdict revision, judge revision), so a rerun (a
click elsewhere on the page) does not rebuild it. Computed by :mod:`scoring.team_report`."""

from __future__ import annotations

from collections.abc import Sequence

from scoring.store import database_url
from scoring.team_report import TeamTable, team_table
from ui import compare_data, state


def table_of(run_ids: Sequence[int], page_run: int | None = None, withheld: Sequence[int] = ()) -> TeamTable:
    """The table of ``run_ids`` as of the current verdicts and judge labels; a damaged run is left
    out (and listed), except ``page_run`` (the sidebar's run), whose damage app.py names; the human
    verdicts of the runs ``withheld`` are read into no figure (double-blind review)."""
    ids = tuple(run_ids)
    strict = (page_run,) if page_run in ids else ()
    hidden = tuple(sorted(withheld))
    key = ("team_table", database_url(), ids, strict, hidden, *compare_data.revisions())
    return state.run_cache().get(key, lambda: team_table(state.engine(), ids, strict=strict, withheld=hidden))
