"""Paired comparison of runs on their matched rows, and the questions they disagree on.

For every pair of runs (A, B) and every verdict source both have: ``b`` rows A right and B
wrong, ``c`` rows A wrong and B right, the accuracy of each, their difference A - B with
Newcombe's hybrid score interval for paired data, McNemar's exact p, and, with more than two
runs, the p-values Holm-adjusted across all pairs of that source. Rows whose verdict is unknown
in either run (adjudicated rows still pending, unjudged rows) are left out of that source's
pair: ``excluded`` counts them and ``rows_used`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import polars as pl

from scoring.compare.compared_runs import EXACT, OVERLAP, SOURCES
from scoring.compare.matching import ROW, MatchResult, run_column
from scoring.core.stats import Z95, holm_adjust, mcnemar_exact, newcombe_paired_interval

INTERVAL_METHOD = "Newcombe hybrid score interval for paired data (Newcombe 1998, method 10)"
TEST_METHOD = "McNemar exact test (two-sided, binomial on the discordant rows)"
ADJUSTMENT_METHOD = "Holm step-down across all pairs of runs, per verdict source"
ALL_MATCHED = "all matched rows"
ALWAYS_KNOWN = (EXACT, OVERLAP)  #: sources with a verdict on every row
DECIDED_IN_BOTH = "matched rows with a verdict in both runs (pending or unjudged rows left out)"


@dataclass(frozen=True)
class PairedComparison:
    """Run A against run B on one verdict source (``difference`` = accuracy A - accuracy B).

    ``both_right`` + ``b`` + ``c`` + ``both_wrong`` = ``n``, the rows used; ``excluded`` matched
    rows had an unknown verdict in A or B. ``accuracy_a``/``accuracy_b``/``difference`` are None
    when ``n`` is 0 (the interval is then the uninformative -1..1, p = 1). ``p_holm`` is None with
    only two runs (nothing to adjust for), else the Holm-adjusted p (``adjustment`` names it).
    """

    run_a: str
    run_b: str
    index_a: int
    index_b: int
    source: str
    n: int
    excluded: int
    both_right: int
    b: int
    c: int
    both_wrong: int
    accuracy_a: float | None
    accuracy_b: float | None
    difference: float | None
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float | None
    rows_used: str
    interval_method: str = INTERVAL_METHOD
    test_method: str = TEST_METHOD
    adjustment: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _rows(match: MatchResult, domains: Sequence[str] | None) -> pl.DataFrame:
    if domains is None:
        return match.matched
    return match.matched.filter(pl.col("Domain").is_in(list(domains)))


def _pair(rows: pl.DataFrame, match: MatchResult, i: int, j: int, source: str, z: float) -> PairedComparison:
    a, b = pl.col(run_column(source, i)), pl.col(run_column(source, j))
    known = a.is_not_null() & b.is_not_null()
    counts = rows.select(
        used=known.sum(),
        both_right=(known & a & b).sum(),
        b=(known & a & ~b).sum(),
        c=(known & ~a & b).sum(),
        both_wrong=(known & ~a & ~b).sum(),
    ).row(0, named=True)
    n, r11, r10, r01, r00 = (int(counts[k] or 0) for k in ("used", "both_right", "b", "c", "both_wrong"))
    low, high = newcombe_paired_interval(r11, r10, r01, r00, z)
    return PairedComparison(
        run_a=match.labels[i],
        run_b=match.labels[j],
        index_a=i,
        index_b=j,
        source=source,
        n=n,
        excluded=rows.height - n,
        both_right=r11,
        b=r10,
        c=r01,
        both_wrong=r00,
        accuracy_a=(r11 + r10) / n if n else None,
        accuracy_b=(r11 + r01) / n if n else None,
        difference=(r10 - r01) / n if n else None,
        ci_low=low,
        ci_high=high,
        p_value=mcnemar_exact(r10, r01),
        p_holm=None,
        rows_used=ALL_MATCHED if source in ALWAYS_KNOWN else DECIDED_IN_BOTH,
    )


def paired_comparisons(
    match: MatchResult,
    sources: Sequence[str] | None = None,
    domains: Sequence[str] | None = None,
    z: float = Z95,
) -> list[PairedComparison]:
    """Every pair of runs (in label order: 0-1, 0-2, 1-2...) on every source both have.

    ``sources`` defaults to all that two runs have; ``domains`` restricts the rows (Holm then
    adjusts across the pairs of that restricted comparison). With more than two runs each
    source's p-values are Holm-adjusted across its pairs.
    """
    rows = _rows(match, domains)
    out: list[PairedComparison] = []
    for source in sources if sources is not None else match.sources:
        pairs = [
            _pair(rows, match, i, j, source, z)
            for i, j in combinations(range(len(match.labels)), 2)
            if source in match.run_sources[i] and source in match.run_sources[j]
        ]
        if len(match.labels) > 2 and pairs:
            adjusted = holm_adjust([p.p_value for p in pairs])
            pairs = [
                PairedComparison(**{**p.as_dict(), "p_holm": q, "adjustment": ADJUSTMENT_METHOD})
                for p, q in zip(pairs, adjusted)
            ]
        out += pairs
    return out


PAIRED_SCHEMA = {
    "run_a": pl.String,
    "run_b": pl.String,
    "index_a": pl.Int64,
    "index_b": pl.Int64,
    "source": pl.String,
    "n": pl.Int64,
    "excluded": pl.Int64,
    "both_right": pl.Int64,
    "b": pl.Int64,
    "c": pl.Int64,
    "both_wrong": pl.Int64,
    "accuracy_a": pl.Float64,
    "accuracy_b": pl.Float64,
    "difference": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "p_value": pl.Float64,
    "p_holm": pl.Float64,
    "rows_used": pl.String,
    "interval_method": pl.String,
    "test_method": pl.String,
    "adjustment": pl.String,
}


def paired_table(comparisons: Sequence[PairedComparison]) -> pl.DataFrame:
    """:func:`paired_comparisons` as one frame (a table on the page), columns as the dataclass."""
    return pl.DataFrame([c.as_dict() for c in comparisons], schema=PAIRED_SCHEMA)


DISCORDANT_BASE = ["source", "right", "wrong", "Domain"]


def discordant_rows(
    match: MatchResult,
    a: int,
    b: int,
    sources: Sequence[str] | None = None,
    domains: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The matched questions where run ``a`` and run ``b`` disagree (one right, the other wrong),
    one row per question and source, sources in :data:`SOURCES` order then matched-table order.

    Columns: ``source``, ``right`` and ``wrong`` (the labels of the run right and the run wrong),
    ``Domain``, the key columns, ``question``, then ``row_a``, ``question_a``, ``answer_a``,
    ``response_a`` (and ``item_key_a`` when the run has item keys), the same for ``_b``.
    Rows unknown in either run are not discordant.
    """
    rows = _rows(match, domains)
    wanted = [
        s
        for s in (sources if sources is not None else SOURCES)
        if s in match.run_sources[a] and s in match.run_sources[b]
    ]
    fields = [
        f
        for f in (ROW, "question", "answer", "response", "item_key")
        if run_column(f, a) in rows.columns and run_column(f, b) in rows.columns
    ]
    base = list(dict.fromkeys((*match.key, "question")))
    parts = []
    for source in wanted:
        va, vb = pl.col(run_column(source, a)), pl.col(run_column(source, b))
        part = rows.filter(va.is_not_null() & vb.is_not_null() & (va != vb)).select(
            pl.lit(source).alias("source"),
            pl.when(va).then(pl.lit(match.labels[a])).otherwise(pl.lit(match.labels[b])).alias("right"),
            pl.when(va).then(pl.lit(match.labels[b])).otherwise(pl.lit(match.labels[a])).alias("wrong"),
            "Domain",
            *base,
            *(pl.col(run_column(f, a)).alias(f"{f}_a") for f in fields),
            *(pl.col(run_column(f, b)).alias(f"{f}_b") for f in fields),
        )
        parts.append(part)
    if parts:
        return pl.concat(parts)
    return pl.DataFrame(schema={c: pl.String for c in [*DISCORDANT_BASE, *base]})
