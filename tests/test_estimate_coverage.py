"""Every interval the estimate prints is a claim: its coverage, by simulation with a known truth,
in the regimes users meet (:mod:`estimate_sim`), must be about 95% for a nominal 95% (0.94 to
0.97: narrower misleads, wider wastes reviews). The table is printed (``pytest -s``) and is in
each assertion's message. The regime "planned +-2 after a +-5 pilot" runs the real planner twice.
"""

from __future__ import annotations

import numpy as np
import pytest
from estimate_sim import regimes

from scoring.estimate.estimator import share_estimate

RUNS = 500  #: simulated runs per regime: a coverage of 0.95 is then known to about +-0.01 (one sd)
#: 0.94 to 0.97 as the issue asks, widened by half a Monte Carlo sd each side: the seeds are fixed,
#: so a figure just outside it on one seed is noise, one well outside is a broken interval.
LOW, HIGH = 0.935, 0.975


def _coverage(name: str, seed: int) -> dict[str, float]:
    make = regimes()[name]
    rng = np.random.default_rng(seed)
    hit = width = 0.0
    d_hit = d_width = d_count = 0.0
    errors = []
    for _ in range(RUNS):
        run = make(rng)
        strata = run.strata()
        est = share_estimate(strata, strata.correct)
        truth = run.truth()
        hit += est.ci_low - 1e-12 <= truth <= est.ci_high + 1e-12
        width += est.half_width
        errors.append(est.estimate - truth)
        for d in range(run.domains):
            if run.size[:, d].sum() == 0:
                continue
            dom = share_estimate(strata, strata.correct, run.domain_mask(d), f"d{d}")
            d_hit += dom.ci_low - 1e-12 <= run.truth(d) <= dom.ci_high + 1e-12
            d_width += dom.half_width
            d_count += 1
    return {
        "combined": hit / RUNS,
        "half_width": width / RUNS,
        "sd": float(np.std(errors)),
        "domains": d_hit / d_count,
        "domain_half_width": d_width / d_count,
    }


@pytest.mark.parametrize("name", list(regimes()))
def test_the_accuracy_interval_covers_about_95_percent(name: str) -> None:
    got = _coverage(name, seed=sum(map(ord, name)))
    line = (
        f"{name}: combined coverage {got['combined']:.3f} (half-width {100 * got['half_width']:.2f} points, "
        f"actual error sd {100 * got['sd']:.2f}); per-domain coverage {got['domains']:.3f} "
        f"(half-width {100 * got['domain_half_width']:.2f})"
    )
    print(line)
    assert LOW <= got["combined"] <= HIGH, line
    assert LOW <= got["domains"] <= HIGH, line
    # Calibrated, not merely wide: the half-width is about z times the actual error's spread.
    assert got["half_width"] <= 1.25 * 1.96 * got["sd"], line
