"""Simulated small runs with a known truth, in the regimes teams really meet: runs of 300 to 5,000
rows, a few dozen reviews, a domain under 1% of rows and one unlike its buckets, strata truly all
correct or all wrong, and a pilot then a plan. Shared by ``tests/bench_small_runs.py`` (every
regime, 500 runs) and ``tests/test_small_runs.py`` (a few regimes, fewer runs).

A run: six domains of fixed shares (``Tiny`` 0.7% of rows: 2 rows of a 300-row run, 35 of 5,000;
``Odd`` 10%, whose rate in each bucket is 10-30 points off the bucket's usual rate), each split
into the four buckets at random; each bucket x domain cell has a rate (the bucket's usual rate and
a spread between domains, both_pass all correct in Geography and Science, both_fail all wrong in
History and Science) and each row's truth is drawn once. The rows are laid out cell by cell (in
:data:`BUCKETS` order, then domain), each cell's rows in a random order: that order is the run's
seeded review order, so a review of ``n`` rows of a cell is the first ``n`` of them, a simple
random sample without replacement. Judges label every row once per run (:func:`judges`).

A review is either ``total`` rows allocated over the cells in proportion to their size, the
overlap_only bucket three times as often (as ``estimate_sim.proportional``, with no floor per
cell: 20 reviews leave most cells with 0 or 1 reviewed rows), or a pilot of 10-30 rows per bucket
(spread over its domains by size) followed by the plan of ``plan_review`` (or ``plan_arrays`` with
the 90% judge) for +-3 or +-5 points, whose remaining rows are the next ones in each stratum's (or
each judge-label part's) order.

Figures are added up in a :class:`Tally` (sums, so runs in several processes merge).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.estimate import build_strata, estimate_accuracy, make_sample, metric_quality, plan_review
from scoring.estimate.ppi import judge_assisted_arrays
from scoring.estimate.ppi_plan import plan_arrays
from scoring.estimate.strata import Strata

B = len(BUCKETS)
BOTH_PASS, BOTH_FAIL, EXACT_ONLY, OVERLAP_ONLY = (
    BUCKETS.index(b) for b in ("both_pass", "both_fail", "exact_only", "overlap_only")
)
#: per bucket: usual true accuracy, its spread between domains (sd), usual share of a domain's rows
_BUCKET = {
    "both_pass": (0.97, 0.03, 0.45),
    "both_fail": (0.06, 0.04, 0.25),
    "exact_only": (0.7, 0.12, 0.1),
    "overlap_only": (0.5, 0.15, 0.2),
}
BASE, SPREAD, SHARES = (np.array([_BUCKET[b][i] for b in BUCKETS]) for i in range(3))  #: in BUCKETS order
DOMAINS = ("Geography", "History", "Science", "Art", "Odd", "Tiny")
DOMAIN_SHARES = (0.34, 0.25, 0.18, 0.127, 0.096, 0.007)
ODD, TINY = "Odd", "Tiny"
ODD_OFFSET = (0.10, 0.30)  #: how far (points/100) the odd domain's rate is from its bucket's usual rate
ALL_CORRECT = ("Geography", "Science")  #: domains whose both_pass rows are all correct
ALL_WRONG = ("History", "Science")  #: domains whose both_fail rows are all wrong
RUN_ROWS = (300, 700, 2000, 5000)
REVIEWS = (20, 40, 60, 100, 150, 300)
PILOTS = (10, 20, 30)  #: pilot rows per bucket
TARGETS = (0.05, 0.03)  #: half-widths the plans ask for
OVERLAP_WEIGHT = 3.0  #: the overlap_only bucket is reviewed this many times as often as its size asks
HUMAN = "human-only"
PLAN_JUDGE = "judge 90%"  #: the judge whose labels plan_arrays and metric_quality use
EXACT_JUDGE = "judge = exact metric"
TOLERANCE = 1e-12  #: a truth on an interval's end is inside it


def reviews_for(rows: int) -> tuple[int, ...]:
    """The review sizes simulated for a run of ``rows`` rows: every one up to half the run."""
    return tuple(n for n in REVIEWS if n <= rows // 2)


def accuracy_regime(rows: int, reviewed: int) -> str:
    return f"{rows:,} rows, {reviewed} reviewed"


def plan_regime(rows: int, pilot: int, target: float) -> str:
    return f"{rows:,} rows, pilot {pilot}/bucket, plan ±{100 * target:g}"


# --------------------------------------------------------------------------- the run


def largest_remainder(total: int, weight: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``total`` rows over cells in proportion to ``weight`` (whole rows by the largest remainder,
    ties to the first cell), none over its ``cap``; what a capped cell cannot take goes to the others."""
    weight, cap = np.asarray(weight, dtype=float), np.asarray(cap, dtype=np.int64)
    n = np.zeros(cap.shape, dtype=np.int64)
    total = int(min(total, cap.sum()))
    while (left := total - int(n.sum())) > 0:
        room = cap - n
        w = np.where(room > 0, weight, 0.0)
        if w.sum() <= 0:
            w = (room > 0).astype(float)
        exact = left * w / w.sum()
        add = np.minimum(np.floor(exact).astype(np.int64), room)
        short = left - int(add.sum())
        fraction = np.where((add < room) & (w > 0), exact - add, -1.0).ravel()
        for i in np.argsort(-fraction, kind="stable")[:short]:
            if fraction[i] >= 0:
                add.flat[i] += 1
        n += add
    return n


