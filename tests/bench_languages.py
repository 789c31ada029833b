"""Coverage of the per-language estimate (issue 29 §2) in every regime of ``tests/language_sim.py``:
runs of 300 to 5,000 rows, 40 to 300 reviews allocated over bucket x domain, four languages, the
smallest at 1%, 3% or 5% of rows. Prints per regime and language the coverage of the shown 95%
intervals, the share withheld ("review k more") and the mean half-width, then GOAL lines: the
pooled coverage and the lowest per-language coverage where at least 100 intervals were shown.

    .venv/bin/python tests/bench_languages.py [--runs 500]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from language_sim import LANGUAGES, Tally, regimes, run_regime  # noqa: E402


def _one(args: tuple[int, int, float, int]) -> tuple[tuple[int, int, float], Tally]:
    rows, reviews, small, runs = args
    return (rows, reviews, small), run_regime(rows, reviews, small, runs, seed=rows * 7 + reviews + round(1000 * small))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()
    start = time.perf_counter()
    shown = covered = 0
    lowest, lowest_where = 1.0, ""
    with ProcessPoolExecutor(2) as pool:
        for (rows, reviews, small), tally in pool.map(_one, [(*r, args.runs) for r in regimes()]):
            parts = []
            for lang in LANGUAGES:
                n = tally.shown.get(lang, 0)
                parts.append(
                    f"{lang} {tally.coverage(lang):.3f} (n {n}, withheld {tally.withheld_share(lang):.0%}, "
                    f"±{100 * tally.mean_half_width(lang):.1f})"
                )
                if n >= 100 and tally.coverage(lang) < lowest:
                    lowest, lowest_where = tally.coverage(lang), f"{lang}, {rows} rows, {reviews} reviews"
            shown += sum(tally.shown.values())
            covered += sum(tally.covered.values())
            print(f"{rows:>5,} rows {reviews:>3} reviews small {small:.0%}: " + "; ".join(parts), flush=True)
    print(f"lowest per-language coverage: {lowest:.3f} ({lowest_where}); {time.perf_counter() - start:.0f} s")
    ok = goal("per-language 95% intervals, pooled coverage", shown and covered / shown, ">=", 0.94)
    ok &= goal("per-language 95% intervals, pooled coverage (not wasteful)", shown and covered / shown, "<=", 0.985)
    ok &= goal("per-language 95% intervals, lowest coverage (n >= 100)", lowest, ">=", 0.92)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
