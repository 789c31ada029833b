"""Simulated runs with a known truth, for the coverage of every interval the estimate prints.

A run is cells (bucket x domain) of a finite population: each row's truth is drawn once, and a
review is a simple random sample without replacement of each cell (what a prefix of the seeded
review order is). The regimes are the ones users meet: realistic strata (a few large domains and
several small ones, strata of 1-5 rows), strata whose rows are all correct or all wrong, reviews
skewed toward a few domains or the overlap-only bucket, and unplanned reviews that leave thin
strata to fall back to their bucket. Shared by ``tests/test_estimate_coverage.py`` and the bench.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.estimate.strata import Strata

B = len(BUCKETS)
BASE = np.array([0.97, 0.06, 0.7, 0.5])  #: typical true accuracy per bucket (BUCKETS order)
SPREAD = np.array([0.03, 0.04, 0.12, 0.15])  #: its spread between domains
SHARES = np.array([0.45, 0.25, 0.1, 0.2])  #: typical bucket shares of a domain


@dataclass(frozen=True)
class Run:
    """One simulated run: rows and correct rows per cell (bucket x domain), and the reviewed
    and correct-among-reviewed counts of one sample of it."""

    size: np.ndarray  # (B, D)
    right: np.ndarray  # (B, D) rows whose truth is correct
    reviewed: np.ndarray  # (B, D)
    correct: np.ndarray  # (B, D)

    @property
    def domains(self) -> int:
        return self.size.shape[1]

    def truth(self, domain: int | None = None) -> float:
        """The run's (or a domain's) true accuracy: the share of its rows that are correct."""
        if domain is None:
            return float(self.right.sum() / self.size.sum())
        return float(self.right[:, domain].sum() / max(1, self.size[:, domain].sum()))

    def strata(self, missing: np.ndarray | None = None) -> Strata:
        """The estimator's cells (bucket-major, as :func:`build_strata` orders them)."""
        domains = [f"d{j:02d}" for j in range(self.domains)]
        cells = pl.DataFrame(
            {
                "bucket": [b for b in BUCKETS for _ in domains],
                "Domain": domains * B,
                "size": self.size.ravel(),
                "reviewed": self.reviewed.ravel(),
                "correct": self.correct.ravel(),
            }
        )
        return Strata(
            cells=cells,
            row_cell=np.zeros(0, dtype=np.int64),
            size=self.size.ravel().astype(float),
            reviewed=self.reviewed.ravel().astype(float),
            correct=self.correct.ravel().astype(float),
            bucket=np.repeat(np.arange(B), self.domains),
            reviewed_rows=np.zeros(0, dtype=bool),
            missing=None if missing is None else missing.ravel().astype(float),
        )

    def domain_mask(self, domain: int) -> np.ndarray:
        return np.tile(np.arange(self.domains) == domain, B)


