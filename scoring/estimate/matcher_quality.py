"""Which matcher agrees with people, per language: the spec's two metrics and the optional matchers
(:mod:`scoring.match`) against the reviewed random sample, and the one to use.

For each language (each language's rows estimated as a run of their own, as
:mod:`.group_estimate` does) and each matcher: its **precision** (of the rows it passes, the share
people call correct), **recall** (of the rows people call correct, the share it passes) and
**agreement** with people (the share of rows where its verdict is theirs), each a stratified estimate
over bucket x domain with its 95% interval from the machinery of :mod:`.metric_quality` and
:mod:`.estimator` (nothing new: the same shrunk variances, Wilson intervals on the effective sample
size, finite-population correction, and missing rows spanning what they could be). And the **rows a
human must see** if that matcher gave the verdicts and people checked only the rows where it is
outvoted: its verdict differs from the majority of the other matchers' (a tie among them counts as
outvoted), counted on all the run's rows, not the sample.

:func:`recommend` picks, per language, the matcher whose precision is known (its whole 95% interval)
to reach the team's target (:func:`scoring.match.target_precision`, default 0.95) and that needs
the fewest such reviews; it says "the sample is too small to tell" when fewer than
:data:`MIN_REVIEWED` rows of the language are reviewed, or no matcher's interval clears the target
while some interval still spans it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from scoring.core.metric_names import METRIC_COLUMNS
from scoring.core.stats import Z95
from scoring.estimate.estimator import estimate_indicator
from scoring.estimate.group_estimate import LANGUAGE, groups_key, groups_of
from scoring.estimate.metric_quality import Ratio, column_quality
from scoring.estimate.strata import build_strata
from scoring.match import MATCHER_COLUMNS, MATCHERS, TITLES, stemmed
from scoring.match.scorers import score_matchers

#: Every matcher measured, the spec's two first, and its verdict column in the sample.
COLUMNS: dict[str, str] = {**METRIC_COLUMNS, **MATCHER_COLUMNS}
NAMES: dict[str, str] = {"exact": "Exact substring (spec)", "overlap": "Word overlap (spec)", **TITLES}
#: The scope of the whole run, beside each language.
ALL_ROWS = "(all languages)"
#: Below this many reviewed rows in a language, no matcher is recommended there.
MIN_REVIEWED = 30
METHOD = (
    "Per language, the language's rows as a run of their own (its reviewed random sample stratified by bucket x "
    "domain). Precision, recall: stratified ratio estimates with the Wilson interval on the Kish effective sample "
    "size (the estimate's metric-quality method); agreement with people: the stratified share of rows where the "
    "matcher's verdict is the people's, with the estimate's interval. Rows a human must see: rows of the whole run "
    "where the matcher's verdict differs from the majority of the other matchers (a tie counts), if that matcher "
    "gave the verdicts and people checked only those. Recommended: among matchers whose precision's whole 95% "
    "interval is at or above the target, the one with the fewest such rows; too small to tell below "
    f"{MIN_REVIEWED} reviewed rows, or when no interval clears the target while some still spans it."
)


@dataclass(frozen=True)
class MatcherFigures:
    """One matcher in one scope (a language, or :data:`ALL_ROWS`)."""

    scope: str
    matcher: str
    rows: int
    reviewed: int
    pass_share: float | None  #: share of the scope's rows the matcher passes (all rows, not the sample)
    precision: Ratio
    recall: Ratio
    agreement: Ratio
    queue: int  #: rows a human must see if this matcher triages (see the module)
    stemmed: bool | None = None  #: stem_overlap only: whether this language's rows are stemmed

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Recommendation:
    """The matcher to use in ``scope`` (None: none can be named) and why, in plain words."""

    scope: str
    matcher: str | None
    too_small: bool
    text: str
    target: float

    def as_dict(self) -> dict:
        return asdict(self)


def with_matchers(sample: pl.DataFrame, threshold: float | None = None) -> pl.DataFrame:
    """``sample`` (:func:`scoring.estimate.reviewed_sample`, with ``answer``, ``response`` and
    ``language`` carried) with every optional matcher's verdict column added where missing."""
    todo = [name for name in MATCHERS if MATCHER_COLUMNS[name] not in sample.columns]
    if not todo:
        return sample
    rows = sample.select(
        pl.col("answer").cast(pl.String).fill_null(""),
        pl.col("response").cast(pl.String),
        *([pl.col(LANGUAGE).cast(pl.String)] if LANGUAGE in sample.columns else []),
    )
    return sample.hstack(score_matchers(rows, todo, threshold=threshold, overlap=sample["overlap_correct"]))


def outvoted(sample: pl.DataFrame, matchers: Sequence[str]) -> dict[str, np.ndarray]:
    """Per matcher, per row: its verdict differs from the majority of the others' (a tie counts)."""
    verdicts = {m: sample[COLUMNS[m]].fill_null(False).to_numpy().astype(int) for m in matchers}
    total = sum(verdicts.values())
    others = len(matchers) - 1
    out = {}
    for m, v in verdicts.items():
        yes = total - v  # the others passing the row
        majority = np.where(2 * yes > others, 1, np.where(2 * yes < others, 0, -1))  # -1: a tie
        out[m] = majority != v
    return out


