"""The head-to-head on the estimated truth and its decision plan, simulated with a known truth
(issue 37 §3; :mod:`tests.decision_sim` describes the world): over more runs than
``tests/test_decision_sim.py`` can afford in ``make test``, three tables and their GOAL lines::

    .venv/bin/python tests/bench_decision.py [--runs 1000] [--power-runs 600] [--seed 37]

1. Coverage of the 95% interval of the difference A - B (its truth: the models' accuracy on
   questions like these) at 100-2,000 shared questions and 20-300 reviews per run, overall and in
   a language holding 5% of the questions (Odia), with no difference and with 10 points; beside
   it the share of runs with a figure (a scope below the evidence minimums shows none) and the
   mean half-width, and the simulation's own 95% error on the coverage (``±sim``). Goal: every
   regime with at least 100 figures between 0.94 and 0.97 (20 reviews of 100 questions show no
   figure at all: the single-run evidence rule withholds it). 1,000 runs per regime: at 400 the
   simulation's error on a coverage near 0.95 is ±0.021, so the lowest of fourteen regimes fell
   below 0.94 by chance alone (500 shared, 150 reviews: 0.920 at seed 43, 0.941-0.974 at eleven
   other seeds, 0.953 over the twelve).
2. False "ahead" across the adjusted family: three equal models, every pair compared, Holm over
   the three; the share of draws where any pair says "ahead". Goal: at most 5%.
3. Achieved power: a pilot of reviews per run, then the decision plan's rows for a 10-point
   difference at 80% power (overall and in Hindi), then the head-to-head: how often it says "A is
   ahead". Goal: within 5 points of the plan's expected power.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from decision_sim import (  # noqa: E402
    Regime,
    achieved_power,
    coverage,
    family_false_ahead,
    pair_for,
    pair_in_every_language,
)

REGIMES = [
    Regime(f"{q} shared, {n} reviews{', Odia (5%)' if scope != 'combined' else ''}", q, n, scope, points)
    for q, n, scope in (
        (100, 20, "combined"),
        (100, 60, "combined"),
        (500, 50, "combined"),
        (500, 150, "combined"),
        (2000, 300, "combined"),
        (2000, 20, "Odia"),
        (2000, 60, "Odia"),
    )
    for points in (0.0, 0.10)
]
#: Figures a regime needs for its coverage to count toward the goals (below: printed, not counted).
MIN_SHOWN = 100
POWER = [("overall, 1,000 shared", 1000, 40, "combined"), ("Hindi, 2,000 shared (30%)", 2000, 30, "Hindi")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--power-runs", type=int, default=600)
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"1. Coverage of the difference's 95% interval ({args.runs} runs per regime)")
    print(f"{'regime':<34} {'truth':>7} {'coverage':>9} {'±sim':>6} {'shown':>6} {'±half':>7} {'ahead':>6}")
    found = []
    for i, regime in enumerate(REGIMES):
        r = coverage(regime, args.runs, args.seed + i)
        if r["shown"] * args.runs >= MIN_SHOWN:  # a coverage on a handful of figures says nothing
            found.append(r["coverage"])
        figures = max(r["shown"] * args.runs, 1.0)
        noise = 1.96 * math.sqrt(max(r["coverage"] * (1 - r["coverage"]), 0.0) / figures) if figures > 1 else 0.0
        print(
            f"{regime.name:<34} {100 * r['truth']:>6.1f}  {r['coverage']:>8.3f} {noise:>6.3f} {r['shown']:>6.2f} "
            f"{100 * r['half_width']:>6.1f} {r['ahead']:>6.2f}"
        )
    print(f"\n2. False 'ahead', three equal models, Holm over 3 pairs ({args.runs} runs)")
    family, single = family_false_ahead(300, 80, 3, args.runs, args.seed + 100)
    print(f"300 shared, 80 reviews per run: any pair ahead {family:.3f}; a single pair unadjusted {single:.3f}")
    print(f"\n3. Achieved power of the decision plan, 10 points at 80% ({args.power_runs} runs)")
    print(f"{'regime':<28} {'pilot':>5} {'planned reviews':>15} {'expected':>9} {'achieved':>9} {'reachable':>9}")
    gaps = []
    for j, (name, questions, pilot, scope) in enumerate(POWER):
        pair = pair_in_every_language(0.10) if scope != "combined" else pair_for(0.10)
        p = achieved_power(pair, questions, pilot, 0.10, scope, args.power_runs, args.seed + 200 + j)
        gaps.append(abs(p["achieved"] - p["expected"]))
        print(
            f"{name:<28} {pilot:>5} {p['reviews']:>15.0f} {p['expected']:>9.3f} {p['achieved']:>9.3f} "
            f"{p['reachable']:>9.2f}"
        )
    print(f"(seed {args.seed}, in {time.perf_counter() - started:.0f} s)")
    ok = [
        goal("head-to-head coverage, lowest regime", min(found), ">=", 0.94),
        goal("head-to-head coverage, highest regime", max(found), "<=", 0.97),
        goal("false ahead across Holm's family of 3", family, "<=", 0.05),
        goal("decision plan: achieved minus planned power", max(gaps), "<=", 0.05),
    ]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
