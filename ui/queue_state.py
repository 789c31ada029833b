"""The review queue's state: this tab's pass through a run's queue (:class:`ReviewLoop`), letting
go of its claims when another page opens, and a scope's rows in review order.

Above :mod:`ui.identity` because a claim is held under the reviewer's name; the Agreement page
reads the same scopes.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from scoring import review, store
from scoring.review import ReviewLoop, job
from scoring.store import database_url
from ui import identity, state
from ui.tables import bucket_name


def leave_queue() -> None:
    """Let go of the rows the review queue held for this session, once another page opens: a
    reviewer who walks away from the queue keeps nobody else from the row on their screen. Coming
    back starts at the scope's front (what is left of it)."""
    name = identity.reviewer()
    for key in [k for k in st.session_state if str(k).startswith("q_loop_")]:
        loop = st.session_state[key]
        if name and loop.screen is not None:
            try:
                review.release(state.engine(), name, [loop.screen.item_key])
            except store.DatabaseError:
                return  # unreachable: the claim expires on its own
            loop.show_nothing()
        st.session_state.pop(f"q_claimed_in_{loop.run_id}", None)


def review_loop(run_id: int) -> ReviewLoop:
    """This tab's pass through the run's queue (screens, presses taken, messages)."""
    return st.session_state.setdefault(f"q_loop_{run_id}", ReviewLoop(run_id))


def acked() -> int:
    """The last key press this tab's queues have taken, whichever run it was pressed on: the
    keyboard's sequence numbers are the tab's, so the browser may forget every press up to it."""
    loops = [v for k, v in st.session_state.items() if str(k).startswith("q_loop_") and isinstance(v, ReviewLoop)]
    return max((loop.last_seq for loop in loops), default=0)


@state.per_run("scope")
def _queue_scope(url: str, run_id: int, bucket: str | None, domain: str | None, sample: int | None,
                 audit: frozenset[str] | None):  # fmt: skip
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