def proportional(size: np.ndarray, total: int) -> np.ndarray:
    """Reviews per cell (B x D): ``total`` in proportion to size, overlap_only :data:`OVERLAP_WEIGHT` times."""
    weight = size * np.where(np.arange(B) == OVERLAP_ONLY, OVERLAP_WEIGHT, 1.0)[:, None]
    return largest_remainder(total, weight, size)


def pilot(size: np.ndarray, per_bucket: int) -> np.ndarray:
    """Reviews per cell (B x D): ``per_bucket`` rows of each bucket spread over its domains by size."""
    return np.stack([largest_remainder(per_bucket, size[b], size[b]) for b in range(B)])


@dataclass
class Run:
    """One simulated run: its rows laid out cell by cell (bucket-major), each cell in its review
    order; ``truth`` per row; its strata with nothing reviewed; the judges' labels."""

    size: np.ndarray  # (B, D) rows per cell
    bucket: np.ndarray  # per row, index into BUCKETS
    domain: np.ndarray  # per row, index into DOMAINS
    position: np.ndarray  # per row, its place in its cell's review order
    truth: np.ndarray  # per row, bool
    strata: Strata
    labels: dict[str, np.ndarray] = field(default_factory=dict)  # judge name -> per row 1/0/NaN

    @property
    def rows(self) -> int:
        return len(self.truth)

    def accuracy(self, domain: str | None = None) -> float:
        """The run's (or a domain's) true accuracy."""
        if domain is None:
            return float(self.truth.mean())
        return float(self.truth[self.domain == DOMAINS.index(domain)].mean())

    def first(self, n: np.ndarray) -> np.ndarray:
        """Per row, whether it is among the first ``n[bucket, domain]`` of its cell's order."""
        return self.position < n[self.bucket, self.domain]

    def reviewed(self, done: np.ndarray) -> Strata:
        """The strata with the rows ``done`` reviewed, their verdict the truth (arrays and table)."""
        cells = len(self.strata.size)
        cell = self.strata.row_cell[done]
        reviewed = np.bincount(cell, minlength=cells).astype(float)
        correct = np.bincount(cell, weights=self.truth[done].astype(float), minlength=cells)
        table = self.strata.cells.with_columns(
            reviewed=pl.Series(reviewed, dtype=pl.Int64), correct=pl.Series(correct, dtype=pl.Int64)
        )
        return replace(self.strata, cells=table, reviewed=reviewed, correct=correct, reviewed_rows=done)

    def sample(self, done: np.ndarray, judge: np.ndarray) -> pl.DataFrame:
        """The run as the tool's sample (for ``metric_quality``): reviewed rows' truth, ``judge``'s labels."""
        return make_sample(
            np.array(BUCKETS)[self.bucket].tolist(),
            np.array(DOMAINS)[self.domain].tolist(),
            np.where(done, self.truth, None).tolist(),
            judge_correct=np.where(np.isnan(judge), None, judge > 0.5).tolist(),
        )


