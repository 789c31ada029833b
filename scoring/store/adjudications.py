"""Adjudicators' decisions on items whose reviewers disagree, kept in the verdict log.

A decision is an event like a mark (``action`` ``adjudicate``, the adjudicator as ``reviewer``,
the decision as ``verdict``), appended and committed before the call returns, never updated: a
later decision on the same item replaces an earlier one and both stay in the history. Reviewers'
own verdicts are untouched; :func:`scoring.core.verdict_rules.final_verdicts` makes the decision
the row's final verdict (source ``adjudicated``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd
from sqlalchemy import Engine, insert

from scoring.core.verdict_rules import ADJUDICATION_COLUMNS, check_reviewer, check_verdict, utc
from scoring.store.engine import writer
from scoring.store.orm_tables import VerdictEvent, utcnow
from scoring.store.verdict_log import RESTORE_CHUNK, append_event, read_events

ADJUDICATE = "adjudicate"


def record_adjudication(
    engine: Engine, item_key: str, run_id: int | None, adjudicator: str, decision: str, note: str = ""
) -> int:
    """Append an adjudicator's decision (``correct``/``wrong``); returns the event id once committed.

    Raises :class:`scoring.core.errors.NotSaved` when the database cannot be written. Who may
    adjudicate is the caller's check (:mod:`scoring.review.roles`).
    """
    return append_event(
        engine,
        {
            "item_key": str(item_key),
            "run_id": run_id,
            "reviewer": check_reviewer(adjudicator),
            "action": ADJUDICATE,
            "verdict": check_verdict(decision),
            "reason": "",
            "note": (note or "").strip(),
            "created_at": utcnow(),
        },
    )


def adjudications(engine: Engine, item_keys: Iterable[str] | None = None) -> pd.DataFrame:
    """The decision in force per item (the latest), indexed by item key.

    Columns: adjudicator, decision, adjudication_note, adjudicated_at (UTC).
    """
    events = read_events(engine, item_keys, actions=(ADJUDICATE,))
    if events.empty:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in ADJUDICATION_COLUMNS})
        empty["adjudicated_at"] = pd.Series(dtype="datetime64[us, UTC]")
        return empty.rename_axis("item_key")
    latest = events.drop_duplicates("item_key", keep="last").set_index("item_key")
    return pd.DataFrame(
        {
            "adjudicator": latest["reviewer"].astype(object),
            "decision": latest["verdict"].astype(object),
            "adjudication_note": latest["note"].fillna("").astype(object),
            "adjudicated_at": utc(latest["created_at"]),
        }
    )


def restore_adjudications(engine: Engine, run_id: int, keys: Sequence[str], exported: pd.DataFrame) -> int:
    """Record the decisions of an uploaded export (rows aligned with ``keys``) on items that have
    none in the database; returns how many were recorded.

    An item already decided here keeps its decision: the export carries no time of decision, so
    the file cannot show it is newer, and work done since the export is never reverted. Restoring
    the same file twice adds nothing. The restored event's time is the time of the restore.
    """
    if "decision" not in exported.columns:
        return 0
    decisions = exported["decision"].fillna("").astype(str).str.strip().str.lower().tolist()
    wanted = [i for i, d in enumerate(decisions) if d]
    if not wanted:
        return 0
    held = set(adjudications(engine, [keys[i] for i in wanted]).index)
    names = exported["adjudicator"].fillna("").astype(str).tolist()
    notes = exported.get("adjudication_note", pd.Series([""] * len(exported))).fillna("").astype(str).tolist()
    rows: dict[str, dict] = {}
    now = utcnow()
    for i in wanted:
        key = str(keys[i])
        if key in held or key in rows:
            continue
        rows[key] = {
            "item_key": key,
            "run_id": run_id,
            "reviewer": check_reviewer(names[i]),
            "action": ADJUDICATE,
            "verdict": check_verdict(decisions[i]),
            "reason": "",
            "note": notes[i].strip(),
            "created_at": now,
        }
    values = list(rows.values())
    for start in range(0, len(values), RESTORE_CHUNK):
        with writer(engine).begin() as conn:
            conn.execute(insert(VerdictEvent), values[start : start + RESTORE_CHUNK])
    return len(values)
