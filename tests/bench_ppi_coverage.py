"""The judge-assisted interval's coverage over more runs than ``tests/test_ppi.py`` can afford in
``make test`` (200 per regime, where a figure moves by about 0.015): the same simulation (1,000 rows
reviewed in a random order out of 20,000, six judge regimes) with its own seed, the human-only
estimate on the same runs beside it, and the lowest per-domain coverage, as GOAL lines::

    .venv/bin/python tests/bench_ppi_coverage.py [--runs 1000] [--seed 99]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from ppi_sim import Population  # noqa: E402
from test_ppi import REVIEWED, _simulate, _table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args(argv)
    pop = Population()
    started = time.perf_counter()
    rows = {
        name: _simulate(pop, judge, np.random.default_rng(args.seed), REVIEWED, args.runs)
        for name, judge in pop.regimes().items()
    }
    print(_table(rows, ("judge-assisted", "human-only")))
    print(f"({args.runs} runs x {len(rows)} regimes, seed {args.seed}, in {time.perf_counter() - started:.0f} s)")
    combined = [r["ppi"][0] for r in rows.values()]
    ok = [
        goal("ppi coverage, random sample, lowest regime", min(combined), ">=", 0.94),
        goal("ppi coverage, random sample, highest regime", max(combined), "<=", 0.97),
        goal("ppi coverage, random sample, lowest domain", min(r["domain"][0] for r in rows.values()), ">=", 0.94),
    ]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
