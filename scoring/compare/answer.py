"""The Compare page's first lines: per pair of runs, the answer in one sentence ("A is ahead of
B by 6.4 points, 95% CI 1.0 to 11.7, McNemar p = 0.023, on 700 matched questions"), read off the
paired table on the most trustworthy verdict source both runs have.

The source is the adjudicated verdict where both runs have one, else the LLM judge, else the exact
substring metric (the spec's stricter check); the sentence names it. "Ahead" only where the
interval of the difference excludes zero and the (Holm-adjusted) p is below 0.05 (Newcombe's
interval and McNemar's exact test can disagree near the edge); otherwise the sentence says there is no clear
difference, with the same figures."""

from __future__ import annotations

import polars as pl

from scoring.compare.compared_runs import ADJUDICATED, EXACT, JUDGE, OVERLAP, SOURCE_TITLES

#: The source a pair's sentence reads, first found first.
PREFERRED = (ADJUDICATED, JUDGE, EXACT, OVERLAP)


def _p(value: float) -> str:
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def pair_sentence(row: dict) -> str:
    """One row of :func:`scoring.compare.paired_table` as a sentence."""
    a, b, n, title = row["run_a"], row["run_b"], int(row["n"]), SOURCE_TITLES[row["source"]]
    where = f"on {n:,} matched questions ({title})"
    if not n or row["difference"] is None:
        return f"{a} and {b} cannot be compared: no matched question has a verdict in both ({title})."
    p = row["p_holm"] if row.get("p_holm") is not None else row["p_value"]
    test = f"McNemar {_p(p)}" + (", Holm-adjusted" if row.get("p_holm") is not None else "")
    low, high, diff = 100 * row["ci_low"], 100 * row["ci_high"], 100 * row["difference"]
    interval = f"95% CI {low:.1f} to {high:.1f}"
    if (low > 0 or high < 0) and p < 0.05:  # "ahead" never beside a p above 0.05 (issue 37)
        ahead, behind = (a, b) if diff > 0 else (b, a)
        lo, hi = (low, high) if diff > 0 else (-high, -low)
        return f"{ahead} is ahead of {behind} by {abs(diff):.1f} points, 95% CI {lo:.1f} to {hi:.1f}, {test}, {where}."
    return f"No clear difference between {a} and {b}: {a} − {b} = {diff:+.1f} points, {interval}, {test}, {where}."


def lead_sentences(paired: pl.DataFrame) -> list[str]:
    """One sentence per pair of runs, on the first :data:`PREFERRED` source the pair has."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    rank = {s: i for i, s in enumerate(PREFERRED)}
    rows = sorted(paired.to_dicts(), key=lambda r: (r["index_a"], r["index_b"], rank.get(r["source"], len(rank))))
    for row in rows:
        pair = (row["run_a"], row["run_b"])
        if pair in seen or (not row["n"] and any(r["n"] for r in rows if (r["run_a"], r["run_b"]) == pair)):
            continue
        seen.add(pair)
        out.append(pair_sentence(row))
    return out
