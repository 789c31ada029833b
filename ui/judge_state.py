"""What the pages know of the judge: the revision of its stored labels and choices, a run's
labels under the one rule (its chosen configuration, else the latest label of each row) and
their name, one item's suggestion, and whether judge labels may settle rows.

Apart from :mod:`ui.state` because the verdicts (:mod:`ui.verdicts`), the estimate, compare and
trust caches are all keyed by :func:`judge_revision`; below them, so none of them import each
other to read it.
"""

from __future__ import annotations

import streamlit as st

from scoring.store import database_url, judge_cache, judge_choice
from scoring.verdict_export import stored_run_labels
from ui import state


@state.per_run("judge_labels")
def run_labels_at(url: str, run_id: int, judge_rev: int) -> judge_choice.RunLabels:
    """The run's judge labels under the one rule every reader uses (the run's chosen configuration,
    else the latest label of each row: :func:`scoring.verdict_export.stored_run_labels`) and their name,
    of the database at ``url`` at judge revision ``judge_rev``."""
    return stored_run_labels(state.engine_at(url), run_id, state.scored_at(url, run_id)["item_key"])


def judge_labels_at(url: str, run_id: int, judge_rev: int) -> dict[str, str]:
    """:func:`judge_labels` of the database at ``url`` at judge revision ``judge_rev``."""
    return run_labels_at(url, run_id, judge_rev).labels


def judge_revision() -> int:
    """Changes after every judge batch and every judge choice (the sum of two ids that only grow,
    so it grows whenever either does); 0 only while nothing was ever judged."""
    eng = state.engine()
    return judge_cache.revision(eng) + judge_choice.revision(eng)


def run_labels(run_id: int) -> judge_choice.RunLabels:
    """The run's judge labels and whose they are; recomputed only after a judge run or choice."""
    return run_labels_at(database_url(), run_id, judge_revision())


def judge_labels(run_id: int) -> dict[str, str]:
    """The run's judge label per item (its chosen configuration's, else the latest of each row)."""
    return run_labels(run_id).labels


def judge_line(run_id: int) -> str:
    """``Judge: <configuration>, chosen for this run.`` (or the latest, none chosen), for every page
    that shows judge figures; "" when the judge labelled no row of the run."""
    found = run_labels(run_id)
    return judge_choice.judge_line(found) if found.labels else ""


def judge_suggestion(run_id: int, key: str) -> str | None:
    """The judge's label for one item of run ``run_id``, shown as a suggestion in the review
    queue: under the one rule (:func:`run_labels`), so the card suggests what the estimate, the
    Overview and the export count, not a newer configuration's label."""
    return run_labels(run_id).labels.get(key)


def judge_settles() -> bool:
    """Whether judge labels may settle overlap_only rows (a switch on the Judge page)."""
    return bool(st.session_state.get("judge_settles", False))
