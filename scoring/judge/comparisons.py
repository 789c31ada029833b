"""The judge against the other raters: each metric and the human verdicts, on the same rows."""

from __future__ import annotations

import pandas as pd

from scoring.core.verdict_rules import VERDICTS, PairAgreement, pair_agreement

#: Judge labels that are verdicts; UNPARSED, ERROR and unjudged rows are not compared.
JUDGE_VERDICTS = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


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
