"""The review queue's state: this tab's review session on each run (:class:`ReviewSession`: its
pass through the queue and the claim protocol's state), letting go of its claims when another page
opens, and a scope's rows in review order.

Each run's session is kept under one key of the tab's session state (:func:`review_session`), the
only state the review page and this module share; nothing else names that key.

Above :mod:`ui.identity` because a claim is held under the reviewer's name; the Agreement page
reads the same scopes.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from scoring import review, store
from scoring.review import ReviewSession, job
from scoring.store import database_url
from ui import identity, state
from ui.tables import bucket_name

#: Where each run's :class:`ReviewSession` is kept in the tab's session state.
SESSION_KEY = "q_loop_{run_id}"
_PREFIX = SESSION_KEY.format(run_id="")


def review_session(run_id: int) -> ReviewSession:
    """This tab's review session on the run (its screens, presses taken, messages, claims)."""
    key = SESSION_KEY.format(run_id=run_id)
    found = st.session_state.get(key)
    if not isinstance(found, ReviewSession):
        found = st.session_state[key] = ReviewSession(run_id)
    return found


def sessions() -> list[ReviewSession]:
    """This tab's review sessions, one per run whose queue it opened."""
    return [v for k, v in st.session_state.items() if str(k).startswith(_PREFIX) and isinstance(v, ReviewSession)]


def leave_queue() -> None:
    """Let go of the rows the review queue held for this session, once another page opens: a
    reviewer who walks away from the queue keeps nobody else from the row on their screen. Coming
    back starts at the scope's front (what is left of it)."""
    name = identity.reviewer()
    for session in sessions():
        try:
            session.leave(state.engine(), name)
        except store.DatabaseError:
            return  # unreachable: the claim expires on its own


def acked() -> int:
    """The last key press this tab's queues have taken, whichever run it was pressed on: the
    keyboard's sequence numbers are the tab's, so the browser may forget every press up to it."""
    return max((session.last_seq for session in sessions()), default=0)


@state.per_run("scope")
def _queue_scope(
    url: str, run_id: int, bucket: str | None, domain: str | None, sample: int | None, audit: frozenset[str] | None
):
    info = store.get_run(state.engine_at(url), run_id)
    seed = info.review_seed if info is not None else 0
    return review.queue_scope(state.scored_at(url, run_id), bucket, domain, sample, seed=seed, keys=audit)


def queue_scope(run_id: int, bucket: str | None, domain: str | None, sample: int | None) -> review.QueueScope:
    """The review scope's row index in review order (the run's seeded random permutation),
    built once per scope (rows never change; the audit scope once per planned set, which is
    part of the key since the planner can replace it)."""
    audit = frozenset(review.audit_keys(state.engine(), run_id)) if bucket == review.AUDIT else None
    return _queue_scope(database_url(), run_id, bucket, domain, sample, audit)


def scope_option(scope: str, counts: Mapping[str, int], audit_size: int) -> str:
    """The scope picker's label: the job its marks serve, then the scope in words and its rows
    ("Triage: Overlap only (84 rows)", "Estimate: audit sample (40 rows)")."""
    if scope == review.AUDIT:
        return f"{job(scope)}: audit sample ({audit_size:,} rows)"
    return f"{job(scope)}: {bucket_name(scope)} ({int(counts.get(scope, 0)):,} rows)"
