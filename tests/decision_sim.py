"""Two models on the same questions, in several languages, with a known truth: the head-to-head's
interval, its "ahead" and the decision plan's power, simulated (:mod:`scoring.estimate.difference`,
:mod:`scoring.estimate.decision_plan`). Shared by ``tests/bench_decision.py`` (every regime, 500
runs) and ``tests/test_decision_sim.py`` (a few regimes, fewer runs, in ``make test``).

The questions: families of one question asked in several languages (English always, Hindi,
Tamil and a small language with probabilities chosen so that they hold about 50%, 30%, 15% and 5%
of the questions). A family has a difficulty shared by every language and both models, each
question one of its own, each model a noise of its own on each question (so the two models agree
on most questions but not all); a model's chance on a question is the logistic of its skill, its
language's effect, the domain's, and those three. Each (model, question) has its verdict drawn
once, then its two metrics (exact substring and word overlap) drawn from that verdict (a right
answer passes exact 60% and overlap 75% of the time, together mostly; a wrong one 8% and 15%),
which give its bucket, and a judge's label right 90% of the time.

The truth the interval is about is the *models'* accuracy on questions like these: the expected
share over the question distribution (:func:`truths`, from two million simulated questions),
not the share of these particular rows. "No difference" is exact by symmetry (the two models drawn
from one law).

A review is each run's own random sample: its rows in a random order (its seed), the first ``n``
reviewed (so ``n`` spread over the strata in proportion to their size), or after such a pilot the
decision plan's rows (the first unreviewed rows of each stratum in that order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.core.stats import Z95
from scoring.estimate import make_sample
from scoring.estimate.decision_plan import plan_decision
from scoring.estimate.difference import adjust, estimate_difference
from scoring.estimate.side import FAMILY, QUESTION

LANGUAGES = ("English", "Hindi", "Tamil", "Odia")
#: the chance a family has a question in each language (English always): about 50/30/15/5% of questions
PRESENCE = np.array([1.0, 0.6, 0.3, 0.1])
LANGUAGE_EFFECT = np.array([0.5, 0.0, -0.3, -0.6])
DOMAINS = ("Geography", "History", "Science", "Art")
DOMAIN_SHARES = np.array([0.35, 0.3, 0.2, 0.15])
DOMAIN_EFFECT = np.array([0.3, -0.2, 0.0, -0.3])
FAMILY_SD, QUESTION_SD, MODEL_FAMILY_SD, MODEL_SD = 1.0, 0.6, 0.8, 0.5
EXACT_IF_RIGHT, OVERLAP_IF_RIGHT, EXACT_IF_WRONG, OVERLAP_IF_WRONG = 0.6, 0.75, 0.08, 0.15
JUDGE_ACCURACY = 0.9
TOLERANCE = 1e-12


@dataclass(frozen=True)
class Pair:
    """Two models: skills (log-odds) and per-language offsets of model A (B has none)."""

    skill_a: float = 0.4
    skill_b: float = 0.4
    language_a: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)

    def logits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per language, the two models' base log-odds (before domain and difficulty)."""
        a = self.skill_a + LANGUAGE_EFFECT + np.array(self.language_a)
        return a, self.skill_b + LANGUAGE_EFFECT


@lru_cache(maxsize=32)
def truths(pair: Pair, draws: int = 2_000_000, seed: int = 12345) -> dict[str, float]:
    """The super-population difference A - B per language and overall (question-weighted), by
    Monte Carlo with common draws (so "no difference" comes out exactly 0)."""
    rng = np.random.default_rng(seed)
    la, lb = pair.logits()
    shares = PRESENCE / PRESENCE.sum()
    language = rng.choice(len(LANGUAGES), size=draws, p=shares)
    domain = rng.choice(len(DOMAINS), size=draws, p=DOMAIN_SHARES)
    base = DOMAIN_EFFECT[domain] + rng.normal(0, FAMILY_SD, draws) + rng.normal(0, QUESTION_SD, draws)
    spread = np.sqrt(MODEL_FAMILY_SD**2 + MODEL_SD**2)  # a model's own noise, family and question parts
    na, nb = rng.normal(0, spread, draws), rng.normal(0, spread, draws)
    pa = 1 / (1 + np.exp(-(la[language] + base + na)))
    pb = 1 / (1 + np.exp(-(lb[language] + base + nb)))
    pb_sym = 1 / (1 + np.exp(-(lb[language] + base + na)))  # same noise draws: an exact 0 for equal models
    d = pa - (pb_sym if pair.language_a == (0.0,) * 4 and pair.skill_a == pair.skill_b else pb)
    out = {name: float(d[language == i].mean()) for i, name in enumerate(LANGUAGES)}
    out["combined"] = float(d.mean())
    out["accuracy_a"] = float(pa.mean())
    out["accuracy_b"] = float(pb.mean())
    return out