def _agreement(sample: pl.DataFrame, column: str, z: float) -> Ratio:
    strata = build_strata(sample)
    truth = sample["truth"].fill_null(False).to_numpy()
    agree = sample[column].fill_null(False).to_numpy() == truth
    found, _ = estimate_indicator(strata, agree, z)
    reviewed = int(sample["reviewed"].fill_null(False).sum())
    if reviewed == 0:
        return Ratio(None, None, None, 0, None)
    return Ratio(found.estimate, found.ci_low, found.ci_high, reviewed, None)


def scope_figures(
    sample: pl.DataFrame, scope: str, matchers: Sequence[str], queues: dict[str, np.ndarray], z: float = Z95
) -> list[MatcherFigures]:
    """Every matcher's figures over ``sample`` (one scope's rows; ``queues`` per row of it)."""
    out = []
    for m in matchers:
        quality = column_quality(m, COLUMNS[m], sample, z)
        language = None if scope in (ALL_ROWS,) else scope
        out.append(
            MatcherFigures(
                scope=scope,
                matcher=m,
                rows=sample.height,
                reviewed=quality.reviewed,
                pass_share=float(sample[COLUMNS[m]].fill_null(False).mean()) if sample.height else None,
                precision=quality.precision,
                recall=quality.recall,
                agreement=_agreement(sample, COLUMNS[m], z),
                queue=int(queues[m].sum()),
                stemmed=(stemmed(language) if language is not None else None) if m == "stem_overlap" else None,
            )
        )
    return out


def matcher_quality(
    sample: pl.DataFrame, matchers: Sequence[str] | None = None, by_language: bool = True, z: float = Z95
) -> list[MatcherFigures]:
    """Figures for the whole run, then per language (sorted) when ``by_language`` and the rows carry
    one. ``sample`` must hold every matcher's column (:func:`with_matchers`); ``matchers``: which,
    by default the spec's two and every optional one."""
    names = list(matchers or COLUMNS)
    queues = outvoted(sample, names)
    figures = scope_figures(sample, ALL_ROWS, names, queues, z)
    if not by_language or LANGUAGE not in sample.columns:
        return figures
    key = groups_key(sample, LANGUAGE)
    for language in groups_of(sample, LANGUAGE):
        where = (key == language).to_numpy()
        part = sample.filter(pl.Series(where))
        figures += scope_figures(part, language, names, {m: q[where] for m, q in queues.items()}, z)
    return figures


def recommend(figures: Sequence[MatcherFigures], target: float) -> Recommendation:
    """The matcher for one scope's figures (see the module for the rule), in plain words."""
    scope = figures[0].scope
    reviewed = max((f.reviewed for f in figures), default=0)
    where = "overall" if scope == ALL_ROWS else f"in {scope}"
    if reviewed < MIN_REVIEWED:
        return Recommendation(
            scope,
            None,
            True,
            f"The sample is too small to tell {where}: {reviewed} reviewed rows of its random sample; "
            f"review at least {MIN_REVIEWED - reviewed} more before choosing a matcher.",
            target,
        )
    meets = [f for f in figures if f.precision.ci_low is not None and f.precision.ci_low >= target]
    spans = [f for f in figures if f.precision.ci_high is not None and f.precision.ci_high >= target]
    if meets:
        best = min(meets, key=lambda f: (f.queue, -(f.agreement.value or 0.0)))
        p = best.precision
        text = (
            f"Use {NAMES[best.matcher]} {where}: its precision is {p.value:.1%} (95% interval {p.ci_low:.1%} to "
            f"{p.ci_high:.1%}, at or above the target {target:.0%}), and people would need to check "
            f"{best.queue:,} of {best.rows:,} rows (where it is outvoted by the other matchers)."
        )
        cheaper = [f for f in spans if f not in meets and f.queue < best.queue]
        if cheaper:
            names = ", ".join(NAMES[f.matcher] for f in cheaper)
            text += (
                f" {names} would need fewer, but the sample cannot yet tell whether its precision reaches the target."
            )
        return Recommendation(scope, best.matcher, False, text, target)
    if spans:
        names = ", ".join(NAMES[f.matcher] for f in spans)
        return Recommendation(
            scope,
            None,
            True,
            f"The sample is too small to tell {where}: no matcher's precision is known to reach {target:.0%}; "
            f"the interval of {names} still spans it. Review more rows of the random sample.",
            target,
        )
    return Recommendation(
        scope,
        None,
        False,
        f"No matcher reaches a precision of {target:.0%} {where}: every one's 95% interval lies below it. "
        "Keep people reviewing these rows.",
        target,
    )


def recommendations(figures: Sequence[MatcherFigures], target: float) -> list[Recommendation]:
    """One :class:`Recommendation` per scope, in the order of ``figures``."""
    scopes = list(dict.fromkeys(f.scope for f in figures))
    return [recommend([f for f in figures if f.scope == s], target) for s in scopes]


def figures_table(figures: Sequence[MatcherFigures]) -> pl.DataFrame:
    """One row per (scope, matcher): the figures flattened (for the page, the CLI and ``--json``)."""
    rows = []
    for f in figures:
        row = {"scope": f.scope, "matcher": f.matcher, "title": NAMES[f.matcher], "rows": f.rows}
        row |= {"reviewed": f.reviewed, "pass_share": f.pass_share, "queue": f.queue, "stemmed": f.stemmed}
        for name in ("precision", "recall", "agreement"):
            r: Ratio = getattr(f, name)
            row |= {name: r.value, f"{name}_low": r.ci_low, f"{name}_high": r.ci_high}
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)
