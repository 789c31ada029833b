"""Judge labels read back from the cache and the judge's accuracy per domain."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from scoring.core.protocols import is_blank
from scoring.core.report import COMBINED, AccuracyRow
from scoring.core.stats import wilson_interval
from scoring.judge.plan import items_from_frame
from scoring.judge.prompt import CORRECT, ERROR, INCORRECT, NOT_ATTEMPTED, PROMPT_VERSION, UNPARSED
from scoring.store import judge_cache


# ---------------------------------------------------------------------------------------------
# Reading stored labels
# ---------------------------------------------------------------------------------------------
def stored_labels(
    engine: Engine,
    item_keys: Iterable[str],
    model: str | None = None,
    prompt_version: str | None = PROMPT_VERSION,
) -> dict[str, str]:
    """Item key -> the latest stored judge label (a reply beats an ERROR; latest reply wins).

    ``model=None`` accepts any model; ``prompt_version=None`` any prompt version. Items never
    judged are absent. Blank responses are never sent, so they are absent too (they are INCORRECT
    by rule: :func:`attach_judge_labels` fills them in).
    """
    return judge_cache.latest_labels(engine, item_keys, model, prompt_version)


def attach_judge_labels(
    engine: Engine,
    frame: pd.DataFrame,
    model: str | None = None,
    prompt_version: str | None = PROMPT_VERSION,
) -> pd.DataFrame:
    """A copy of ``frame`` with ``judge_label`` (blank rows INCORRECT, unjudged rows missing)."""
    out = frame.copy()
    # A stored run already carries its item keys; hashing 100,000 rows again costs seconds.
    keys = frame["item_key"].tolist() if "item_key" in frame.columns else [i.key for i in items_from_frame(frame)]
    labels = stored_labels(engine, keys, model=model, prompt_version=prompt_version)
    blank = frame["response"].map(is_blank).tolist()
    out["judge_label"] = pd.array([INCORRECT if b else labels.get(k) for k, b in zip(keys, blank)], dtype="string")
    return out


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