def pair_for(points: float, language_a: tuple[float, ...] = (0.0,) * 4) -> Pair:
    """Model A ahead of B by about ``points`` (a share) overall: A's skill found by bisection."""
    if points == 0 and language_a == (0.0,) * 4:
        return Pair()
    low, high = -3.0, 3.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (
            (mid, high) if truths(Pair(0.4 + mid, 0.4, language_a), 400_000)["combined"] < points else (low, mid)
        )
    return Pair(0.4 + round((low + high) / 2, 6), 0.4, language_a)


@dataclass
class Questions:
    """One draw of the question set: per question its family, language, domain, and per model its
    verdict, bucket and the judge's label."""

    family: np.ndarray
    language: np.ndarray
    domain: np.ndarray
    truth: dict[str, np.ndarray] = field(default_factory=dict)
    bucket: dict[str, np.ndarray] = field(default_factory=dict)
    judge: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.family)


def draw_questions(pair: Pair, families: int, rng: np.random.Generator, also: tuple[str, ...] = ()) -> Questions:
    """``families`` families and their questions (about twice as many), both models' answers;
    ``also``: more models drawn from B's law (equal to B: a family of true "no difference")."""
    present = rng.random((families, len(LANGUAGES))) < PRESENCE
    family, language = np.nonzero(present)
    domain_of = rng.choice(len(DOMAINS), size=families, p=DOMAIN_SHARES)
    difficulty = rng.normal(0, FAMILY_SD, families)
    domain = domain_of[family]
    base = DOMAIN_EFFECT[domain] + difficulty[family] + rng.normal(0, QUESTION_SD, len(family))
    out = Questions(family, language, domain)
    la, lb = pair.logits()
    for name, logit in (("A", la), ("B", lb), *((m, lb) for m in also)):
        knows = rng.normal(0, MODEL_FAMILY_SD, families)[family]  # what a model knows, in every language
        p = 1 / (1 + np.exp(-(logit[language] + base + knows + rng.normal(0, MODEL_SD, len(family)))))
        truth = rng.random(len(family)) < p
        out.truth[name] = truth
        out.bucket[name] = metric_buckets(truth, rng)
        out.judge[name] = np.where(rng.random(len(family)) < JUDGE_ACCURACY, truth, ~truth)
    return out


