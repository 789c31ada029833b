"""Can this judge be trusted (issue 18, section 5): the judge against the humans on the random
sample, the kappa interval's coverage with a known truth, several configurations compared, and the
per-run choice the estimate uses. Worked numbers from the notes and from a reference (statpsych's
``ci.kappa``, Fleiss and Paik 2003).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ingest, review, store
from scoring.core.report import COMBINED
from scoring.core.stats import cohen_kappa, mcnemar_exact, newcombe_paired_interval
from scoring.estimate import make_sample
from scoring.estimate.judge_trust import (
    OUTCOMES,
    compare_configs,
    confusion_frame,
    disagreements,
    kappa_interval,
    kappa_se,
    outcome,
    trust,
    trust_by,
    trust_frame,
    trust_rows,
)
from scoring.estimate.stored_run import stored_final
from scoring.store import judge_cache, judge_choice
from scoring.store.judge_choice import ANY_CONFIG, JudgeConfig

Z = 1.959963984540054


# --------------------------------------------------------------------------- worked numbers


def test_kappa_and_its_standard_error_match_the_notes_and_a_reference() -> None:
    # The notes: [[80,10],[5,105]] -> kappa 0.8477; [[190,5],[5,0]] -> 95% raw but kappa -0.026.
    rows = _rows(
        [(True, "CORRECT")] * 80 + [(True, "INCORRECT")] * 10 + [(False, "CORRECT")] * 5 + [(False, "INCORRECT")] * 105
    )
    t = trust(rows)
    assert t.kappa == pytest.approx(0.8477, abs=5e-5) and t.agreement == pytest.approx(185 / 200)
    skewed = trust(_rows([(True, "CORRECT")] * 190 + [(True, "INCORRECT")] * 5 + [(False, "CORRECT")] * 5))
    assert skewed.agreement == pytest.approx(0.95) and skewed.kappa == pytest.approx(-0.0256, abs=5e-4)
    # statpsych ci.kappa(.05, 31, 12, 4, 58) (Fleiss and Paik 2003): kappa 0.6756757, SE 0.07344761,
    # Wald interval [0.5317210, 0.8196303].
    table = [[58, 4], [12, 31]]
    se = kappa_se(table)
    assert se == pytest.approx(0.07344761, abs=1e-8)
    kappa = 0.6756757
    assert (kappa - Z * se, kappa + Z * se) == pytest.approx((0.5317210, 0.8196303), abs=1e-7)
    assert kappa_se([[5, 0], [0, 0]]) is None  # one label only: undefined


def test_the_kappa_interval_is_the_wald_interval_with_many_rows_and_defined_where_kappa_is_not() -> None:
    # With 100x the rows the posterior is normal: its central 96% is the Wald interval at z = 2.0537
    # (the 98% normal quantile) to 3 decimals.
    big = [[5800, 400], [1200, 3100]]
    low, high = kappa_interval(big)
    se = kappa_se(big)
    assert se == pytest.approx(0.07344761 / 10, rel=1e-6)
    assert (low, high) == pytest.approx((0.6756757 - 2.053749 * se, 0.6756757 + 2.053749 * se), abs=1e-3)
    # Deterministic (seeded by the counts) and pinned: the page shows the same numbers every time.
    assert kappa_interval([[58, 4], [12, 31]]) == kappa_interval([[58, 4], [12, 31]])
    assert kappa_interval([[58, 4], [12, 31]]) == kappa_interval([[31, 12], [4, 58]])  # transposed, relabelled
    assert kappa_interval([[58, 4], [12, 31]]) == pytest.approx((0.4942, 0.7982), abs=1e-4)
    # Every row correct for both: kappa undefined, the interval wide but there.
    everyone = kappa_interval([[20, 0], [0, 0]])
    assert everyone is not None and everyone[0] < 0.05 and everyone[1] > 0.95
    assert kappa_interval([[0, 0], [0, 0]]) is None


def test_when_every_row_agrees_kappa_is_1_and_its_interval_reaches_1(capsys) -> None:
    """Judge and reviewers agree on 30 correct and 10 wrong rows: kappa 1.000. The posterior's
    central 96% alone is [0.760, 0.999] (no draw reaches 1), a point outside its own interval; the
    interval is widened to reach it, its lower end unchanged."""
    t = trust(_rows([(True, "CORRECT")] * 30 + [(False, "INCORRECT")] * 10))
    assert t.table == [[30, 0], [0, 10]] and t.kappa == 1.0 and t.agreement == 1.0
    low, high = t.kappa_ci
    assert (f"{t.kappa:.3f}", f"{low:.3f}", f"{high:.3f}") == ("1.000", "0.760", "1.000")
    posterior = kappa_interval([[30, 0], [0, 10]], tail=0.02)
    assert posterior == (low, 1.0)
    row = trust_frame([t]).row(0, named=True)
    assert row["kappa_low"] <= row["kappa"] <= row["kappa_high"] == 1.0
    # The other edge: the raters disagree on every row, kappa -1, the interval reaches -1.
    opposite = kappa_interval([[0, 3], [3, 0]])
    assert opposite is not None and opposite[0] == -1.0 == cohen_kappa([[0, 3], [3, 0]]) and opposite[1] < 0
    with capsys.disabled():
        print(f"\n30 + 10 agreeing rows: kappa {t.kappa:.3f} [{low:.3f}, {high:.3f}]")


#: 2x2 tables of up to 60 rows per cell, empty cells often (the edges where the point can fall outside).
_CELL = st.one_of(st.just(0), st.integers(0, 3), st.integers(0, 60))


@settings(max_examples=400, deadline=None)
@given(st.tuples(_CELL, _CELL, _CELL, _CELL).filter(lambda cells: sum(cells) > 0))
def test_every_kappa_lies_inside_its_interval(cells: tuple[int, int, int, int]) -> None:
    """Whatever the table, the sample kappa lies inside its interval, also as printed (3 decimals)."""
    a, b, c, d = cells
    table = [[a, b], [c, d]]
    low, high = kappa_interval(table, draws=2000)
    assert -1 <= low <= high <= 1 and math.isfinite(low) and math.isfinite(high)
    kappa = cohen_kappa(table)
    if kappa is not None:
        assert low <= kappa <= high
        assert round(low, 3) <= round(kappa, 3) <= round(high, 3)


def test_the_paired_statistics_of_two_configurations_are_the_compare_pages() -> None:
    """Config A agrees with the human on 12 rows where B does not, B on 3 where A does not: McNemar
    p = 0.0352 (the notes), Newcombe's interval as scoring.core.stats gives it."""
    truth = [True] * 60 + [False] * 40
    a = ["CORRECT"] * 60 + ["INCORRECT"] * 40  # right on every row
    b = list(a)
    for i in range(12):
        b[i] = "INCORRECT"  # B wrong where A right
    for i in range(60, 63):
        a[i] = "CORRECT"  # A wrong where B right
    sample = make_sample(["both_pass"] * 100, ["Art"] * 100, truth)
    keys = sample["item_key"].to_list()
    rows = {name: trust_rows(sample, dict(zip(keys, labels))) for name, labels in (("A", a), ("B", b))}
    (pair,) = compare_configs(rows)
    assert (pair.n, pair.both, pair.only_a, pair.only_b, pair.neither) == (100, 85, 12, 3, 0)
    assert pair.p_value == pytest.approx(0.0352, abs=5e-5) == mcnemar_exact(12, 3)
    assert (pair.ci_low, pair.ci_high) == newcombe_paired_interval(85, 12, 3, 0)
    assert pair.difference == pytest.approx(0.09) and pair.p_holm is None
    assert pair.agreement_a == pytest.approx(0.97) and pair.agreement_b == pytest.approx(0.88)
    # A third configuration: Holm across the three pairs; rows a config did not judge are left out.
    c = [None] * 50 + a[50:]
    rows["C"] = trust_rows(sample, {k: v for k, v in zip(keys, c) if v is not None})
    pairs = compare_configs(rows)
    assert [(p.config_a, p.config_b) for p in pairs] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pairs[1].n == 50 and all(p.p_holm is not None and p.p_holm >= p.p_value for p in pairs)