def population(
    rng: np.random.Generator, rows: int, domains: int, all_correct: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(size, right) per cell: skewed domain sizes, some strata all correct (or all wrong)."""
    share = np.maximum(rng.dirichlet(np.full(domains, 0.8)), 0.004)
    size = np.zeros((B, domains), dtype=np.int64)
    for d, n in enumerate(rng.multinomial(rows, share / share.sum())):
        size[:, d] = rng.multinomial(n, rng.dirichlet(SHARES * 20))
    rate = np.clip(BASE[:, None] + rng.normal(0, SPREAD[:, None], (B, domains)), 0, 1)
    rate[0, rng.random(domains) < 0.4] = 1.0
    rate[1, rng.random(domains) < 0.3] = 0.0
    if all_correct:
        rate[0], rate[1] = 1.0, 0.0
    return size, rng.binomial(size, rate)


def proportional(size: np.ndarray, total: int, overlap: float = 3.0, least: int = 2) -> np.ndarray:
    """Reviews per cell: proportional to size, the overlap-only bucket ``overlap`` times as
    often, at least ``least`` per cell (never more than its rows)."""
    weight = size * np.array([1.0, 1.0, 1.0, overlap])[:, None]
    n = np.floor(total * weight / max(weight.sum(), 1)).astype(np.int64)
    return np.minimum(np.maximum(n, least), size)


def review(rng: np.random.Generator, size: np.ndarray, right: np.ndarray, n: np.ndarray) -> Run:
    """A simple random sample of ``n`` rows of each cell (hypergeometric correct counts)."""
    return Run(size, right, n, rng.hypergeometric(right, size - right, n))


Regime = Callable[[np.random.Generator], Run]


def regimes() -> dict[str, Regime]:
    """The regimes every interval is checked in, by name."""

    def realistic(rows: int, domains: int, total: int) -> Regime:
        def make(rng: np.random.Generator) -> Run:
            size, right = population(rng, rows, domains)
            return review(rng, size, right, proportional(size, total))

        return make

    def all_correct(rng: np.random.Generator) -> Run:
        size, right = population(rng, 5000, 6, all_correct=True)
        return review(rng, size, right, proportional(size, 200))

    def tiny_strata(rng: np.random.Generator) -> Run:  # domains of ~30 rows: strata of 1-5 rows, some unreviewed
        size, right = population(rng, 600, 20)
        return review(rng, size, right, proportional(size, 120, least=1))

    def skewed(rng: np.random.Generator) -> Run:  # two domains reviewed four times as much
        size, right = population(rng, 20000, 8)
        n = proportional(size, 300)
        n[:, :2] = np.minimum(size[:, :2], n[:, :2] * 4)
        return review(rng, size, right, n)

    def planned(rng: np.random.Generator) -> Run:  # a pilot for +-5 points, then the plan for +-2
        from scoring.estimate.planner import plan_review

        size, right = population(rng, 20000, 5)
        empty = Run(size, right, np.zeros_like(size), np.zeros_like(size))
        n = np.zeros_like(size)
        k = np.zeros_like(size)
        for half_width in (0.05, 0.02):
            plan = plan_review(empty.strata() if n.sum() == 0 else Run(size, right, n, k).strata(), half_width)
            want = plan.strata["planned"].to_numpy().reshape(size.shape)
            extra = np.maximum(want - n, 0)
            k = k + rng.hypergeometric(right - k, (size - right) - (n - k), extra)
            n = n + extra
        return Run(size, right, n, k)

    return {
        "planned +-2 after a +-5 pilot": planned,
        "3,000 rows, 200 reviewed": realistic(3000, 6, 200),
        "8,000 rows, 400 reviewed": realistic(8000, 8, 400),
        "20,000 rows, 800 reviewed": realistic(20000, 8, 800),
        "all-correct strata": all_correct,
        "strata of 1-5 rows": tiny_strata,
        "skewed domains": skewed,
    }


def rows_of(rng: np.random.Generator, run: Run, judge: tuple[float, float] = (0.92, 0.85)) -> dict[str, np.ndarray]:
    """The run as rows: bucket and domain indices, truth, whether reviewed (a simple random
    sample of each cell of ``run.reviewed`` rows), and a judge label right with probability
    ``judge`` = (sensitivity, specificity) varying a little by domain."""
    cells = run.size.ravel()
    cell = np.repeat(np.arange(len(cells)), cells)
    truth = np.zeros(len(cell), dtype=bool)
    reviewed = np.zeros(len(cell), dtype=bool)
    start = 0
    for size, right, n in zip(cells, run.right.ravel(), run.reviewed.ravel()):
        truth[start : start + size] = rng.permutation(np.arange(size) < right)
        reviewed[start : start + n] = True
        start += size
    bucket, domain = cell // run.domains, cell % run.domains
    se = np.clip(judge[0] + rng.normal(0, 0.03, run.domains), 0, 1)[domain]
    sp = np.clip(judge[1] + rng.normal(0, 0.05, run.domains), 0, 1)[domain]
    says = np.where(truth, rng.random(len(cell)) < se, rng.random(len(cell)) >= sp)
    return {"bucket": bucket, "domain": domain, "truth": truth, "reviewed": reviewed, "judge": says}
