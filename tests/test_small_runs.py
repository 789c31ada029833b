"""Small runs (issue: the regimes teams really meet), with fewer runs than ``tests/bench_small_runs.py``
can spend: the same simulation (``tests/small_runs_sim.py``) and the same checks, on five of its
regimes spanning 700 to 5,000 rows, 60 to 150 reviews and two pilot-then-plan schemes (about a
minute; the bench runs all 24 regimes at 500 runs, 300 rows and 20-300 reviews among them).

Per regime (``pytest -s`` prints its tables and every check):

- every interval's coverage (combined and per domain, human-only and each of seven judges;
  precision, recall, specificity and corrected accuracy of the exact metric and the 90% judge; the
  final estimate after a plan) between 0.94 and 0.97, widened by :data:`K` Monte Carlo sd of that
  figure's own count of shown intervals each side: [0.890, 1.020] for a combined figure over
  :data:`RUNS` runs, about [0.92, 0.99] for the pooled domains. A figure with fewer than
  :data:`MIN_COUNT` shown intervals is not checked; a census (every row of a scope reviewed) is
  exact and not counted. A perfect 95% interval fails a given figure about once in 900 (the figures
  of a regime share their runs); a coverage of 0.85 fails, and so does a pooled domain figure of
  1.0 (intervals so wide they always cover). A combined figure cannot fail high over 120 runs (1.0
  is within 2.5 sd of 0.97): the bench checks that side.
- exact, with no widening: each judge's mean half-width at most 1.02 times the human-only one on
  the same rows; the judge that says what the exact metric says giving exactly the human-only
  estimate; no interval with an end that is not a number; no plan asking fewer rows of a stratum
  than it has reviewed or more than it holds.
- at least 90% of plans ending at or under the asked half-width, less 2 Monte Carlo sd (0.851).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from bench_small_runs import band, checks, tables
from small_runs_sim import HUMAN, PLAN_JUDGE, Tally, accuracy_regime, accuracy_run, judges, plan_regime, plan_run

RUNS = 120  #: per regime; a coverage of 0.95 is then known to about +-0.020 (one sd)
K = 2.5  #: Monte Carlo sd each side of 0.94-0.97 a coverage figure may stray
MIN_COUNT = 30  #: shown intervals a coverage figure needs to be checked
ACCURACY = ((700, 60), (2000, 150), (5000, 100))
PLANS = ((700, 10, 0.05), (5000, 30, 0.03))
REGIMES = {
    **{accuracy_regime(rows, n): ("accuracy", rows, n) for rows, n in ACCURACY},
    **{plan_regime(rows, pilot, target): ("plan", rows, pilot, target) for rows, pilot, target in PLANS},
}


@pytest.mark.parametrize("name", list(REGIMES))
def test_every_interval_of_a_small_run_covers_and_the_judge_costs_no_width(name: str) -> None:
    kind, rows, *rest = REGIMES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    tally = Tally()
    started = time.perf_counter()
    for _ in range(RUNS):
        if kind == "accuracy":
            accuracy_run(rng, rows, tally, reviews=rest)
        else:
            plan_run(rng, rows, tally, pilots=rest[:1], targets=rest[1:])
    found = checks(tally, [name], lambda n: band(n, K), MIN_COUNT, within_slack=2.0)
    low, high = band(RUNS, K)
    table = tables(tally, [name] if kind == "accuracy" else [], [name] if kind == "plan" else [], low, high)
    print(
        f"\n{table}\n" + "\n".join(check.line() for check in found) + f"\n({RUNS} runs in "
        f"{time.perf_counter() - started:.1f} s; * marks a coverage outside [{low:.3f}, {high:.3f}])"
    )
    # every estimator gave its combined figure in every run (shown or withheld), and the checks ran
    estimators = (HUMAN, PLAN_JUDGE) if kind == "plan" else (HUMAN, *judges())
    assert all(tally.get((name, who, "combined"), "seen") == RUNS for who in estimators), table
    assert sum(check.family.startswith("plans ending") for check in found) == (2 if kind == "plan" else 0), table
    short = [check.line() for check in found if not check.ok]
    assert not short, "\n".join(short) + "\n\n" + table
