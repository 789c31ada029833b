"""What stored judge labels add up to: the judge's accuracy per domain, and its agreement with
each metric and with the human verdicts on the same rows.

Pure (frames in, rows out) and apart from :mod:`scoring.judge`, whose network client loads the
OpenAI SDK (two seconds): the Overview and the Agreement page show these figures without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from scoring.core.judge_labels import CORRECT, ERROR, INCORRECT, NOT_ATTEMPTED, UNPARSED
from scoring.core.protocols import is_blank
from scoring.core.report import COMBINED, AccuracyRow
from scoring.core.stats import wilson_interval
from scoring.core.verdict_rules import VERDICTS, PairAgreement, pair_agreement

#: Judge labels that are verdicts; UNPARSED, ERROR and unjudged rows are not compared.
JUDGE_VERDICTS = (CORRECT, INCORRECT, NOT_ATTEMPTED)


# ---------------------------------------------------------------------------------------------
# Accuracy
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeAccuracyRow(AccuracyRow):
    """AccuracyRow for the judge: ``n`` counts scored rows (CORRECT, INCORRECT, NOT_ATTEMPTED,
    blanks as INCORRECT); UNPARSED, ERROR and rows not judged yet are counted apart, outside n."""

    rows: int = 0
    incorrect: int = 0
    not_attempted: int = 0
    unparsed: int = 0
    error: int = 0
    pending: int = 0


def _judge_row(domain: str, labels: pd.Series, blank: pd.Series) -> JudgeAccuracyRow:
    counts = labels.value_counts()
    correct = int(counts.get(CORRECT, 0))
    incorrect = int(counts.get(INCORRECT, 0))
    not_attempted = int(counts.get(NOT_ATTEMPTED, 0))
    n = correct + incorrect + not_attempted
    low, high = wilson_interval(correct, n)
    return JudgeAccuracyRow(
        domain=domain,
        n=n,
        correct=correct,
        blank=int(blank.sum()),
        accuracy=correct / n if n else 0.0,
        ci_low=low,
        ci_high=high,
        rows=len(labels),
        incorrect=incorrect,
        not_attempted=not_attempted,
        unparsed=int(counts.get(UNPARSED, 0)),
        error=int(counts.get(ERROR, 0)),
        pending=len(labels) - n - int(counts.get(UNPARSED, 0)) - int(counts.get(ERROR, 0)),
    )


def judge_accuracy(frame: pd.DataFrame, label_col: str = "judge_label") -> list[JudgeAccuracyRow]:
    """Per-domain rows sorted by name, then the combined micro-average (like the other scorers).

    Accuracy is CORRECT over scored rows. NOT_ATTEMPTED is a verdict (in n, not correct) and is
    also reported apart; UNPARSED, ERROR and unjudged rows are reported apart and left out of n,
    so a transport failure never counts as a wrong answer. Blank responses are INCORRECT.
    """
    if "is_blank" in frame.columns:
        blank = frame["is_blank"].astype(bool)
    elif "response" in frame.columns:
        blank = frame["response"].map(is_blank).astype(bool)
    else:
        blank = pd.Series(False, index=frame.index)
    labels = frame[label_col].astype("string").fillna("")
    labels = labels.where(~blank, INCORRECT)
    domains = frame["Domain"].astype(str) if "Domain" in frame.columns else pd.Series(COMBINED, index=frame.index)
    out = [_judge_row(dom, labels[domains == dom], blank[domains == dom]) for dom in sorted(domains.unique())]
    out.append(_judge_row(COMBINED, labels, blank))
    return out


def format_judge_accuracy(rows: Sequence[JudgeAccuracyRow]) -> str:
    """Plain-text table: scored n, correct, not attempted, unparsed, error, blank, accuracy, CI."""
    head = (
        f"{'domain':<24} {'rows':>6} {'scored':>7} {'correct':>8} {'n/a':>5} {'unparsed':>9} "
        f"{'error':>6} {'blank':>6} {'accuracy':>9}  95% CI"
    )
    lines = [head]
    for r in rows:
        if r.domain == COMBINED:
            lines.append("-" * len(head))
        lines.append(
            f"{r.domain:<24} {r.rows:>6} {r.n:>7} {r.correct:>8} {r.not_attempted:>5} {r.unparsed:>9} "
            f"{r.error:>6} {r.blank:>6} {r.accuracy:>8.1%}  [{r.ci_low:.1%}, {r.ci_high:.1%}]"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Agreement with the other raters
# ---------------------------------------------------------------------------------------------
def judge_comparisons(final: pd.DataFrame) -> list[PairAgreement]:
    """Judge vs exact substring, vs word overlap and vs human verdicts (kappa, raw, 2x2).

    Only rows with a judge verdict count; NOT_ATTEMPTED is a "wrong" for the comparison. Human
    rows in conflict are left out of the human comparison.
    """
    if "judge_label" not in final.columns:
        return []
    labels = final["judge_label"].astype("string").fillna("").str.upper()
    judged = final[labels.isin(JUDGE_VERDICTS).to_numpy()]
    judge_ok = (labels[labels.isin(JUDGE_VERDICTS)] == "CORRECT").tolist()
    out = [
        pair_agreement("judge", "exact_correct", judge_ok, judged["exact_correct"].astype(bool).tolist()),
        pair_agreement("judge", "overlap_correct", judge_ok, judged["overlap_correct"].astype(bool).tolist()),
    ]
    if "human_verdict" in final.columns:
        human_rows = judged["human_verdict"].isin(VERDICTS).to_numpy()
        human = (judged["human_verdict"][human_rows] == "correct").tolist()
        judge_h = [ok for ok, keep in zip(judge_ok, human_rows) if keep]
        out.append(pair_agreement("judge", "human", judge_h, human))
    return out