def make_run(rng: np.random.Generator, rows: int) -> Run:
    """A run of ``rows`` rows (see the module), judges' labels included."""
    d = len(DOMAINS)
    size = np.zeros((B, d), dtype=np.int64)
    per_domain = largest_remainder(rows, np.array(DOMAIN_SHARES), np.full(d, rows))
    for j, n in enumerate(per_domain):
        size[:, j] = rng.multinomial(n, rng.dirichlet(SHARES * 20))
    rate = np.clip(BASE[:, None] + rng.normal(0, SPREAD[:, None], (B, d)), 0, 1)
    rate[BOTH_PASS, [DOMAINS.index(x) for x in ALL_CORRECT]] = 1.0
    rate[BOTH_FAIL, [DOMAINS.index(x) for x in ALL_WRONG]] = 0.0
    sign = np.zeros(B)  # toward the middle where the usual rate is near 0 or 1, else either way
    sign[[BOTH_PASS, BOTH_FAIL, EXACT_ONLY, OVERLAP_ONLY]] = [-1.0, 1.0, *rng.choice([-1.0, 1.0], 2)]
    rate[:, DOMAINS.index(ODD)] = np.clip(BASE + sign * rng.uniform(*ODD_OFFSET, B), 0, 1)
    right = rng.binomial(size, rate).ravel()
    cell = np.repeat(np.arange(B * d), size.ravel())
    start = np.concatenate([[0], np.cumsum(size.ravel())[:-1]])
    place = np.arange(len(cell)) - start[cell]
    order = np.lexsort((rng.random(len(cell)), cell))  # a random order inside each cell
    position = np.empty(len(cell), dtype=np.int64)
    position[order] = place
    bucket, domain = cell // d, cell % d
    sample = make_sample(np.array(BUCKETS)[bucket].tolist(), np.array(DOMAINS)[domain].tolist(), [None] * len(cell))
    run = Run(size, bucket, domain, position, place < right[cell], build_strata(sample))
    run.labels = {name: judge(rng, run) for name, judge in judges().items()}
    return run


# --------------------------------------------------------------------------- judges

Judge = Callable[[np.random.Generator, Run], np.ndarray]


def flipping(accuracy: float, missing: float = 0.0, lenient: int | None = None) -> Judge:
    """A judge right on each row with probability ``accuracy`` (errors independent of the row), no
    label on a ``missing`` share of rows, and "correct" on every row of bucket ``lenient``."""

    def judge(rng: np.random.Generator, run: Run) -> np.ndarray:
        label = np.where(rng.random(run.rows) < accuracy, run.truth, ~run.truth).astype(float)
        if lenient is not None:
            label[run.bucket == lenient] = 1.0
        if missing:
            label[rng.random(run.rows) < missing] = np.nan
        return label

    return judge


def exact_metric(rng: np.random.Generator, run: Run) -> np.ndarray:
    """A judge that says what the exact-substring metric says (passes in both_pass and exact_only)."""
    del rng
    return np.isin(run.bucket, [BOTH_PASS, EXACT_ONLY]).astype(float)


def judges() -> dict[str, Judge]:
    """The judges every accuracy regime runs, by name (short names for the tables: :data:`SHORT`)."""
    return {
        "judge 95%": flipping(0.95),
        "judge 90%": flipping(0.90),
        "judge 75%": flipping(0.75),
        "judge 50% (useless)": flipping(0.50),
        EXACT_JUDGE: exact_metric,
        "lenient on overlap_only": flipping(0.90, lenient=OVERLAP_ONLY),
        "labels missing on 20%": flipping(0.90, missing=0.20),
    }