# --------------------------------------------------------------------------- the confusion matrix


def _rows(pairs: list[tuple[bool, str | None]], **columns: list) -> pl.DataFrame:
    n = len(pairs)
    sample = make_sample(
        columns.pop("bucket", ["overlap_only"] * n),
        columns.pop("Domain", ["Art"] * n),
        [h for h, _ in pairs],
        **columns,
    )
    labels = {k: lab for k, (_, lab) in zip(sample["item_key"].to_list(), pairs) if lab is not None}
    return trust_rows(sample, labels)


def test_the_confusion_matrix_counts_unparsed_and_unjudged_rows_apart_and_only_the_random_sample() -> None:
    pairs = (
        [(True, "CORRECT")] * 6
        + [(True, "INCORRECT")] * 2
        + [(False, "NOT_ATTEMPTED")] * 3
        + [(False, "CORRECT")] * 1
        + [(True, "UNPARSED")] * 2
        + [(False, "ERROR")]
        + [(True, None)] * 2
    )
    n = len(pairs)
    by_hand = [False] * n + [True] * 3  # three rows opened by hand: not in the sample
    sample = make_sample(
        ["overlap_only"] * (n + 3),
        ["Art"] * (n // 2) + ["Food"] * (n - n // 2) + ["Art"] * 3,
        [h for h, _ in pairs] + [False] * 3,
        by_hand=by_hand,
    )
    keys = sample["item_key"].to_list()
    labels = {k: lab for k, (_, lab) in zip(keys, pairs + [(False, "CORRECT")] * 3) if lab is not None}
    rows = trust_rows(sample, labels)
    assert rows.height == n  # the by-hand rows are not in it
    t = trust(rows)
    assert t.counts == ((6, 2, 2, 2), (1, 3, 0, 1))
    assert t.table == [[6, 2], [1, 3]] and t.judged == 12 and t.reviewed == n
    assert t.agreement == pytest.approx(9 / 12)
    frame = confusion_frame(t)
    assert frame.columns == ["human", *[f"judge {o}" for o in OUTCOMES], "total"]
    assert frame.row(2) == ("total", 7, 5, 2, 3, n)
    per_domain = trust_frame(trust_by(rows, "Domain"))
    assert per_domain["scope"].to_list() == ["Art", "Food", COMBINED]
    assert per_domain["reviewed"].to_list() == [n // 2, n - n // 2, n]
    combined = per_domain.row(2, named=True)
    assert (combined["unparsed"], combined["not_judged"], combined["agree"]) == (2, 3, 9)
    assert (combined["judge_correct_human_wrong"], combined["judge_wrong_human_correct"]) == (1, 2)
    assert combined["kappa_low"] < combined["kappa"] < combined["kappa_high"]
    # The rows where they disagree, 1-based as ?row= takes them; unparsed/unjudged rows are not.
    dis = disagreements(rows)
    assert dis["row"].to_list() == [7, 8, 12] and dis["human"].to_list() == ["correct", "correct", "wrong"]
    assert dis["judge_label"].to_list() == ["INCORRECT", "INCORRECT", "CORRECT"]
    assert [outcome(x) for x in ("correct", " NOT_ATTEMPTED", "UNPARSED", "ERROR", None)] == [
        "correct",
        "wrong",
        "unparsed",
        "not judged",
        "not judged",
    ]


def test_trust_with_no_reviewed_row_says_nothing_rather_than_zero() -> None:
    t = trust(_rows([]))
    assert t.reviewed == 0 and t.kappa is None and t.kappa_ci is None and t.agreement is None
    row = trust_frame([t]).row(0, named=True)
    assert row["agreement"] is None and row["kappa_low"] is None


# --------------------------------------------------------------------------- coverage by simulation


def _cells(prevalence: float, sensitivity: float, specificity: float) -> np.ndarray:
    """Population shares [human correct & judge correct, hc & jw, hw & jc, hw & jw]."""
    p, se, sp = prevalence, sensitivity, specificity
    return np.array([p * se, p * (1 - se), (1 - p) * (1 - sp), (1 - p) * sp])


def _true_kappa(cells: np.ndarray) -> float:
    r1, c1 = cells[0] + cells[1], cells[0] + cells[2]
    p_e = r1 * c1 + (1 - r1) * (1 - c1)
    return float((cells[0] + cells[3] - p_e) / (1 - p_e))


def _coverage(n: int, cells: np.ndarray, reps: int, seed: int) -> tuple[float, float, float]:
    """Share of ``reps`` simulated samples of ``n`` rows whose interval holds the true kappa: the
    posterior interval, the Wald interval (undefined kappa counted as a miss: it prints nothing),
    and the posterior interval's mean width."""
    truth = _true_kappa(cells)
    tables = np.random.default_rng(seed).multinomial(n, cells, size=reps)
    unique, inverse = np.unique(tables, axis=0, return_inverse=True)
    hit, wald_hit, width = np.zeros(len(unique)), np.zeros(len(unique)), np.zeros(len(unique))
    for i, (a, b, c, d) in enumerate(unique):
        table = [[int(a), int(b)], [int(c), int(d)]]
        low, high = kappa_interval(table, draws=DRAWS)
        hit[i], width[i] = low <= truth <= high, high - low
        se, kappa = kappa_se(table), cohen_kappa(table)
        if se is not None and kappa is not None:
            wald_hit[i] = kappa - Z * se <= truth <= kappa + Z * se
    inverse = inverse.ravel()
    return float(hit[inverse].mean()), float(wald_hit[inverse].mean()), float(width[inverse].mean())


#: (rows, share the humans call correct, judge sensitivity, judge specificity): small samples and
#: skewed prevalence, as per-bucket and per-domain samples are.
IN_BAND = [
    (30, 0.5, 0.85, 0.6),
    (30, 0.5, 0.95, 0.9),
    (50, 0.5, 0.95, 0.9),
    (50, 0.8, 0.85, 0.6),
    (50, 0.5, 0.97, 0.4),
    (100, 0.8, 0.95, 0.9),
    (100, 0.9, 0.95, 0.9),
    (100, 0.95, 0.95, 0.9),
    (200, 0.95, 0.97, 0.4),
    (200, 0.9, 0.85, 0.6),
]
#: Outside the band, printed: about one human-wrong row expected, where any honest interval is wide
#: and over-covers.
EDGES = [(20, 0.95, 0.95, 0.9), (30, 0.95, 0.85, 0.6)]
REPS = 2000  # coverage error about 0.005
DRAWS = 4000  # posterior draws per interval here (the page uses more): the simulation's cost


def test_the_kappa_interval_covers_the_true_kappa_about_95_percent_of_the_time(capsys) -> None:
    lines = [
        f"{'rows':>5} {'human correct':>13} {'Se':>5} {'Sp':>5} {'kappa':>6} {'coverage':>9} {'Wald':>6}"
        f" {'mean width':>11}"
    ]
    results = {}
    for i, (n, prev, se, sp) in enumerate(IN_BAND + EDGES):
        cells = _cells(prev, se, sp)
        cov, wald, width = _coverage(n, cells, REPS, seed=1000 + i)
        results[(n, prev, se, sp)] = (cov, wald)
        band = "" if (n, prev, se, sp) in IN_BAND else "   (edge)"
        lines.append(
            f"{n:>5} {prev:>13.2f} {se:>5.2f} {sp:>5.2f} {_true_kappa(cells):>6.3f} {cov:>9.3f} "
            f"{wald:>6.3f} {width:>11.3f}{band}"
        )
    with capsys.disabled():
        print("\nKappa 95% interval coverage (" + f"{REPS} simulated samples each)\n" + "\n".join(lines))
    for regime in IN_BAND:
        assert 0.94 <= results[regime][0] <= 0.97, (regime, results[regime])
    for regime in EDGES:
        assert results[regime][0] >= 0.94, (regime, results[regime])  # wide, never too narrow
    # Why not the textbook interval: at 20-50 rows with skewed prevalence it misses far too often.
    assert min(results[r][1] for r in [(20, 0.95, 0.95, 0.9), (30, 0.95, 0.85, 0.6)]) < 0.8


# --------------------------------------------------------------------------- the stored choice


def _save_label(engine, key: str, model: str, version: str, label: str) -> None:
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"{model}-{version}-{key}",
                "item_key": key,
                "model": model,
                "prompt_version": version,
                "label": label,
            }
        ],
    )


