"""The run's audit scope: rows the review planner chose, reviewed through the queue like a bucket.

The planner (:mod:`scoring.estimate.planner`) picks, per stratum, the next rows of the run's review
order; putting them here makes them one scope of the queue, so reviewers work through exactly the
rows that narrow the estimate (double-blind, when on, applies to it like to a bucket). The scope
keeps the half-width it was planned for, so the planner offers it again in any session.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine, delete, insert, select

from scoring.core.verdict_rules import check_reviewer
from scoring.store.engine import writer
from scoring.store.orm_tables import AuditRow, utcnow
from scoring.store.verdict_log import RESTORE_CHUNK

AUDIT = "audit"  #: the scope's name in the queue (beside the four buckets)


def set_audit(engine: Engine, run_id: int, item_keys: Iterable[str], by: str, half_width: float | None = None) -> int:
    """Make ``item_keys`` the run's audit scope (replacing any earlier one); returns its size.
    ``half_width``: the interval the plan was made for, kept with the scope (:func:`audit_half_width`).

    One transaction: a reviewer never sees half of the old scope and half of the new."""
    name = check_reviewer(by)
    if half_width is not None and not 0 < half_width < 1:
        raise ValueError(f"A half-width is a share between 0 and 1, not {half_width!r}.")
    keys = list(dict.fromkeys(str(k) for k in item_keys))
    now = utcnow()
    rows = [
        {"run_id": run_id, "item_key": k, "created_by": name, "created_at": now, "half_width": half_width} for k in keys
    ]
    with writer(engine).begin() as conn:
        conn.execute(delete(AuditRow).where(AuditRow.run_id == run_id))
        for start in range(0, len(rows), RESTORE_CHUNK):
            conn.execute(insert(AuditRow), rows[start : start + RESTORE_CHUNK])
    return len(keys)


def audit_keys(engine: Engine, run_id: int) -> set[str]:
    """Item keys of the run's audit scope (empty: none planned)."""
    with engine.connect() as conn:
        return set(conn.execute(select(AuditRow.item_key).where(AuditRow.run_id == run_id)).scalars())


def audit_half_width(engine: Engine, run_id: int) -> float | None:
    """The half-width (a share) the run's audit scope was planned for: None when there is no scope
    or it was planned before revision 0012. Kept in the database, so a refresh or another
    reviewer's session plans from it too."""
    stmt = select(AuditRow.half_width).where(AuditRow.run_id == run_id, AuditRow.half_width.is_not(None)).limit(1)
    with engine.connect() as conn:
        found = conn.execute(stmt).scalar()
    return float(found) if found is not None else None


def add_to_audit(engine: Engine, run_id: int, item_keys: Iterable[str], by: str) -> int:
    """Add ``item_keys`` to the run's audit scope, keeping the rows it holds and the half-width it
    was planned for (a plan aimed at one language adds its rows to the run's plan, it does not
    replace it); returns the scope's size. One transaction."""
    name = check_reviewer(by)
    now = utcnow()
    with writer(engine).begin() as conn:
        held = set(conn.execute(select(AuditRow.item_key).where(AuditRow.run_id == run_id)).scalars())
        planned_for = conn.execute(
            select(AuditRow.half_width).where(AuditRow.run_id == run_id, AuditRow.half_width.is_not(None)).limit(1)
        ).scalar()
        new = [k for k in dict.fromkeys(str(k) for k in item_keys) if k not in held]
        rows = [
            {"run_id": run_id, "item_key": k, "created_by": name, "created_at": now, "half_width": planned_for}
            for k in new
        ]
        for start in range(0, len(rows), RESTORE_CHUNK):
            conn.execute(insert(AuditRow), rows[start : start + RESTORE_CHUNK])
    return len(held) + len(new)
