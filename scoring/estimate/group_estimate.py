"""True accuracy per language (or any column that splits a run's rows into groups), each group
estimated exactly as a run of its own rows is.

Why a group is its own run: the random-sample rule draws per stratum (bucket x domain), so a
language's reviewed rows in a stratum are a simple random sample of that language's rows there.
Estimating the language from its own strata keeps that, and a thin stratum then borrows its
bucket's rate from the *same language's* other domains, never from another language (whose
accuracy is what the table compares it with). The group's figure takes the domains' rules
(:func:`scoring.estimate.estimator.share_estimate` with ``withhold``): a Student's t on the
degrees of freedom its variance rests on, and no interval ("review k more") below
:data:`~scoring.estimate.evidence.MIN_DOMAIN_REVIEWED` reviewed rows or past
:data:`~scoring.estimate.evidence.MAX_BORROWED` borrowed rows. Coverage by simulation:
``tests/test_language_estimate.py`` and ``tests/bench_languages.py`` (a language of 1-5% of rows
included).

Runs stacked for a table across runs (:func:`stack_runs`) keep each run's strata apart (the
domain key carries the run), so every run's own random sample stays one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scoring.core.stats import Z95
from scoring.estimate.estimator import Estimate, share_estimate
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import build_strata

#: The column a run's rows carry their language in (``scoring.store`` fills it for every run).
LANGUAGE = "language"
#: Shown where a row has no language at all (a plain table without the column).
NO_LANGUAGE = "(no language)"
#: A language may borrow its bucket's rate (from its own other domains) for this share of its rows
#: and still show an interval (a domain: 0.2, since it borrows from other domains).
GROUP_MAX_BORROWED = 0.5
#: How the per-language figure is computed, for the pages' expanders, the CLI's --json and the docs.
GROUP_METHOD = (
    "Each language's figure is computed as a run of that language's rows alone: its rows of the random sample, "
    "stratified by bucket x domain, a thin stratum borrowing its bucket's rate from the same language's other "
    "domains only; a Student's t on its degrees of freedom; no interval below 10 reviewed rows of the language or "
    "when more than 20% of its rows borrow a rate (the page says how many more reviews would give one)."
)


def groups_of(sample: pl.DataFrame, column: str = LANGUAGE) -> list[str]:
    """The values of ``column`` in ``sample``, sorted, blank cells last as :data:`NO_LANGUAGE`."""
    if column not in sample.columns:
        return []
    return sorted(set(groups_key(sample, column).to_list()), key=lambda v: (v == NO_LANGUAGE, v))


def groups_key(sample: pl.DataFrame, column: str = LANGUAGE) -> pl.Series:
    """Per row, its group (``column`` trimmed; a blank one :data:`NO_LANGUAGE`)."""
    key = pl.col(column).cast(pl.String).str.strip_chars().fill_null("")
    return sample.select(pl.when(key == "").then(pl.lit(NO_LANGUAGE)).otherwise(key).alias(column))[column]


def group_estimate(sample: pl.DataFrame, scope: str, z: float = Z95) -> Estimate:
    """The estimate of the rows of ``sample`` (already one group's), under the domains' rules."""
    strata = build_strata(check_sample(sample))
    every = np.ones(len(strata.size), dtype=bool)
    return share_estimate(strata, strata.correct, every, scope, z, withhold=True, max_borrowed=GROUP_MAX_BORROWED)


def estimate_groups(sample: pl.DataFrame, column: str = LANGUAGE, z: float = Z95) -> list[Estimate]:
    """One :class:`Estimate` per value of ``column`` (sorted); none when the column is absent."""
    if column not in sample.columns:
        return []
    keyed = sample.with_columns(groups_key(sample, column).alias("_group"))
    return [
        group_estimate(keyed.filter(pl.col("_group") == value).drop("_group"), value, z)
        for value in groups_of(sample, column)
    ]


def stack_runs(samples: Sequence[tuple[int, pl.DataFrame]]) -> pl.DataFrame:
    """Several runs' samples as one, each run's strata kept apart (``Domain`` becomes
    ``#<run> <domain>``): for a figure over every run of one model."""
    parts = [s.with_columns(Domain=pl.format("#{} {}", pl.lit(run_id), pl.col("Domain"))) for run_id, s in samples]
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()
