"""Can this judge be trusted? The judge against the humans on the estimate's random sample.

Pure (polars, numpy; no streamlit, no database). Inputs are a sample as :func:`reviewed_sample`
builds it (``reviewed`` marks the rows of the random sample with a settled human verdict,
``truth`` that verdict) and, per judge configuration, its raw label per item key. Everything is
computed on the reviewed rows only: rows opened by hand are not a random sample, so they say
nothing about how often the judge is right on the run (per issue 18, section 1).

- The confusion matrix: human correct/wrong against judge correct/wrong, with the rows the judge
  left unparsed or never judged counted beside it (never folded into "wrong").
- Raw agreement with its Wilson interval, and Cohen's kappa with :data:`KAPPA_METHOD`: the
  2% and 98% quantiles of kappa under the Jeffreys posterior Dirichlet(counts + 1/2) of the 2x2
  table (the central 95% covered only 0.93-0.95 at 30-100 rows; the central 96% covers 0.94-0.97
  from 30 rows on, more when about one row of a label is expected), widened where needed to hold
  the sample kappa (:func:`kappa_interval`). Chosen over the textbook Wald interval (Fleiss,
  Cohen and Everitt 1969, kept as :func:`kappa_se` for the worked numbers), which covers 40-90%
  at 20-50 rows with skewed prevalence, and it stays defined when every row agrees
  (tests/test_judge_trust.py prints the coverage table).
- Several configurations on the same reviewed rows: each one's agreement with the humans, and per
  pair the paired difference with Newcombe's interval and McNemar's exact p (Holm-adjusted with
  more than two configurations), as the Compare page pairs runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import (
    Z95,
    cohen_kappa,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
    raw_agreement,
    wilson_interval,
)
from scoring.core.verdict_rules import JUDGE_RIGHT, JUDGE_WRONG

KAPPA_METHOD = (
    "Jeffreys-Dirichlet posterior interval: the 2% and 98% quantiles of kappa under Dirichlet(counts + 1/2), "
    "which cover 95% in simulation, reaching the sample kappa where it lies beyond them (every row agreeing: "
    "up to 1)"
)
AGREEMENT_METHOD = "Wilson score interval"
#: Posterior mass left out on each side: the central 96%, which covers 95% in simulation (the
#: central 95% covered 0.93-0.95 at 30-100 rows).
KAPPA_TAIL = 0.02
KAPPA_DRAWS = 20_000  #: posterior draws per interval: quantile error about 0.003 in kappa
#: What the judge made of a row, as the confusion matrix's columns.
OUTCOMES = ("correct", "wrong", "unparsed", "not judged")
UNPARSED = "UNPARSED"
TRUST_COLUMNS = (
    "scope",
    "reviewed",
    "judged",
    "agree",
    "agreement",
    "agreement_low",
    "agreement_high",
    "kappa",
    "kappa_low",
    "kappa_high",
    "judge_correct_human_wrong",
    "judge_wrong_human_correct",
    "unparsed",
    "not_judged",
)
DISAGREEMENT_COLUMNS = ("row", "item_key", "bucket", "Domain", "human", "judge_label")


# --------------------------------------------------------------------------- kappa


def _kappa_of(cells: np.ndarray) -> np.ndarray:
    """Kappa of 2x2 tables given as (..., 4) cell weights [hc_jc, hc_jw, hw_jc, hw_jw]."""
    q = cells / cells.sum(axis=-1, keepdims=True)
    r1, c1 = q[..., 0] + q[..., 1], q[..., 0] + q[..., 2]
    p_e = r1 * c1 + (1 - r1) * (1 - c1)
    return (q[..., 0] + q[..., 3] - p_e) / (1 - p_e)


def kappa_interval(
    table: Sequence[Sequence[int]], draws: int = KAPPA_DRAWS, tail: float | None = None
) -> tuple[float, float] | None:
    """95% interval for Cohen's kappa of a 2x2 table (:data:`KAPPA_METHOD`); None with no rows.

    Deterministic: the draws are seeded by the counts, so a table always gets the same interval,
    and so do its transpose and its relabelling (kappa is the same for them). Defined even where
    the sample kappa is not (every row on one label): it is then wide.

    The interval always holds the sample kappa (:func:`~scoring.core.stats.cohen_kappa`), which
    is printed beside it. The posterior's quantiles alone can miss it at the edges: when every row
    agrees the sample kappa is 1, but every draw of the posterior has some weight off the
    diagonal, so its 98% quantile stays below 1 (30 + 10 agreeing rows: [0.760, 0.999] around
    1.000). There the interval is widened to reach the point (the upper end becomes 1), never
    narrowed: the posterior's central 96% stays inside it, so the coverage it has in simulation
    can only grow, and every interval that already held its point is unchanged.
    """
    a, b, c, d = int(table[0][0]), int(table[0][1]), int(table[1][0]), int(table[1][1])
    if a + b + c + d <= 0:
        return None
    cells = min([a, b, c, d], [a, c, b, d], [d, b, c, a], [d, c, b, a])
    rng = np.random.default_rng(cells)
    weights = rng.gamma(np.asarray(cells, dtype=float) + 0.5, size=(draws, 4))
    tail = KAPPA_TAIL if tail is None else tail
    low, high = (float(q) for q in np.quantile(_kappa_of(weights), [tail, 1 - tail]))
    point = cohen_kappa(table)
    if point is not None:  # the point printed beside the interval lies inside it
        low, high = min(low, point), max(high, point)
    return (max(-1.0, low), min(1.0, high))


def kappa_se(table: Sequence[Sequence[int]]) -> float | None:
    """Large-sample standard error of kappa (Fleiss, Cohen and Everitt 1969; Fleiss and Paik 2003,
    eq. 18.14): the textbook Wald interval's, kept for the worked numbers and the coverage table.
    None when kappa is undefined."""
    n = sum(sum(row) for row in table)
    kappa = cohen_kappa(table)
    if kappa is None or n == 0:
        return None
    p = [[table[i][j] / n for j in range(2)] for i in range(2)]
    rows = [p[i][0] + p[i][1] for i in range(2)]
    cols = [p[0][j] + p[1][j] for j in range(2)]
    p_e = rows[0] * cols[0] + rows[1] * cols[1]
    diag = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    off = (1 - kappa) ** 2 * sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    var = (diag + off - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2)
    return math.sqrt(max(0.0, var))


# --------------------------------------------------------------------------- one configuration


def outcome(label: str | None) -> str:
    """A raw judge label as a confusion-matrix column (:data:`OUTCOMES`). NOT_ATTEMPTED is a wrong
    answer (as the estimate reads it); ERROR or no label is "not judged"."""
    text = (label or "").strip().upper()
    if text in JUDGE_RIGHT:
        return "correct"
    if text in JUDGE_WRONG:
        return "wrong"
    return "unparsed" if text == UNPARSED else "not judged"


def trust_rows(sample: pl.DataFrame, labels: Mapping[str, str], by: str | None = None) -> pl.DataFrame:
    """The reviewed rows of ``sample`` with the human verdict and the judge's outcome.

    Columns: row_idx, item_key, bucket, Domain (and ``by`` when it is another column), human
    (True = correct), judge_label (raw, null when none) and judge (:func:`outcome`)."""
    extra = [by] if by and by not in ("bucket", "Domain") else []
    rows = sample.filter(pl.col("reviewed") & pl.col("truth").is_not_null())
    keys = rows["item_key"].to_list()
    raw = [labels.get(k) for k in keys]
    return rows.select("row_idx", "item_key", "bucket", "Domain", *extra, human=pl.col("truth")).with_columns(
        judge_label=pl.Series(raw, dtype=pl.String), judge=pl.Series([outcome(x) for x in raw], dtype=pl.String)
    )


@dataclass(frozen=True)
class Trust:
    """The judge against the humans on one scope's reviewed rows.

    ``counts[h][o]``: human correct (h = 0) or wrong (1) by judge outcome o in :data:`OUTCOMES`.
    ``table`` is the 2x2 part (judge correct/wrong), on which agreement and kappa are computed;
    kappa is None when undefined (one label only), the intervals None with no judged row."""

    scope: str
    counts: tuple[tuple[int, ...], tuple[int, ...]]
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    agreement: float | None
    agreement_ci: tuple[float, float] | None

    @property
    def table(self) -> list[list[int]]:
        return [[self.counts[0][0], self.counts[0][1]], [self.counts[1][0], self.counts[1][1]]]

    @property
    def reviewed(self) -> int:
        return sum(map(sum, self.counts))

    @property
    def judged(self) -> int:
        return sum(map(sum, self.table))

    def row(self) -> dict:
        """One line of :func:`trust_frame` (:data:`TRUST_COLUMNS`)."""
        low_k, high_k = self.kappa_ci or (None, None)
        low_a, high_a = self.agreement_ci or (None, None)
        t = self.table
        values = (
            self.scope,
            self.reviewed,
            self.judged,
            t[0][0] + t[1][1],
            self.agreement,
            low_a,
            high_a,
            self.kappa,
            low_k,
            high_k,
            t[1][0],
            t[0][1],
            self.counts[0][2] + self.counts[1][2],
            self.counts[0][3] + self.counts[1][3],
        )
        return dict(zip(TRUST_COLUMNS, values))


def trust(rows: pl.DataFrame, scope: str = COMBINED) -> Trust:
    """Confusion matrix, agreement and kappa of :func:`trust_rows` output (one scope)."""
    counts = [[0] * len(OUTCOMES) for _ in range(2)]
    for human, judge, n in rows.group_by("human", "judge").len().iter_rows():
        counts[0 if human else 1][OUTCOMES.index(judge)] += int(n)
    table = [counts[0][:2], counts[1][:2]]
    judged = sum(map(sum, table))
    agree = table[0][0] + table[1][1]
    return Trust(
        scope=scope,
        counts=(tuple(counts[0]), tuple(counts[1])),
        kappa=cohen_kappa(table) if judged else None,
        kappa_ci=kappa_interval(table),
        agreement=raw_agreement(table),
        agreement_ci=wilson_interval(agree, judged) if judged else None,
    )


def with_languages(rows: pl.DataFrame, sample: pl.DataFrame, fallback: str = "") -> pl.DataFrame:
    """``rows`` (:func:`trust_rows`) with each row's ``language`` from ``sample`` (by item key;
    ``fallback`` where the sample has none), for the judge against people per language."""
    if "language" not in sample.columns:
        return rows.with_columns(language=pl.lit(fallback, dtype=pl.String))
    languages = sample.select("item_key", pl.col("language").cast(pl.String)).unique("item_key", keep="first")
    return rows.join(languages, on="item_key", how="left", maintain_order="left")


def trust_by(rows: pl.DataFrame, by: str | None) -> list[Trust]:
    """One :class:`Trust` per value of column ``by`` (sorted), then the combined one."""
    out = []
    if by is not None and by in rows.columns:
        for value in sorted({str(v) for v in rows[by].to_list()}):
            out.append(trust(rows.filter(pl.col(by).cast(pl.String) == value), value))
    out.append(trust(rows, COMBINED))
    return out


def trust_frame(items: Sequence[Trust]) -> pl.DataFrame:
    """The per-scope table the Judge page shows (:data:`TRUST_COLUMNS`)."""
    schema = {c: pl.String if c == "scope" else (pl.Int64 if c in _INT_COLUMNS else pl.Float64) for c in TRUST_COLUMNS}
    return pl.DataFrame([t.row() for t in items], schema=schema)


_INT_COLUMNS = {
    "reviewed",
    "judged",
    "agree",
    "judge_correct_human_wrong",
    "judge_wrong_human_correct",
    "unparsed",
    "not_judged",
}


def confusion_frame(item: Trust) -> pl.DataFrame:
    """The confusion matrix as a table: human correct / wrong by judge outcome, with totals."""
    return pl.DataFrame(
        {
            "human": ["correct", "wrong", "total"],
            **{
                f"judge {o}": [item.counts[0][i], item.counts[1][i], item.counts[0][i] + item.counts[1][i]]
                for i, o in enumerate(OUTCOMES)
            },
            "total": [sum(item.counts[0]), sum(item.counts[1]), item.reviewed],
        }
    )


def disagreements(rows: pl.DataFrame) -> pl.DataFrame:
    """Reviewed rows where the judge gave a verdict and it differs from the human's, in file order;
    ``row`` is 1-based, as the review queue's ``?row=`` link takes it."""
    verdict = pl.col("judge")
    differ = rows.filter(verdict.is_in(["correct", "wrong"]) & ((verdict == "correct") != pl.col("human")))
    return differ.sort("row_idx").select(
        row=pl.col("row_idx") + 1,
        item_key="item_key",
        bucket="bucket",
        Domain="Domain",
        human=pl.when(pl.col("human")).then(pl.lit("correct")).otherwise(pl.lit("wrong")),
        judge_label="judge_label",
    )


