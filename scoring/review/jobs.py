"""The two jobs a reviewer's marks serve, named wherever a queue is picked (the Review queue's
scope picker, Start here): *triage*, working through a bucket to settle its rows, and the
*estimate*, reviewing the random sample the True accuracy page planned (or a sampled bucket).

The sentences follow the estimate's random-sample rule (:mod:`scoring.estimate.sample`): every
scope serves its rows in the run's seeded order, so rows a queue serves form a prefix of each
stratum's order and count toward the estimate, whatever the scope; rows opened on purpose do not.
Triage marks therefore count too, but only for the bucket they are in: an estimate of the whole run
needs every bucket sampled, which is what the audit scope plans.
"""

from __future__ import annotations

from scoring.store.audit import AUDIT

TRIAGE = "Triage"
ESTIMATE = "Estimate"
#: What a triage mark does in each bucket (the two where the metrics disagree, then the others).
_SETTLES = {
    "overlap_only": "settle rows the metrics disagree on",
    "exact_only": "settle rows the metrics disagree on",
    "both_pass": "check rows both metrics pass",
    "both_fail": "check rows both metrics fail",
}


def job(bucket: str, sample: int | None = None) -> str:
    """:data:`ESTIMATE` for the audit scope or a sampled bucket (its first ``sample`` rows in random
    order), :data:`TRIAGE` for a whole bucket."""
    return ESTIMATE if bucket == AUDIT or sample else TRIAGE


def job_sentence(bucket: str, sample: int | None = None) -> str:
    """One line saying which job the marks given in this scope serve, and what they count for."""
    if bucket == AUDIT:
        return (
            f"{ESTIMATE}: these marks are the random sample the True accuracy page planned; they estimate the "
            "run's true accuracy. A skipped row widens its interval."
        )
    if sample:
        return (
            f"{ESTIMATE}: these marks are a random sample of this bucket (its first {sample:,} rows in random "
            "order); they estimate its true accuracy and count toward the run's."
        )
    does = _SETTLES.get(bucket, "settle this bucket's rows")
    return (
        f"{TRIAGE}: these marks {does}. They count toward the true-accuracy estimate for this bucket only; the "
        "audit sample (True accuracy page) covers every bucket."
    )