SHORT = {
    HUMAN: "human",
    "judge 95%": "j95",
    "judge 90%": "j90",
    "judge 75%": "j75",
    "judge 50% (useless)": "j50",
    EXACT_JUDGE: "=exact",
    "lenient on overlap_only": "lenient",
    "labels missing on 20%": "miss20%",
}


# --------------------------------------------------------------------------- tallies


class Tally:
    """Sums of figures by key (a tuple naming regime, estimator, scope and figure). Each entry is a
    dict of sums: ``n`` intervals, ``hit`` covering ones, ``width`` their half-widths, ``withheld``;
    ``max_*`` entries merge by maximum."""

    def __init__(self) -> None:
        self.sums: dict[tuple, dict[str, float]] = {}

    def add(self, key: tuple, **values: float) -> None:
        row = self.sums.setdefault(key, {})
        for name, value in values.items():
            row[name] = max(row.get(name, -math.inf), value) if name.startswith("max_") else row.get(name, 0.0) + value

    def merge(self, other: Tally) -> Tally:
        for key, row in other.sums.items():
            self.add(key, **row)
        return self

    def get(self, key: tuple, name: str, default: float = 0.0) -> float:
        return self.sums.get(key, {}).get(name, default)

    def interval(
        self, key: tuple, low: float | None, high: float | None, truth: float, shown: bool = True, census: bool = False
    ) -> None:
        """One interval: withheld when not ``shown`` or without ends; a ``census`` (every row of its
        scope reviewed: it is exact, and covers by construction) is counted apart; an end that is
        not a number is ``nan`` (and a miss); else whether it covers ``truth``."""
        if not shown or low is None or high is None:
            self.add(key, withheld=1.0, seen=1.0)
        elif not (math.isfinite(low) and math.isfinite(high)):
            self.add(key, nan=1.0, n=1.0, seen=1.0)
        elif census:
            self.add(key, census=1.0, seen=1.0)
        else:
            self.add(
                key, n=1.0, seen=1.0, hit=float(low - TOLERANCE <= truth <= high + TOLERANCE), width=(high - low) / 2
            )

    def coverage(self, key: tuple) -> float | None:
        n = self.get(key, "n")
        return self.get(key, "hit") / n if n else None

    def half_width(self, key: tuple) -> float | None:
        n = self.get(key, "n")
        return self.get(key, "width") / n if n else None

    def withheld(self, key: tuple) -> float | None:
        seen = self.get(key, "seen")
        return self.get(key, "withheld") / seen if seen else None


def shown(est: object) -> bool:
    """Whether the tool shows the estimate's interval (False: "too few reviewed rows")."""
    return bool(getattr(est, "shown", True))


def _estimates(
    tally: Tally, regime: str, name: str, run: Run, done: np.ndarray, combined: object, domains: Iterable[object]
) -> None:
    """Coverage of an estimate's combined and per-domain intervals (keys ``(regime, name, scope)``,
    scope ``combined``, ``domains`` pooled, or ``domain <name>``); ``done``: the reviewed rows."""
    tally.interval(
        (regime, name, "combined"), combined.ci_low, combined.ci_high, run.accuracy(), shown(combined), bool(done.all())
    )
    left = np.bincount(run.domain[~done], minlength=len(DOMAINS))  # unreviewed rows per domain
    for est in domains:
        truth, visible = run.accuracy(est.scope), shown(est)
        census = bool(left[DOMAINS.index(est.scope)] == 0)
        tally.interval((regime, name, "domains"), est.ci_low, est.ci_high, truth, visible, census)
        tally.interval((regime, name, f"domain {est.scope}"), est.ci_low, est.ci_high, truth, visible, census)