def test_the_choice_is_stored_per_run_and_the_estimate_loads_its_labels(tmp_path: Path) -> None:
    engine = store.make_engine(f"sqlite:///{tmp_path / 'choice.db'}")
    data = b"question,answer,Domain,response\n" + b"".join(f"q{i},a{i},D,r{i}\n".encode() for i in range(4))
    run = ingest.save_run(engine, data, "choice.csv").run
    other = ingest.save_run(engine, data + b"q9,a9,D,r9\n", "other.csv").run
    keys = store.load_scored(engine, run.id)["item_key"].tolist()
    for key in keys:
        _save_label(engine, key, "small", "v1", "INCORRECT")
    _save_label(engine, keys[0], "big", "v2", "CORRECT")  # the latest label of row 0: big's
    assert judge_choice.configs_of(engine, keys) == {JudgeConfig("big", "v2"): 1, JudgeConfig("small", "v1"): 4}

    default = stored_final(engine, run.id)
    assert default.judge_choice is None and default.judge_config == ANY_CONFIG
    assert default.final["judge_label"].tolist() == ["CORRECT", "INCORRECT", "INCORRECT", "INCORRECT"]

    rev = judge_choice.revision(engine)
    with pytest.raises(ValueError, match="reviewer name is required"):
        judge_choice.set_choice(engine, run.id, JudgeConfig("small", "v1"), " ")
    judge_choice.set_choice(engine, run.id, JudgeConfig("small", "v1"), "ana")
    assert judge_choice.revision(engine) > rev
    chosen = stored_final(engine, run.id)
    assert chosen.judge_choice == JudgeConfig("small", "v1") and chosen.judge_config == "small (prompt v1)"
    assert chosen.final["judge_label"].tolist() == ["INCORRECT"] * 4
    assert judge_choice.get_choice(engine, other.id) is None  # per run

    judge_choice.set_choice(engine, run.id, JudgeConfig("big", "v2"), "ana")
    assert stored_final(engine, run.id).final["judge_label"].tolist() == ["CORRECT", "", "", ""]
    judge_choice.set_choice(engine, run.id, None, "ana")  # back to the default
    assert judge_choice.get_choice(engine, run.id) is None and stored_final(engine, run.id).judge_config == ANY_CONFIG
    assert review.revision(engine) == 0  # a choice is not a verdict
    engine.dispose()


def test_a_choice_without_a_model_is_refused(tmp_path: Path) -> None:
    engine = store.make_engine(f"sqlite:///{tmp_path / 'bad.db'}")
    run = ingest.save_run(engine, b"answer,response\na,a\n", "bad.csv").run
    with pytest.raises(ValueError, match="needs a model and a prompt version"):
        judge_choice.set_choice(engine, run.id, JudgeConfig(" ", "v1"), "ana")
    assert judge_choice.get_choice(engine, run.id) is None
    engine.dispose()


def test_kappa_interval_handles_every_small_table() -> None:
    """Every 2x2 table of up to 6 rows gets an interval inside [-1, 1] holding its sample kappa."""
    for n in range(1, 7):
        for a in range(n + 1):
            for b in range(n - a + 1):
                for c in range(n - a - b + 1):
                    table = [[a, b], [c, n - a - b - c]]
                    low, high = kappa_interval(table, draws=2000)
                    assert -1 <= low <= high <= 1 and math.isfinite(low)
                    kappa = cohen_kappa(table)
                    assert kappa is None or low <= kappa <= high
