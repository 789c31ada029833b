"""The judge against the humans for a stored run: every label set of the run on the estimate's
random sample. Apart from :mod:`scoring.estimate.judge_trust` (pure) because it reads the
database; the Judge page and ``python -m scoring judge-trust`` share it."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from sqlalchemy import Engine

from scoring.estimate.judge_trust import trust_rows
from scoring.store import judge_cache, judge_choice
from scoring.store.judge_choice import ANY_CONFIG, JudgeConfig


@dataclass(frozen=True)
class TrustData:
    """The estimate's random sample and, per label set, its reviewed rows against the judge.

    ``rows`` maps a label set's name (:data:`ANY_CONFIG` first, then each configuration's name) to
    :func:`scoring.estimate.judge_trust.trust_rows`; ``configs`` the same names to the
    configuration (None for :data:`ANY_CONFIG`); ``in_use`` names the one the estimate uses."""

    reviewed: int
    by_hand: int
    rows: dict[str, pl.DataFrame]
    configs: dict[str, JudgeConfig | None]
    in_use: str

    def in_use_rows(self) -> pl.DataFrame:
        """The rows of the label set the estimate uses (the default's when the chosen
        configuration replied on no row of this run)."""
        return self.rows.get(self.in_use, self.rows[ANY_CONFIG])


def trust_data(engine: Engine, run_id: int, sample: pl.DataFrame, configs: dict[JudgeConfig, int]) -> TrustData:
    """Every label set of ``configs`` (from :func:`judge_choice.configs_of`) on ``sample``'s
    reviewed rows (the estimate's sample: :func:`scoring.estimate.stored_run.stored_estimate`)."""
    keys = sample.filter(pl.col("reviewed"))["item_key"].to_list()
    sets: dict[str, JudgeConfig | None] = {ANY_CONFIG: None, **{c.name: c for c in configs}}
    rows = {}
    for name, config in sets.items():
        model, version = (config.model, config.prompt_version) if config else (None, None)
        rows[name] = trust_rows(sample, judge_cache.latest_labels(engine, keys, model, version))
    by_hand = int(sample["by_hand"].sum()) if "by_hand" in sample.columns else 0
    return TrustData(len(keys), by_hand, rows, sets, judge_choice.describe(judge_choice.get_choice(engine, run_id)))