# --------------------------------------------------------------------------- several configurations


@dataclass(frozen=True)
class ConfigPair:
    """Configuration A against B on the reviewed rows both gave a verdict on: ``both`` agree with
    the human, ``only_a`` only A does (McNemar's b), ``only_b`` only B does (c), ``neither``.
    ``difference`` = agreement A -
    agreement B with Newcombe's paired interval; McNemar's exact p; ``p_holm`` with more than two
    configurations, else None."""

    config_a: str
    config_b: str
    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    agreement_a: float | None
    agreement_b: float | None
    difference: float | None
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def _agrees(rows: pl.DataFrame) -> dict[str, bool]:
    judged = rows.filter(pl.col("judge").is_in(["correct", "wrong"]))
    return dict(zip(judged["item_key"].to_list(), ((judged["judge"] == "correct") == judged["human"]).to_list()))


def compare_configs(rows: Mapping[str, pl.DataFrame], z: float = Z95) -> list[ConfigPair]:
    """Every pair of configurations (in the order given) from their :func:`trust_rows` of the same
    sample: the paired statistics of the Compare page, on agreement with the humans."""
    agrees = {name: _agrees(r) for name, r in rows.items()}
    pairs = []
    for a, b in combinations(list(rows), 2):
        common = [k for k in agrees[a] if k in agrees[b]]
        both = sum(agrees[a][k] and agrees[b][k] for k in common)
        only_a = sum(agrees[a][k] and not agrees[b][k] for k in common)
        only_b = sum(agrees[b][k] and not agrees[a][k] for k in common)
        n = len(common)
        low, high = newcombe_paired_interval(both, only_a, only_b, n - both - only_a - only_b, z)
        pairs.append(
            ConfigPair(
                config_a=a,
                config_b=b,
                n=n,
                both=both,
                only_a=only_a,
                only_b=only_b,
                neither=n - both - only_a - only_b,
                agreement_a=(both + only_a) / n if n else None,
                agreement_b=(both + only_b) / n if n else None,
                difference=(only_a - only_b) / n if n else None,
                ci_low=low,
                ci_high=high,
                p_value=mcnemar_exact(only_a, only_b),
                p_holm=None,
            )
        )
    if len(rows) > 2 and pairs:
        adjusted = holm_adjust([p.p_value for p in pairs])
        pairs = [ConfigPair(**{**p.as_dict(), "p_holm": q}) for p, q in zip(pairs, adjusted)]
    return pairs
