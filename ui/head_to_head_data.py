"""Cached head-to-head on the estimated truth (:mod:`scoring.team_report.stored_head_to_head`) for
the Compare and Model x language pages: kept per (database, runs, whose verdicts are withheld,
verdict and judge revisions), so a rerun of a page does not read the runs again while nobody
reviews; a new mark or judge batch changes the revisions and the figure with them."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from scoring.store import database_url
from scoring.team_report.head_to_head import HeadToHead
from scoring.team_report.stored_head_to_head import stored_head_to_head
from ui import state


def estimated_truth(
    run_ids: Sequence[int], withheld: Collection[int], revs: tuple[int, int], by_model: bool = False
) -> HeadToHead:
    """Every pair of ``run_ids`` (or of their models, ``by_model``) on the estimated truth."""
    ids, hidden = tuple(run_ids), frozenset(withheld)
    key = ("head_to_head", database_url(), ids, hidden, revs, by_model)
    return state.run_cache().get(key, lambda: stored_head_to_head(state.engine(), ids, hidden, by_model=by_model))
