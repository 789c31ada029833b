"""The judge against the other raters: each metric and the human verdicts, on the same rows."""

from __future__ import annotations

import pandas as pd

from scoring.stats import agreement_table, cohen_kappa, raw_agreement
from scoring.verdicts import VERDICTS, PairAgreement

#: Judge labels that are verdicts; UNPARSED, ERROR and unjudged rows are not compared.
JUDGE_VERDICTS = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


def _pair(a: str, b: str, left: list[bool], right: list[bool]) -> PairAgreement:
    table = agreement_table(left, right)
    return PairAgreement(a, b, len(left), table, cohen_kappa(table), raw_agreement(table))


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
        _pair("judge", "exact_correct", judge_ok, judged["exact_correct"].astype(bool).tolist()),
        _pair("judge", "overlap_correct", judge_ok, judged["overlap_correct"].astype(bool).tolist()),
    ]
    if "human_verdict" in final.columns:
        human_rows = judged["human_verdict"].isin(VERDICTS).to_numpy()
        human = (judged["human_verdict"][human_rows] == "correct").tolist()
        judge_h = [ok for ok, keep in zip(judge_ok, human_rows) if keep]
        out.append(_pair("judge", "human", judge_h, human))
    return out
