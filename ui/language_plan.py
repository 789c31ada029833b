"""The True accuracy planner aimed at one language: a language picker, the plan in one sentence
(:func:`scoring.estimate.language_plan.plan_language`), a button that adds its rows to the run's
audit scope and a link that opens them in the Review queue (``?scope=audit&language=...``).

Apart from :mod:`ui.estimate_view` (the page's other figures) so the page calls it in one line.
"""

from __future__ import annotations

import streamlit as st

from scoring import review
from scoring.core.errors import InputError
from scoring.estimate.language_plan import LanguagePlan, plan_language
from scoring.store import database_url
from ui import state
from ui.display import md_escape
from ui.estimate_data import Figures

REVIEW_PAGE = "views/review.py"
DONE_KEY = "est_plan_language_done"
CAVEAT = (
    "Each language's figure stands on its own rows of the random sample. Reviewing one language leaves the "
    "other languages' rows before them in the random sample missing (their truth unknown) until they are "
    "reviewed too: the whole run's interval is wider meanwhile."
)


def language_plan(figs: Figures, language: str, half_width: float) -> LanguagePlan:
    """The plan, kept per verdict revision (as the run's own plan is)."""
    key = ("estimate", "language_plan", database_url(), figs.run_id, *figs.revs, language, half_width)
    return state.run_cache().get(key, lambda: plan_language(figs.sample, language, half_width))


def _add(run_id: int, language: str, keys: list[str], by: str) -> None:
    total = review.add_to_audit(state.engine(), run_id, keys, by)
    st.session_state[DONE_KEY] = (run_id, language, len(keys), total)


def language_planner(figs: Figures, reviewer: str | None, half_width: float) -> None:
    """For a run whose rows are in several languages: plan +-``half_width`` in one of them."""
    languages = figs.estimate.languages
    if len(languages) < 2:
        return
    language = st.selectbox(
        "Plan for one language",
        languages,
        index=None,
        placeholder="Choose a language",
        key="est_plan_language",
        help=CAVEAT,
    )
    if language is None:
        return
    try:
        found = language_plan(figs, language, half_width)
    except InputError as exc:
        st.warning(md_escape(str(exc)))
        return
    st.text(found.sentence())  # the language's name is dataset text: plain text
    keys = found.rows["item_key"].to_list()
    st.button(
        md_escape(f"Put these {len(keys):,} {language} rows in the audit scope"),
        key="est_plan_language_put",
        disabled=not reviewer or not keys,
        on_click=_add,
        args=(figs.run_id, language, keys, str(reviewer)),
    )
    done = st.session_state.get(DONE_KEY)
    if done and done[0] == figs.run_id and done[1] == language:
        st.success(md_escape(f"Added {done[2]:,} {language} rows to the audit scope (it now holds {done[3]:,} rows)."))
    if done and done[0] == figs.run_id and review.audit_keys(state.engine(), figs.run_id):
        st.page_link(
            REVIEW_PAGE,
            label=md_escape(f"Review the {language} rows of the audit scope in the Review queue"),
            icon=":material/rule:",
            query_params={"scope": review.AUDIT, "language": language, "run": str(figs.run_id)},
        )
