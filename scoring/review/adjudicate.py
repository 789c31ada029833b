"""What waits for an adjudicator: the items of a run whose reviewers disagree, with or without a
decision, first row first; and the one way decisions are recorded, :func:`record_adjudication`,
which refuses an adjudicator's decision on a row they marked themselves when configuration forbids
it (``REVIEW_ADJUDICATE_OWN``), so that no page, command or script can bypass the setting."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine

from scoring.core.errors import InputError
from scoring.core.settings import read_secrets
from scoring.core.verdict_rules import conflicts_in
from scoring.review.roles import ADJUDICATE_OWN_SETTING, identity
from scoring.store import adjudications as stored
from scoring.store.adjudications import adjudications
from scoring.store.verdict_log import current_verdicts

WAITING_COLUMNS = ["row_idx", "item_key", "question", "correct_by", "wrong_by", "decision", "adjudicator"]


def adjudication_queue(scored: pd.DataFrame, engine: Engine, include_decided: bool = False) -> pd.DataFrame:
    """Conflicting items of the run (one row each, at their first row): who said correct, who
    said wrong, and the decision in force (empty while waiting). Decided items only on request."""
    current = current_verdicts(engine, scored["item_key"])
    split = conflicts_in(current)
    if split.empty:
        return pd.DataFrame(columns=WAITING_COLUMNS)
    first = scored.drop_duplicates("item_key").set_index("item_key")
    decided = adjudications(engine, split["item_key"])
    out = split[["item_key", "correct_by", "wrong_by"]].copy()
    out["row_idx"] = first.loc[out["item_key"], "row_idx"].to_numpy()
    out["question"] = first.loc[out["item_key"], "question"].astype(str).to_numpy()
    for col in ("decision", "adjudicator"):  # conflicts are few: a plain lookup per item
        found = dict(zip(decided.index, decided[col]))
        out[col] = [str(found.get(key, "")) for key in out["item_key"]]
    if not include_decided:
        out = out[out["decision"] == ""]
    return out.sort_values("row_idx")[WAITING_COLUMNS].reset_index(drop=True)


def waiting_count(scored: pd.DataFrame, engine: Engine) -> int:
    """How many items of the run wait for an adjudicator's decision."""
    return len(adjudication_queue(scored, engine))


class OwnDecisionRefused(InputError):
    """An adjudicator asked to decide a row they marked, where ``REVIEW_ADJUDICATE_OWN`` is off.
    Nothing was written; the message says why and who may decide instead."""


def party_to(names: str, adjudicator: str) -> bool:
    """Whether ``adjudicator`` is among ``;``-joined reviewer names (the queue's ``correct_by`` and
    ``wrong_by``). Names compare ignoring case and surrounding spaces, as the role lists do."""
    wanted = adjudicator.strip().casefold()
    return bool(wanted) and wanted in {n.strip().casefold() for n in names.split(";")}


def own_verdict_in(verdicts: pd.DataFrame, adjudicator: str) -> str | None:
    """The adjudicator's own current verdict among already-read ``verdicts`` (one item's), or None."""
    wanted = adjudicator.strip().casefold()
    if not wanted or verdicts.empty:
        return None
    mine = verdicts[verdicts["reviewer"].astype(str).str.strip().str.casefold() == wanted]
    return None if mine.empty else str(mine["verdict"].iloc[-1])


def own_verdict(engine: Engine, item_key: str, adjudicator: str) -> str | None:
    """The adjudicator's own current verdict on the item: a decision then settles a disagreement
    they are party to. None when they hold no verdict on it."""
    return own_verdict_in(current_verdicts(engine, [item_key]), adjudicator)


def adjudicate_own_allowed() -> bool:
    """Whether an adjudicator may decide a row they marked (``REVIEW_ADJUDICATE_OWN``, read from the
    environment, then secrets, like every REVIEW_* setting; default yes). Read on every call, so a
    changed setting applies to the next decision."""
    return identity(read_secrets()).adjudicate_own


def own_warning(verdict: str) -> str:
    """The card's plain warning when the adjudicator is one of the reviewers who disagree."""
    return (
        f"You marked this row yourself: {verdict}. Deciding it settles a disagreement you are part of; "
        "a decision by another adjudicator would be independent."
    )


def own_refusal(verdict: str) -> str:
    """One line saying why this adjudicator cannot decide this row (the setting forbids it)."""
    return (
        f"You marked this row yourself ({verdict}), and {ADJUDICATE_OWN_SETTING} is off here: "
        "another adjudicator decides it."
    )


def record_adjudication(
    engine: Engine, item_key: str, run_id: int | None, adjudicator: str, decision: str, note: str = ""
) -> int:
    """Record an adjudicator's decision (:func:`scoring.store.adjudications.record_adjudication`)
    unless they marked the row themselves and ``REVIEW_ADJUDICATE_OWN`` forbids that, which raises
    :class:`OwnDecisionRefused` with nothing written. Returns the event id once committed."""
    if not adjudicate_own_allowed():
        own = own_verdict(engine, item_key, adjudicator)
        if own is not None:
            raise OwnDecisionRefused(own_refusal(own))
    return stored.record_adjudication(engine, item_key, run_id, adjudicator, decision, note)
