"""The ``blind_scopes`` table: which scopes of a run are reviewed double-blind.

A row is a bucket, a domain and a sample size, ``""`` (:data:`WHOLE_RUN`) for every bucket or
domain and 0 for every row. Reads and writes only: what a scope covers, and what follows for the
queue, is decided in :mod:`scoring.review.claim_rules`.
"""

from __future__ import annotations

from sqlalchemy import Engine, delete, select

from scoring.store.engine import writer
from scoring.store.orm_tables import BlindScope, utcnow

WHOLE_RUN = ""  #: the bucket (and domain) value of a scope covering every bucket (domain)


def set_blind_scope(
    engine: Engine, run_id: int, bucket: str, domain: str, sample: int, by: str, on: bool = True
) -> None:
    """Put the scope (bucket, domain, sample) of a run into double-blind review, or out of it."""
    match = (
        BlindScope.run_id == run_id,
        BlindScope.bucket == bucket,
        BlindScope.domain == domain,
        BlindScope.sample == sample,
    )
    with writer(engine).begin() as conn:
        conn.execute(delete(BlindScope).where(*match))
        if on:
            row = {"run_id": run_id, "bucket": bucket, "domain": domain, "sample": sample}
            conn.execute(BlindScope.__table__.insert().values(**row, created_by=by, created_at=utcnow()))


def blind_scope_rows(engine: Engine, run_id: int) -> list[tuple[str, str, int]]:
    """The run's double-blind scopes as stored: (bucket, domain, sample) rows, unordered."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(BlindScope.bucket, BlindScope.domain, BlindScope.sample).where(BlindScope.run_id == run_id)
        ).all()
    return [(b, d, s) for b, d, s in rows]


def blind_run_ids(engine: Engine) -> frozenset[int]:
    """The runs with at least one double-blind scope: one query for every page of a page run."""
    with engine.connect() as conn:
        return frozenset(int(r) for r in conn.execute(select(BlindScope.run_id).distinct()).scalars())
