"""A reviewer's own verdicts on a scope, and the scopes of a run that still need them.

These feed the queue's end ("all rows of this scope have your verdict", with links to the scopes
that still have work) and the "My verdicts" list, where a reviewer deliberately reopens a row.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from scoring.core.protocols import BUCKETS
from scoring.core.verdict_rules import VERDICTS
from scoring.review.blind import HIDDEN, BlindRows
from scoring.review.queue import QueueScope, row_languages
from scoring.review.reader_languages import reads
from scoring.store.audit import AUDIT
from scoring.store.verdict_log import current_verdicts

MY_COLUMNS = [
    "row",
    "Domain",
    "bucket",
    "verdict",
    "reason",
    "note",
    "reviewed_at",
    "marked_in_run",
    "question",
    "answer",
    "response",
    "row_idx",
]


def scope_rows(scored: pd.DataFrame, scope: QueueScope) -> pd.DataFrame:
    """The scored rows of a scope, in queue order (row_idx is the scored frame's position)."""
    return scored.iloc[scope.row_idx]


def my_verdicts(
    scored: pd.DataFrame, scope: QueueScope, engine: Engine, reviewer: str, blind: BlindRows | None = None
) -> pd.DataFrame:
    """Rows of the scope that carry the reviewer's current verdict, newest verdict first.

    ``row`` is 1-based; ``marked_in_run`` is the run the verdict was given in when it is another
    run holding the identical row (else empty). Columns: :data:`MY_COLUMNS`. The bucket of a row
    ``blind`` hides (:func:`~scoring.review.blind.blind_rows`) reads :data:`HIDDEN`: it would name
    both metrics' verdicts.
    """
    rows = scope_rows(scored, scope)
    current = current_verdicts(engine, scope.item_keys, reviewer=reviewer)
    if current.empty or rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in MY_COLUMNS})
    mine = rows[["row_idx", "item_key", "Domain", "bucket", "question", "answer", "response"]].merge(
        current.drop(columns=["reviewer"]), on="item_key", how="inner"
    )
    run_ids = mine["run_id"]
    mine["row"] = mine["row_idx"].astype("int64") + 1
    mine["marked_in_run"] = run_ids.astype(object).where(run_ids.notna(), None)
    if blind:
        mine["bucket"] = mine["bucket"].astype(object).where(~blind.mask(mine["item_key"]), HIDDEN)
    mine = mine.sort_values(["reviewed_at", "row_idx"], ascending=[False, True], kind="stable")
    return mine[MY_COLUMNS].reset_index(drop=True)


def carried_over(mine: pd.DataFrame, run_id: int) -> pd.Series:
    """Which of :func:`my_verdicts`' rows were marked in another run (True) rather than this one."""
    other = mine["marked_in_run"]
    return other.notna() & (other.astype(object) != run_id)


def verdict_counts(mine: pd.DataFrame) -> dict[str, int]:
    """Rows marked correct and wrong in a :func:`my_verdicts` table."""
    counts = mine["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def open_scopes(
    scored: pd.DataFrame,
    engine: Engine,
    reviewer: str,
    audit: Collection[str] = (),
    team: bool = False,
    languages: Collection[str] = (),
) -> pd.DataFrame:
    """Per scope of the run with work left, the rows still waiting (> 0 only): the audit sample
    first (bucket :data:`~scoring.store.audit.AUDIT`, Domain "", from the item keys ``audit``),
    then per bucket and domain.

    Waiting means without the reviewer's verdict, or, for a ``team`` splitting its scopes, without
    anyone's (a teammate's row is not handed out again); only rows the reviewer reads count
    (``languages``: :func:`~scoring.review.reader_languages.reads`). Columns: bucket, Domain,
    remaining; the buckets in their order, then the domains sorted.
    """
    current = current_verdicts(engine, scored["item_key"], reviewer=None if team else reviewer)
    keys = scored["item_key"].to_numpy(dtype=object)
    left = ~np.isin(keys, current["item_key"].to_numpy(dtype=object)) if len(current) else np.ones(len(keys), bool)
    if languages:
        left &= reads(row_languages(scored).to_numpy(dtype=object), languages)
    todo = scored[left]
    audited = int(np.count_nonzero(left & np.isin(keys, np.asarray(list(audit), dtype=object)))) if audit else 0
    empty = pd.DataFrame(
        {"bucket": pd.Series(dtype=object), "Domain": pd.Series(dtype=object), "remaining": pd.Series(dtype="int64")}
    )
    table = todo.groupby(["bucket", "Domain"], sort=False).size().rename("remaining").reset_index()
    if table.empty:
        table = empty
    order = {b: i for i, b in enumerate(BUCKETS)}
    table["_b"] = table["bucket"].map(order)
    table["Domain"] = table["Domain"].astype(str)
    table = table.sort_values(["_b", "Domain"]).drop(columns="_b")
    if audited:
        table = pd.concat([pd.DataFrame({"bucket": [AUDIT], "Domain": [""], "remaining": [audited]}), table])
    return table.astype({"remaining": "int64"}).reset_index(drop=True)
