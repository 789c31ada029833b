"""Simulated multilingual runs with a known truth, for the per-language estimate's coverage
(:mod:`scoring.estimate.group_estimate`). Shared by ``tests/test_language_estimate.py`` (a few
regimes, fewer runs) and ``tests/bench_languages.py`` (every regime, 500 runs).

A run: rows of four languages (English, Hindi, Tamil and a small one at 1-5% of rows) over four
domains and the four buckets. Each bucket x domain x language cell has its own true rate: the
bucket's usual rate moved on the log-odds scale by the domain, by the language (English easiest,
the small language hardest: it is the one a borrowed rate would flatter) and by noise; English
Geography's both_pass rows are all correct. Each row's truth is drawn once, so a language's truth
is the share of its rows that are correct (the finite population the interval is about).

The review is the queue's: the rows of each bucket x domain stratum in a random order (languages
mixed, as the seeded review order mixes them), the first ``n`` of each stratum reviewed, ``n``
allocated in proportion to the stratum's size with the overlap_only bucket three times as often
(as ``tests/small_runs_sim.py`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from small_runs_sim import SHARES, proportional

from scoring import ingest
from scoring.core.protocols import BUCKETS
from scoring.estimate import make_sample
from scoring.estimate.group_estimate import estimate_groups
from scoring.store import load_table, make_engine
from scoring.store.verdict_log import record_mark

DOMAINS = ("Geography", "History", "Science", "Art")
DOMAIN_SHARES = np.array([0.35, 0.3, 0.2, 0.15])
DOMAIN_EFFECT = np.array([0.4, -0.2, 0.0, -0.4])
LANGUAGES = ("English", "Hindi", "Tamil", "Odia")
LANGUAGE_EFFECT = np.array([0.5, 0.0, -0.4, -1.0])
#: the usual true accuracy of each bucket (BUCKETS order)
_BASE = {"both_pass": 0.95, "both_fail": 0.08, "exact_only": 0.7, "overlap_only": 0.5}
BASE = np.array([_BASE[b] for b in BUCKETS])
NOISE = 0.3  #: sd of each cell's own log-odds noise
SMALL_SHARES = (0.01, 0.03, 0.05)  #: the small language's share of rows
RUN_ROWS = (300, 700, 2000, 5000)
REVIEWS = (40, 60, 100, 150, 300)
TOLERANCE = 1e-12


def language_shares(small: float) -> np.ndarray:
    rest = 1 - small
    return np.array([0.55 * rest, 0.3 * rest, 0.15 * rest, small])


def regimes() -> list[tuple[int, int, float]]:
    """(rows, reviews, small language's share): every review up to half the run."""
    return [(rows, n, small) for rows in RUN_ROWS for n in REVIEWS if n <= rows // 2 for small in SMALL_SHARES]


@dataclass
class Tally:
    """Coverage per language: intervals shown, covering, withheld, and their half-widths."""

    shown: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)
    withheld: dict[str, int] = field(default_factory=dict)
    width: dict[str, float] = field(default_factory=dict)

    def add(self, language: str, shown: bool, covered: bool, half_width: float) -> None:
        if not shown:
            self.withheld[language] = self.withheld.get(language, 0) + 1
            return
        self.shown[language] = self.shown.get(language, 0) + 1
        self.covered[language] = self.covered.get(language, 0) + int(covered)
        self.width[language] = self.width.get(language, 0.0) + half_width

    def coverage(self, language: str | None = None) -> float:
        keys = [language] if language else list(self.shown)
        shown = sum(self.shown.get(k, 0) for k in keys)
        return sum(self.covered.get(k, 0) for k in keys) / shown if shown else float("nan")

    def withheld_share(self, language: str) -> float:
        total = self.shown.get(language, 0) + self.withheld.get(language, 0)
        return self.withheld.get(language, 0) / total if total else float("nan")

    def mean_half_width(self, language: str) -> float:
        shown = self.shown.get(language, 0)
        return self.width.get(language, 0.0) / shown if shown else float("nan")


def simulate(rows: int, reviews: int, small: float, rng: np.random.Generator) -> tuple[dict, list]:
    """One run and its review: (true accuracy per language, :func:`estimate_groups`' figures)."""
    language = rng.choice(len(LANGUAGES), size=rows, p=language_shares(small))
    domain = rng.choice(len(DOMAINS), size=rows, p=DOMAIN_SHARES)
    bucket = rng.choice(len(BUCKETS), size=rows, p=SHARES / SHARES.sum())
    logit = np.log(BASE / (1 - BASE))
    cell_logit = (
        logit[:, None, None]
        + DOMAIN_EFFECT[None, :, None]
        + LANGUAGE_EFFECT[None, None, :]
        + rng.normal(0, NOISE, (len(BUCKETS), len(DOMAINS), len(LANGUAGES)))
    )
    rate = 1 / (1 + np.exp(-cell_logit))
    rate[BUCKETS.index("both_pass"), 0, 0] = 1.0  # English Geography both_pass: all correct
    truth = rng.random(rows) < rate[bucket, domain, language]
    size = np.zeros((len(BUCKETS), len(DOMAINS)), dtype=np.int64)
    np.add.at(size, (bucket, domain), 1)
    take = proportional(size, reviews)
    reviewed = np.zeros(rows, dtype=bool)
    for b in range(len(BUCKETS)):
        for d in range(len(DOMAINS)):
            members = np.flatnonzero((bucket == b) & (domain == d))
            reviewed[rng.permutation(members)[: take[b, d]]] = True
    sample = make_sample(
        [BUCKETS[b] for b in bucket],
        [DOMAINS[d] for d in domain],
        [bool(t) if r else None for t, r in zip(truth, reviewed, strict=True)],
        language=[LANGUAGES[v] for v in language],
    )
    true = {LANGUAGES[v]: float(truth[language == v].mean()) for v in np.unique(language)}
    return true, estimate_groups(sample)


def run_regime(rows: int, reviews: int, small: float, runs: int, seed: int) -> Tally:
    rng = np.random.default_rng(seed)
    tally = Tally()
    for _ in range(runs):
        true, figures = simulate(rows, reviews, small, rng)
        for est in figures:
            truth = true[est.scope]
            covered = est.ci_low - TOLERANCE <= truth <= est.ci_high + TOLERANCE
            tally.add(est.scope, est.shown, covered, est.half_width)
    return tally


# --------------------------------------------------------------------------- a stored mixed run

PLAN = [("English", 30, 24), ("Hindi", 20, 10), ("Tamil", 12, 3)]  #: language, rows, right


def mixed_database(tmp_path: Path) -> tuple[str, int]:
    """A file with a language column, every row reviewed through the queue."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    lines = ["question,answer,Domain,response,language"]
    for language, rows, right in PLAN:
        for i in range(rows):
            lines.append(
                f"{language} q{i}?,a{i},{'Art' if i % 2 else 'History'},{'a' if i < right else 'b'}{i},{language}"
            )
    run = ingest.save_run(engine, ("\n".join(lines) + "\n").encode(), "mixed.csv").run
    table = load_table(engine, run.id)
    truth = {f"{language} q{i}?": i < right for language, rows, right in PLAN for i in range(rows)}
    for key, question in zip(table["item_key"], table["question"], strict=True):
        record_mark(engine, key, run.id, "alice", "correct" if truth[question] else "wrong")
    engine.dispose()
    return url, run.id
