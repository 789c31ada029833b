"""Restoring an uploaded export's human verdicts, and the rows its queue served without one, into
the verdict log (idempotent)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from sqlalchemy import Engine

from scoring.core.errors import InputError
from scoring.core.export_format import VERDICTS_COLUMN
from scoring.core.export_order import exported_skips
from scoring.core.export_read_back import exported_marks
from scoring.store import verdict_log as review


def _as_utc(value: object) -> datetime | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize(UTC) if stamp.tzinfo is None else stamp.tz_convert(UTC)
    return stamp.to_pydatetime()


def restore_verdicts(
    engine: Engine, run_id: int, scored: pd.DataFrame, exported_part: pd.DataFrame, in_order: bool = True
) -> int:
    """Record the exported human verdicts (rows aligned with ``scored``, which needs ``item_key``)
    that the database does not hold yet; returns how many marks were recorded.

    Each mark keeps the way its row reached the reviewer (``via``) when the file says it and
    ``in_order``: the run has the export's review seed, so the rows the queue served are the same
    prefix of the same order. ``in_order=False`` (an export without its seed, see
    :mod:`scoring.core.export_order`) records every mark as restored: reviewed by hand for the
    estimate.

    With :data:`VERDICTS_COLUMN` every reviewer's verdict is restored with its own reason, note
    and time, conflicts included. A verdict is skipped when that reviewer's current verdict on the
    item has the same verdict, reason and note (whatever its time), or is newer than the exported
    one (work done since the export is not reverted by an older file). So restoring the same
    file twice, or into the database it came from, adds nothing. Older exports (summary columns
    only) restore as before: each named reviewer's verdict unless equal to the current one; a
    ``conflict`` row carries no per-reviewer verdicts and is skipped. Nothing is ever undone.
    """
    if len(exported_part) != len(scored):
        raise InputError(f"The export has {len(exported_part)} rows but the run has {len(scored)}.")
    keys = scored["item_key"].astype(str).tolist()
    rows = exported_marks(exported_part)
    newer_wins = VERDICTS_COLUMN in exported_part.columns
    current = review.current_verdicts(engine, keys)
    have: dict[tuple[str, str], tuple[str, str, str, datetime | None]] = {
        (str(k), str(r)): (str(v), str(re_ or ""), str(n or ""), _as_utc(t))
        for k, r, v, re_, n, t in zip(
            current["item_key"],
            current["reviewer"],
            current["verdict"],
            current["reason"],
            current["note"],
            current["reviewed_at"],
        )
    }
    marks: list[dict] = []
    for key, row in zip(keys, rows):
        for mark in row:
            held = have.get((key, mark.reviewer))
            if held is not None:
                if held[:3] == (mark.verdict, mark.reason, mark.note):
                    continue
                if newer_wins and mark.reviewed_at is not None and held[3] is not None and held[3] > mark.reviewed_at:
                    continue
            have[(key, mark.reviewer)] = (mark.verdict, mark.reason, mark.note, mark.reviewed_at)
            marks.append(
                {
                    "item_key": key,
                    "run_id": run_id,
                    "reviewer": mark.reviewer,
                    "verdict": mark.verdict,
                    "reason": mark.reason,
                    "note": mark.note,
                    "reviewed_at": mark.reviewed_at,
                    **({"via": mark.via} if mark.via and in_order else {}),
                }
            )
    return review.record_marks(engine, marks)


def restore_skips(
    engine: Engine, run_id: int, scored: pd.DataFrame, exported_part: pd.DataFrame, in_order: bool = True
) -> int:
    """Record a skip in run ``run_id`` for each reviewer the export's queue served a row to without
    a verdict (its ``queue_skips`` column, :mod:`scoring.core.export_order`), so the rows the queue
    served are the original's; returns how many were recorded.

    Given in the queue (``via`` queue) when ``in_order`` (the run has the export's seed), else as
    restored. A reviewer who already marked or skipped the item is left as they are, so restoring
    the same file again, or into the database it came from, adds nothing. Call it after
    :func:`restore_verdicts`.
    """
    rows = exported_skips(exported_part)
    keys = scored["item_key"].astype(str).tolist()
    wanted = [(key, name) for key, names in zip(keys, rows) for name in names]
    if not wanted:
        return 0
    held = review.read_events(
        engine, sorted({k for k, _ in wanted}), actions=("mark", "skip"), columns=["item_key", "reviewer"]
    )
    done = set(zip(held["item_key"].astype(str), held["reviewer"].astype(str)))
    via = review.QUEUE if in_order else review.RESTORED
    return review.record_skips(
        engine,
        [
            {"item_key": key, "run_id": run_id, "reviewer": name, "via": via}
            for key, name in dict.fromkeys(wanted)
            if (key, name) not in done
        ],
    )