def _ratio(tally: Tally, regime: str, name: str, judged: object, human: object) -> None:
    """Paired half-widths (keys ``(regime, name, "ratio", scope)``) where both intervals are shown."""
    if shown(judged.combined) and shown(human.combined):
        tally.add(
            (regime, name, "ratio", "combined"),
            judge=judged.combined.half_width,
            human=human.combined.half_width,
            n=1.0,
        )
    by_scope = {e.scope: e for e in human.domains}
    for est in judged.domains:
        other = by_scope.get(est.scope)
        if other is not None and shown(est) and shown(other):
            tally.add((regime, name, "ratio", "domains"), judge=est.half_width, human=other.half_width, n=1.0)


def _same(tally: Tally, regime: str, judged: object, human: object) -> None:
    """Whether an estimate is exactly the human-only one (estimate and both ends, combined and domains)."""
    pairs = [(judged.combined, human.combined), *zip(judged.domains, human.domains)]
    diff = max(abs(getattr(a, f) - getattr(b, f)) for a, b in pairs for f in ("estimate", "ci_low", "ci_high"))
    scopes = [a.scope for a, _ in pairs] == [b.scope for _, b in pairs]
    tally.add((regime, EXACT_JUDGE, "same"), runs=1.0, same=float(scopes and diff <= 1e-9), max_diff=diff)


FIGURES = ("precision", "recall", "specificity", "corrected")


