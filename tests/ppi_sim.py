"""Simulated runs for the judge-assisted estimate (``tests/test_ppi.py`` and ``tests/bench_ppi.py``):
one population of 20,000 rows (the planner simulation's buckets and domains, plus a small domain
so some strata hold a handful of rows), the truth drawn afresh per run, and a judge per regime.

Everything is NumPy on the run's rows; strata are built once and refilled per run, so 200 runs
of six regimes take seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from scoring.core.protocols import BUCKETS
from scoring.estimate import Strata, build_strata, make_sample

N_ROWS = 20_000
DOMAINS = ("Art", "Geography", "History", "Science", "Sports", "Tiny")
DOMAIN_SHARES = (0.1, 0.3, 0.25, 0.2, 0.13, 0.02)
BUCKET_SHARES = {"both_pass": 0.55, "both_fail": 0.25, "exact_only": 0.05, "overlap_only": 0.15}
BUCKET_ACCURACY = {"both_pass": 0.97, "both_fail": 0.06, "exact_only": 0.85, "overlap_only": 0.55}
#: The domain whose every row the "one domain all correct" judge calls correct.
CREDULOUS_DOMAIN = "Geography"

Judge = Callable[[np.random.Generator, np.ndarray], np.ndarray]


def flipping(accuracy: float, missing: float = 0.0, credulous: np.ndarray | None = None) -> Judge:
    """A judge right on each row with probability ``accuracy`` (errors independent of the row),
    no label on a ``missing`` share of rows, and "correct" on every row ``credulous`` marks."""

    def judge(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        label = np.where(rng.random(len(truth)) < accuracy, truth, ~truth).astype(float)
        if credulous is not None:
            label[credulous] = 1.0
        if missing:
            label[rng.random(len(truth)) < missing] = np.nan
        return label

    return judge


class Population:
    """The run's layout (bucket, domain and true accuracy of each row) and its strata."""

    def __init__(self, seed: int = 11) -> None:  # not a seed the runs use: their draws would repeat the layout's
        rng = np.random.default_rng(seed)
        self.domain = rng.choice(len(DOMAINS), N_ROWS, p=DOMAIN_SHARES)
        self.bucket = rng.choice(len(BUCKETS), N_ROWS, p=[BUCKET_SHARES[b] for b in BUCKETS])
        self.accuracy = np.clip(
            np.array([BUCKET_ACCURACY[b] for b in BUCKETS])[self.bucket] + (self.domain - 2) * 0.01, 0, 1
        )
        sample = make_sample(
            np.array(BUCKETS)[self.bucket].tolist(), np.array(DOMAINS)[self.domain].tolist(), [None] * N_ROWS
        )
        self.strata = build_strata(sample)
        self.row_domain = np.array(DOMAINS)[self.domain]

    def regimes(self) -> dict[str, Judge]:
        """The issue's six judge regimes."""
        return {
            "judge 95%": flipping(0.95),
            "judge 90%": flipping(0.90),
            "judge 75%": flipping(0.75),
            "judge 50% (useless)": flipping(0.50),
            f"all of {CREDULOUS_DOMAIN} 'correct'": flipping(0.90, credulous=self.row_domain == CREDULOUS_DOMAIN),
            "labels missing on 20%": flipping(0.90, missing=0.20),
        }

    def truth(self, rng: np.random.Generator) -> np.ndarray:
        return rng.random(N_ROWS) < self.accuracy

    def with_reviewed(self, reviewed: np.ndarray, truth: np.ndarray) -> Strata:
        """The strata with ``reviewed`` rows reviewed (their verdict the truth)."""
        cells = len(self.strata.size)
        cell = self.strata.row_cell[reviewed]
        return replace(
            self.strata,
            reviewed=np.bincount(cell, minlength=cells).astype(float),
            correct=np.bincount(cell, weights=truth[reviewed].astype(float), minlength=cells),
            reviewed_rows=reviewed,
        )
