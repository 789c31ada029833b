"""What waits for an adjudicator: the items of a run whose reviewers disagree, with or without a
decision, first row first. Pure reading; decisions are written by
:func:`scoring.store.adjudications.record_adjudication`."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine

from scoring.core.adjudication import conflicts_in
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
