"""The review queue's state: this tab's review session on each run (:class:`ReviewSession`: its
pass through the queue and the claim protocol's state), letting go of its claims when another page
opens, a scope's rows in review order, and the queue's place kept in the page's address.

Each run's session is kept under one key of the tab's session state (:func:`review_session`);
the place (:class:`scoring.review.address.QueueAddress`) is the scope controls' own widget keys,
restored from the URL or, after a round trip through another page (whose link drops the query),
from this tab's memory of the last address (:func:`restore_address`, :func:`keep_address`).

Above :mod:`ui.identity` because a claim is held under the reviewer's name; the Agreement page
reads the same scopes.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from scoring import review, store
from scoring.review import ReviewSession, address, job
from scoring.store import database_url
from ui import identity, state
from ui.tables import bucket_name

#: Where each run's :class:`ReviewSession` is kept in the tab's session state.
SESSION_KEY = "q_loop_{run_id}"
_PREFIX = SESSION_KEY.format(run_id="")
#: This tab's memory of the queue's address: the one written last (run, params) and each run's.
ADDRESS_KEY = "q_address"
ALL_DOMAINS = "All domains"
ALL_LANGUAGES = "All languages"
VIEW_LABELS = {address.QUEUE: "Queue", address.MY_VERDICTS: "My verdicts"}
#: The scope controls' widget keys (the review page's), by the address's field.
WIDGETS = {
    "scope": "q_bucket",
    "domain": "q_domain",
    "language": "q_language",
    "sample": "q_sample",
    "blind": "q_blind",
    "second": "q_second",
    "view": "q_view",
}


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
    url: str,
    run_id: int,
    bucket: str | None,
    domain: str | None,
    sample: int | None,
    audit: frozenset[str] | None,
    language: str | None = None,
):
    info = store.get_run(state.engine_at(url), run_id)
    seed = info.review_seed if info is not None else 0
    scored = state.scored_at(url, run_id)
    return review.queue_scope(scored, bucket, domain, sample, seed=seed, keys=audit, language=language)


def queue_scope(
    run_id: int, bucket: str | None, domain: str | None, sample: int | None, language: str | None = None
) -> review.QueueScope:
    """The review scope's row index in review order (the run's seeded random permutation),
    built once per scope (rows never change; the audit scope once per planned set, which is
    part of the key since the planner can replace it). ``language``: its rows in one language."""
    audit = frozenset(review.audit_keys(state.engine(), run_id)) if bucket == review.AUDIT else None
    return _queue_scope(database_url(), run_id, bucket, domain, sample, audit, language)


def scope_option(scope: str, counts: Mapping[str, int], audit_size: int) -> str:
    """The scope picker's label: the job its marks serve, then the scope in words and its rows
    ("Triage: Overlap only (84 rows)", "Estimate: audit sample (40 rows)")."""
    if scope == review.AUDIT:
        return f"{job(scope)}: audit sample ({audit_size:,} rows)"
    return f"{job(scope)}: {bucket_name(scope)} ({int(counts.get(scope, 0)):,} rows)"


def restore_address(run_id: int, offered: address.Offered) -> list[str]:
    """Before the scope controls are drawn: put the place the address names into them, and return
    what in it could not be used (one sentence per parameter, to show; never an error).

    - The URL holds what this page wrote last: the controls already hold the place (nothing to do).
    - The URL holds another address: a link, a refresh, a new tab, a hand-edited URL: it is the place.
    - The URL holds none (back by a sidebar link, which drops the query): this tab's last address on
      this run, if any.
    - The run was switched on this page: that run's last address here, else this one where it fits.
    """
    memory = st.session_state.setdefault(ADDRESS_KEY, {"written": None, "runs": {}})
    url = address.queue_params(st.query_params.to_dict())
    written = memory["written"]
    quiet = True
    if url and written is not None and url == written[1]:
        if written[0] == run_id:
            return []
        source = memory["runs"].get(run_id, url)
    elif url:
        source, quiet = url, False
    else:
        source = memory["runs"].get(run_id)
    if source is None:
        return []
    place, problems = address.read_address(source, offered)
    set_controls(place)
    return [] if quiet else problems


def set_controls(place: address.QueueAddress) -> None:
    """Put ``place`` into the scope controls' state (before they are drawn)."""
    st.session_state[WIDGETS["scope"]] = place.scope
    st.session_state[WIDGETS["domain"]] = place.domain if place.domain is not None else ALL_DOMAINS
    st.session_state[WIDGETS["language"]] = place.language if place.language is not None else ALL_LANGUAGES
    st.session_state[WIDGETS["sample"]] = place.sample
    st.session_state[WIDGETS["blind"]] = place.blind
    st.session_state[WIDGETS["second"]] = place.second
    st.session_state[WIDGETS["view"]] = VIEW_LABELS[place.view]


def last_switch(run_id: int, name: str) -> bool:
    """Whether the address this tab last wrote for the run had the switch ``name`` (``blind``,
    ``second``) on: what a switch not drawn this time (Blind under double-blind) keeps."""
    memory = st.session_state.get(ADDRESS_KEY) or {"runs": {}}
    return (memory["runs"].get(run_id) or {}).get(name) == address.ON


def keep_address(run_id: int, place: address.QueueAddress) -> None:
    """Write ``place`` into the page's address (only the parameters that changed) and remember it
    for this tab, so a sidebar round trip comes back to it."""
    params = place.params()
    for name in address.PARAMS:
        if name in params:
            if st.query_params.get(name) != params[name]:
                st.query_params[name] = params[name]
        elif name in st.query_params:
            del st.query_params[name]
    memory = st.session_state.setdefault(ADDRESS_KEY, {"written": None, "runs": {}})
    memory["written"] = (run_id, params)
    memory["runs"][run_id] = params
