"""Human review, the public names: what a verdict is and what follows from the verdicts
(:mod:`scoring.core.verdict_rules`, pure), the verdict log (:mod:`scoring.store.verdict_log`), the
queue over a run (:mod:`scoring.review.queue`), the review rules (split, double-blind, second
opinion: who is handed which item, :mod:`scoring.review.claim_rules`), one reviewer's session on a
run in a tab (:mod:`scoring.review.session`: the mode, the row handed out, one method per action)
and its pass through the queue (:mod:`scoring.review.loop`), their own verdicts
(:mod:`scoring.review.my_verdicts`) and the run's review guidelines (:mod:`scoring.review.guidelines`).

Pages and commands use ``from scoring import review`` and ``review.record_mark(...)``.
"""

from scoring.core.verdict_rules import (
    ADJUDICATION_COLUMNS,
    AUTO_RULE,
    CONFLICT,
    CURRENT_COLUMNS,
    FINAL_SOURCES,
    FINAL_VERDICTS,
    JUDGE_LABELS,
    MAX_REVIEWER,
    METRIC_COLUMNS,
    PENDING,
    REASONS,
    SUMMARY_COLUMNS,
    VERDICTS,
    AdjudicatedRow,
    PairAgreement,
    adjudicated_accuracy,
    check_reason,
    check_reviewer,
    check_verdict,
    conflicts_in,
    final_verdicts,
    human_summary,
    human_vs_metric,
    metric_precision,
    pair_agreement,
    reviewer_agreement,
    split_per_reviewer,
)
from scoring.review import guidelines, loop, my_verdicts
from scoring.review.adjudicate import (
    OwnDecisionRefused,
    adjudicate_own_allowed,
    adjudication_queue,
    own_refusal,
    own_verdict,
    own_verdict_in,
    own_warning,
    party_to,
    record_adjudication,
    waiting_count,
)
from scoring.review.blind import BlindRows, blind_rows
from scoring.review.claim_rules import (
    CLAIM_TTL,
    DOUBLE_BLIND,
    SECOND_OPINION,
    SPLIT,
    VERDICTS_NEEDED,
    BlindSpec,
    ClaimRule,
    blind_buckets,
    blind_scopes,
    claim_next,
    covers,
    is_blind,
    live_claims,
    release,
    reviewers_per_item,
    rule_for,
    set_blind,
)
from scoring.review.guidelines import (
    GuidelinesRefused,
    ShownGuidelines,
    guidelines_to_show,
    reuse_guidelines,
    reuse_offer,
    save_guidelines,
)
from scoring.review.jobs import ESTIMATE, TRIAGE, job, job_sentence
from scoring.review.loop import ReviewLoop
from scoring.review.queue import (
    QueueScope,
    claim_in_queue,
    hold,
    next_in_queue,
    progress,
    queue,
    queue_position,
    queue_scope,
    resume,
    scope_progress,
    team_progress,
)
from scoring.review.session import GivenVerdict, ReviewMode, ReviewSession, ScopeProgress, Shown, Turn
from scoring.review.verdict_table import VERDICT_COLUMNS, VerdictTable, verdict_table
from scoring.store.adjudications import ADJUDICATE, adjudications, restore_adjudications
from scoring.store.audit import AUDIT, audit_half_width, audit_keys, set_audit
from scoring.store.guideline_log import MAX_CHARS as GUIDELINES_MAX_CHARS
from scoring.store.verdict_log import (
    ACTION_BUSY_MS,
    KEY_FILTER_LIMIT,
    OPENED,
    QUEUE,
    RESTORE_CHUNK,
    RESTORED,
    VIA,
    Undone,
    conflicts,
    current_verdicts,
    record_mark,
    record_marks,
    record_skip,
    revision,
    served_keys,
    served_unmarked,
    skipped_keys,
    undo_last,
    undo_last_mark,
)

__all__ = [
    "AUDIT", "audit_half_width", "audit_keys", "set_audit", "BlindRows", "blind_rows",
    "ESTIMATE", "TRIAGE", "job", "job_sentence",
    "CLAIM_TTL", "VERDICTS_NEEDED", "BlindSpec", "blind_buckets", "blind_scopes", "claim_next", "covers", "is_blind",
    "live_claims", "set_blind", "ClaimRule", "DOUBLE_BLIND", "SECOND_OPINION", "SPLIT", "claim_in_queue", "hold",
    "release", "resume", "team_progress", "reviewers_per_item", "rule_for",
    "GivenVerdict", "ReviewMode", "ReviewSession", "ScopeProgress", "Shown", "Turn",
    "adjudication_queue", "waiting_count", "OwnDecisionRefused", "adjudicate_own_allowed", "own_refusal",
    "own_verdict", "own_verdict_in", "own_warning", "party_to",
    "ACTION_BUSY_MS", "ADJUDICATE", "ADJUDICATION_COLUMNS", "AUTO_RULE", "CONFLICT", "CURRENT_COLUMNS",
    "FINAL_SOURCES", "FINAL_VERDICTS", "JUDGE_LABELS", "KEY_FILTER_LIMIT", "MAX_REVIEWER", "METRIC_COLUMNS",
    "PENDING", "REASONS", "RESTORE_CHUNK", "SUMMARY_COLUMNS", "VERDICTS", "adjudicated_accuracy", "AdjudicatedRow",
    "adjudications", "check_reason", "check_reviewer", "check_verdict", "conflicts", "conflicts_in",
    "current_verdicts", "final_verdicts", "human_summary", "human_vs_metric", "loop", "metric_precision",
    "my_verdicts", "next_in_queue", "pair_agreement", "PairAgreement", "progress", "queue", "queue_position",
    "queue_scope", "QueueScope", "record_adjudication", "restore_adjudications", "record_mark", "record_marks",
    "record_skip", "OPENED", "QUEUE", "RESTORED", "VIA", "served_keys", "served_unmarked",
    "reviewer_agreement", "ReviewLoop", "revision", "scope_progress", "skipped_keys", "split_per_reviewer",
    "undo_last", "undo_last_mark", "Undone",
    "GUIDELINES_MAX_CHARS", "GuidelinesRefused", "ShownGuidelines", "guidelines", "guidelines_to_show",
    "reuse_guidelines", "reuse_offer", "save_guidelines",
    "VERDICT_COLUMNS", "VerdictTable", "verdict_table",
]  # fmt: skip
