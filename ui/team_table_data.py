"""Cached data of the Model x language page: the team table of the chosen runs, kept in the
server's per-run cache per (database, runs, verdict revision, judge revision), so a rerun (a
click elsewhere on the page) does not rebuild it. Computed by :mod:`scoring.team_report`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scoring.store import database_url
from scoring.team_report import TeamTable, report_html, report_markdown, team_report, team_table
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


def report_maker(run_ids: Sequence[int], withheld: Sequence[int]) -> Callable[[str], bytes]:
    """What builds the report a team sends over ``run_ids`` when its download is clicked: ``fmt``
    "html" or "md"; the same file as ``python -m scoring report``. The engine is taken now (the
    download's callable runs outside the page's session); the human verdicts of ``withheld`` are
    read into no figure."""
    engine, ids, hidden = state.engine(), tuple(run_ids), tuple(withheld)

    def build(fmt: str) -> bytes:
        report = team_report(engine, ids, withheld=hidden)
        return (report_html(report) if fmt == "html" else report_markdown(report)).encode("utf-8")

    return build