def _metric_truths(passes: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    tp = float(np.sum(passes & truth))
    return {
        "precision": tp / max(1, passes.sum()),
        "recall": tp / max(1, truth.sum()),
        "specificity": float(np.sum(~passes & ~truth)) / max(1, (~truth).sum()),
        "corrected": float(truth.mean()),
    }


def _metrics(tally: Tally, regime: str, run: Run, done: np.ndarray) -> None:
    """Coverage of metric_quality's intervals for the exact metric and the 90% judge (keys
    ``(regime, "metric", metric, figure)``; the judge's figures over the rows it labelled)."""
    label = run.labels[PLAN_JUDGE]
    found = {q.metric: q for q in metric_quality(run.sample(done, label))}
    labelled = ~np.isnan(label)
    exact = np.isin(run.bucket, [BOTH_PASS, EXACT_ONLY])
    for metric, passes, rows in (("exact", exact, np.ones(run.rows, dtype=bool)), ("judge", label > 0.5, labelled)):
        truth = _metric_truths(passes[rows], run.truth[rows])
        for figure in FIGURES:
            ratio = getattr(found[metric], figure)
            tally.interval(
                (regime, "metric", metric, figure), ratio.ci_low, ratio.ci_high, truth[figure], census=bool(done.all())
            )


# --------------------------------------------------------------------------- one run


def accuracy_run(rng: np.random.Generator, rows: int, tally: Tally, reviews: Iterable[int] | None = None) -> None:
    """One run of ``rows`` rows, reviewed at every size of ``reviews`` (default :func:`reviews_for`):
    the human-only and every judge's estimate, metric quality."""
    run = make_run(rng, rows)
    truth = run.truth.astype(float)
    for total in reviews_for(rows) if reviews is None else reviews:
        regime = accuracy_regime(rows, total)
        done = run.first(proportional(run.size, total))
        strata = run.reviewed(done)
        human = estimate_accuracy(strata)
        _estimates(tally, regime, HUMAN, run, done, human.combined, human.domains)
        for name, label in run.labels.items():
            judged = judge_assisted_arrays(strata, truth, label)
            _estimates(tally, regime, name, run, done, judged.combined, judged.domains)
            _ratio(tally, regime, name, judged, human)
            if name == EXACT_JUDGE:
                _same(tally, regime, judged, human)
        _metrics(tally, regime, run, done)
        tally.add((regime, "runs"), n=1.0)


def _plan_first(run: Run, label: np.ndarray, plan_table: pl.DataFrame) -> np.ndarray:
    """Per row, whether it is among the first ``planned`` rows of its stratum in the review order:
    a bucket x domain cell, or a bucket x judge label x domain part when the plan has a ``judge``
    column (a prefix of a cell's order is a prefix of each part's)."""
    if "judge" not in plan_table.columns:
        return run.first(_cells_planned(plan_table))
    group = np.where(np.isnan(label), 2, np.where(label > 0.5, 0, 1))
    key = (run.bucket * 3 + group) * len(DOMAINS) + run.domain
    names = {"correct": 0, "wrong": 1, "not judged": 2}
    planned = np.zeros(B * 3 * len(DOMAINS), dtype=np.int64)
    for bucket, judge, domain, n in plan_table.select("bucket", "judge", "Domain", "planned").rows():
        if judge not in names:
            raise ValueError(f"the judge's plan has a part {judge!r} this simulation cannot draw from")
        planned[(BUCKETS.index(bucket) * 3 + names[judge]) * len(DOMAINS) + DOMAINS.index(domain)] = n
    order = np.lexsort((run.position, key))
    ranked = key[order]
    place = np.arange(len(order)) - np.searchsorted(ranked, ranked)
    inside = np.empty(len(order), dtype=bool)
    inside[order] = place < planned[ranked]
    return inside


def _cells_planned(plan_table: pl.DataFrame) -> np.ndarray:
    """Per cell (B x D), the rows a bucket x domain plan asks for in all."""
    n = np.zeros((B, len(DOMAINS)), dtype=np.int64)
    for bucket, domain, planned in plan_table.select("bucket", "Domain", "planned").rows():
        n[BUCKETS.index(bucket), DOMAINS.index(domain)] = planned
    return n


def _impossible(plan_table: pl.DataFrame) -> float:
    """1 when a plan asks for fewer rows than a stratum has reviewed or more than it holds (a NaN cast
    to an integer, say), else 0."""
    planned, size, reviewed = (plan_table[c].to_numpy() for c in ("planned", "size", "reviewed"))
    return float(bool(np.any(planned < reviewed) or np.any(planned > size)))


def plan_run(
    rng: np.random.Generator,
    rows: int,
    tally: Tally,
    pilots: Iterable[int] = PILOTS,
    targets: Iterable[float] = TARGETS,
) -> None:
    """One run of ``rows`` rows per pilot size: the pilot, then per target the human-only plan
    (its final estimate) and the 90% judge's plan (its judge-assisted estimate). Keys
    ``(regime, HUMAN or PLAN_JUDGE, ...)`` as :func:`accuracy_run`'s, and ``(regime, name, "plan")``
    with ``n``, ``within`` (final half-width at or under the target), ``rows`` (reviewed in all),
    ``planned`` (the plan's count) and ``impossible`` (:func:`_impossible`)."""
    run = make_run(rng, rows)
    truth, label = run.truth.astype(float), run.labels[PLAN_JUDGE]
    for per_bucket in pilots:
        start = pilot(run.size, per_bucket)
        first = run.reviewed(run.first(start))
        for target in targets:
            regime = plan_regime(rows, per_bucket, target)
            plan = plan_review(first, target)
            done = run.first(np.maximum(_cells_planned(plan.strata), start))
            human = estimate_accuracy(run.reviewed(done))
            judged_plan = plan_arrays(first, truth, label, None, target).plan
            done_judged = _plan_first(run, label, judged_plan.strata) | run.first(start)
            judged = judge_assisted_arrays(run.reviewed(done_judged), truth, label)
            for name, (combined, domains), reviewed, chosen in (
                (HUMAN, (human.combined, human.domains), done, plan),
                (PLAN_JUDGE, (judged.combined, judged.domains), done_judged, judged_plan),
            ):
                _estimates(tally, regime, name, run, reviewed, combined, domains)
                tally.add(
                    (regime, name, "plan"),
                    n=1.0,
                    within=float(combined.half_width <= target + TOLERANCE),
                    rows=float(reviewed.sum()),
                    planned=float(chosen.planned),
                    impossible=_impossible(chosen.strata),
                )
            tally.add((regime, "runs"), n=1.0)