def metric_buckets(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the bucket index of its exact and overlap verdicts, drawn from its truth (the two
    metrics agree more often than chance: one uniform draw decides both)."""
    u = rng.random(len(truth))
    exact = np.where(truth, u < EXACT_IF_RIGHT, u < EXACT_IF_WRONG)
    v = np.where(rng.random(len(truth)) < 0.8, u, rng.random(len(truth)))
    overlap = np.where(truth, v < OVERLAP_IF_RIGHT, v < OVERLAP_IF_WRONG)
    names = np.where(
        exact & overlap, "both_pass", np.where(exact, "exact_only", np.where(overlap, "overlap_only", "both_fail"))
    )
    return np.array([BUCKETS.index(n) for n in names])


def review_order(questions: Questions, rng: np.random.Generator) -> np.ndarray:
    """A run's seeded review order: each row's rank (0 first), a random permutation."""
    return rng.permutation(questions.size)


def sample_of(
    questions: Questions, model: str, reviewed: np.ndarray, judge: bool = True, rank: np.ndarray | None = None
) -> pl.DataFrame:
    """The estimator's sample of ``model``'s run: every question, ``reviewed`` rows with their
    truth, each row's place in the run's review order (``rank``) when given."""
    truth = questions.truth[model]
    extra = {} if rank is None else {"rank": [int(r) for r in rank]}
    return make_sample(
        [BUCKETS[b] for b in questions.bucket[model]],
        [DOMAINS[d] for d in questions.domain],
        [bool(t) if r else None for t, r in zip(truth, reviewed, strict=True)],
        judge_correct=[bool(j) for j in questions.judge[model]] if judge else [None] * questions.size,
        language=[LANGUAGES[v] for v in questions.language],
        **extra,
        **{QUESTION: [str(i) for i in range(questions.size)], FAMILY: [str(f) for f in questions.family]},
    )


def first_reviewed(rank: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` rows of a review order reviewed (a prefix: every stratum's own prefix)."""
    return rank < n


def pair_in_every_language(points: float) -> Pair:
    """Model A ahead of B by ``points`` (a share) in every language: its offset per language found
    by bisection on that language's truth."""
    offsets = [0.0] * len(LANGUAGES)
    for i, name in enumerate(LANGUAGES):
        low, high = -3.0, 3.0
        for _ in range(30):
            mid = (low + high) / 2
            trial = tuple(mid if j == i else 0.0 for j in range(len(LANGUAGES)))
            low, high = (mid, high) if truths(Pair(0.4, 0.4, trial), 400_000)[name] < points else (low, mid)
        offsets[i] = round((low + high) / 2, 6)
    return Pair(0.4, 0.4, tuple(offsets))


#: Simulated comparisons share one seed sequence: the bench and make test draw different seeds.
@dataclass(frozen=True)
class Regime:
    """One regime: about ``questions`` shared questions, ``reviews`` reviewed rows per run in
    ``scope`` (a language, or ``combined``), model A ahead by ``points`` overall."""

    name: str
    questions: int
    reviews: int
    scope: str = "combined"
    points: float = 0.0


def scope_rows(questions: Questions, scope: str) -> np.ndarray:
    """The rows of ``scope`` (every row for ``combined``)."""
    if scope == "combined":
        return np.ones(questions.size, dtype=bool)
    return questions.language == LANGUAGES.index(scope)


def scoped_sample(questions: Questions, model: str, order: np.ndarray, reviews: int, scope: str) -> pl.DataFrame:
    """``model``'s rows of ``scope``, the first ``reviews`` of them in the run's order reviewed."""
    inside = scope_rows(questions, scope)
    rank = np.full(questions.size, questions.size, dtype=np.int64)
    rank[inside] = np.argsort(np.argsort(order[inside]))  # the order restricted to the scope
    sample = sample_of(questions, model, inside & (rank < reviews), rank=rank)
    return sample.filter(pl.Series(inside))


def one_difference(regime: Regime, pair: Pair, rng: np.random.Generator) -> tuple[float | None, float, float, bool]:
    """(difference or None when withheld, low, high, whether "ahead" was said) of one draw."""
    questions = draw_questions(pair, max(regime.questions // 2, 2), rng)
    group = regime.scope != "combined"
    sa = scoped_sample(questions, "A", review_order(questions, rng), regime.reviews, regime.scope)
    sb = scoped_sample(questions, "B", review_order(questions, rng), regime.reviews, regime.scope)
    d = estimate_difference(sa, sb, "A", "B", regime.scope, group=group)
    if not d.shown or d.ci_low is None or d.ci_high is None:
        return None, 0.0, 0.0, False
    return d.difference, d.ci_low, d.ci_high, d.ahead is not None


def coverage(regime: Regime, runs: int, seed: int) -> dict[str, float]:
    """Coverage of the scope's true difference (super-population) over ``runs`` draws, the share
    withheld (no interval yet), the mean half-width and how often "ahead" was said."""
    pair = pair_for(regime.points) if regime.points else Pair()
    truth = truths(pair)[regime.scope] if regime.points else 0.0  # equal models: exactly 0 by symmetry
    rng = np.random.default_rng(seed)
    hits, shown, width, ahead = 0, 0, 0.0, 0
    for _ in range(runs):
        diff, low, high, said = one_difference(regime, pair, rng)
        if diff is None:
            continue
        shown += 1
        hits += low - TOLERANCE <= truth <= high + TOLERANCE
        width += (high - low) / 2
        ahead += said
    return {
        "coverage": hits / shown if shown else float("nan"),
        "shown": shown / runs,
        "half_width": width / shown if shown else float("nan"),
        "ahead": ahead / shown if shown else float("nan"),
        "truth": truth,
    }


def family_false_ahead(questions: int, reviews: int, models: int, runs: int, seed: int) -> tuple[float, float]:
    """Equal models (``models`` of them, every pair compared, Holm over the pairs): the share of
    draws where any pair says "ahead" (family-wise), and the share of single comparisons that do
    without adjustment."""
    names = ("A", "B", *(f"M{i}" for i in range(models - 2)))
    rng = np.random.default_rng(seed)
    any_ahead, single, shown = 0, 0, 0
    for _ in range(runs):
        q = draw_questions(Pair(), max(questions // 2, 2), rng, names[2:])
        samples = {m: scoped_sample(q, m, review_order(q, rng), reviews, "combined") for m in names}
        ds = [estimate_difference(samples[a], samples[b], a, b) for a, b in combinations(names, 2)]
        if not all(d.shown for d in ds):
            continue
        shown += 1
        any_ahead += any(d.ahead is not None for d in adjust(ds))
        single += sum(d.ahead is not None for d in ds)
    return any_ahead / max(shown, 1), single / max(shown * len(ds), 1)


def achieved_power(
    pair: Pair, questions: int, pilot: int, points: float, scope: str, runs: int, seed: int, power: float = 0.8
) -> dict[str, float]:
    """A pilot of ``pilot`` reviews per run, the decision plan for ``points`` at ``power`` in
    ``scope``, its rows reviewed: how often "A is ahead" was then said (achieved power), beside
    the power the plan expected and the reviews it asked for, and the mean standard error the plan
    expected beside the one the head-to-head then found. ``pair``: A ahead of B by
    ``points`` in ``scope`` (:func:`pair_for`, :func:`pair_in_every_language`)."""
    rng = np.random.default_rng(seed)
    said, expected, asked, planned_runs = 0, 0.0, 0, 0
    planned_se, found_se = 0.0, 0.0
    group = scope != "combined"
    for _ in range(runs):
        q = draw_questions(pair, max(questions // 2, 2), rng)
        orders = {m: review_order(q, rng) for m in ("A", "B")}
        samples = {m: scoped_sample(q, m, orders[m], pilot, scope) for m in ("A", "B")}
        plan = plan_decision(samples["A"], samples["B"], "A", "B", scope, points, power, group=group)
        if not plan.reachable:
            continue
        planned_runs += 1
        expected += plan.expected_power
        asked += plan.a.planned + plan.b.planned
        done = {}
        for m, side in (("A", plan.a), ("B", plan.b)):
            extra = set(side.next["row_idx"].to_list())
            s = samples[m]
            truth = pl.Series(q.truth[m][scope_rows(q, scope)])
            now = s["reviewed"] | pl.Series([i in extra for i in s["row_idx"].to_list()])
            done[m] = s.with_columns(reviewed=now, truth=pl.when(now).then(truth).otherwise(None))
        d = estimate_difference(done["A"], done["B"], "A", "B", scope, group=group)
        said += d.ahead == "A"
        planned_se += plan.expected_half_width / Z95
        found_se += d.standard_error or 0.0
    n = max(planned_runs, 1)
    return {
        "achieved": said / n,
        "expected": expected / n,
        "reviews": asked / n,
        "reachable": planned_runs / runs,
        "planned_se": planned_se / n,
        "achieved_se": found_se / n,
    }
