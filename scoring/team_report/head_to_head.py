"""Which run (or model) is ahead on the estimated truth, overall and per language: the sentence
Compare, Model x language and ``python -m scoring compare``/``estimate`` lead with (issue 37).

Why a module of its own: a head-to-head read off adjudicated verdicts counts the automatic rule's
reading of the two metrics as the truth for every row nobody reviewed (196 of 300 rows, in the
case that prompted it: "ahead by 12.7 points" where the real gap was 10.7). The estimated true
accuracy corrects those rows from a random sample; so the lead sentence compares estimates
(:mod:`scoring.estimate.difference`), and names the share of automatic verdicts a verdict figure rests on.

The pieces:

- :class:`Contender`: one run (or a model's runs pooled) as a compare run (matching) and as the
  estimator's sample, row for row in the same order;
- one run per content (:func:`distinct`): a re-upload (the same rows, in any order or encoding)
  is named as a duplicate of the first and enters no comparison, so it does not inflate Holm's
  family;
- each pair matched on its own (:func:`scoring.compare.matching.match_runs`), each matched
  question one :data:`~scoring.estimate.side.QUESTION` on both sides, its family the value of a
  family column (a key the user maps, else the dataset's question id) or the question itself;
- Holm over the pairs compared, overall and within each language;
- :func:`difference_sentence`: "A is ahead of B by X points (95% CI lo to hi)" only when the
  (adjusted) interval excludes 0, else "No clear difference between A and B (95% CI ...)".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import polars as pl

from scoring.compare.compared_runs import Run
from scoring.compare.matching import ID_CANDIDATES, default_key, match_runs
from scoring.core.report import COMBINED
from scoring.core.same_content import duplicate_sentences, one_per_content
from scoring.estimate.difference import DIFFERENCE_METHOD, Difference, adjust, estimate_difference
from scoring.estimate.group_estimate import LANGUAGE, groups_key
from scoring.estimate.side import FAMILY, QUESTION

#: Columns taken for a question family when the user maps none (the same question in several
#: languages shares one), most specific first; compared ignoring case.
FAMILY_CANDIDATES = ("question_family", "family", "family_id", *ID_CANDIDATES)
#: Final sources that are not a person's verdict (:data:`scoring.core.verdict_rules.FINAL_SOURCES`).
AUTOMATIC_SOURCES = ("auto", "judge")
#: Above this share of automatic verdicts a verdict figure is "largely automatic" and says so.
LARGELY = 0.5
NO_FAMILY = "No figure before both sides have their interval."
HEAD_METHOD = (
    "One run per content (a re-upload of the same rows is named and left out). Each pair matched on the questions "
    "both answered; " + DIFFERENCE_METHOD
)


@dataclass(frozen=True)
class Contender:
    """One side: ``run`` (matching) and ``sample`` (the estimator's, the same rows in the same
    order); ``final_sources``: per row, where its adjudicated verdict came from (may be empty)."""

    label: str
    run: Run = field(repr=False)
    sample: pl.DataFrame = field(repr=False)
    final_sources: tuple[str, ...] = field(default=(), repr=False)
    #: A model's runs pooled (one per language, say): its table carries each row's ``language``,
    #: and a question is matched within its language (an id repeats across languages).
    pooled: bool = False

    def __post_init__(self) -> None:
        if self.run.table.height != self.sample.height:
            raise ValueError(f"{self.label}: the run and its sample need the same rows.")


def distinct(contenders: Sequence[Contender]) -> tuple[list[Contender], list[tuple[str, str]]]:
    """(the first contender of each content, [(duplicate's label, the label it repeats)]): the
    rule of :func:`scoring.core.same_content.one_per_content`."""
    return one_per_content(contenders, [c.run.table for c in contenders], [c.label for c in contenders])


def family_column(columns: Sequence[str], asked: str | None = None) -> str | None:
    """The column naming each question's family: ``asked`` when given, else the first of
    :data:`FAMILY_CANDIDATES` present (any case), else None (each question its own family)."""
    if asked:
        return asked
    lower = {c.lower(): c for c in columns}
    return next((lower[c] for c in FAMILY_CANDIDATES if c in lower), None)


def paired_samples(a: Contender, b: Contender, family: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A's and B's samples on the questions both answered (matched as Compare matches a pair),
    each row with :data:`QUESTION`, :data:`FAMILY` and A's language (so both split alike)."""
    choice = default_key([a.run, b.run])
    key = choice.key
    if a.pooled and b.pooled and all(LANGUAGE in c.run.table.columns for c in (a, b)):
        key = (*key, LANGUAGE)
    match = match_runs([a.run, b.run], key, choice.by_id)
    rows_a = (match.matched["row_0"] - 1).to_list()
    rows_b = (match.matched["row_1"] - 1).to_list()
    questions = pl.Series(QUESTION, [str(i) for i in range(len(rows_a))], dtype=pl.String)
    column = family_column(a.run.table.columns, family)
    if column is not None and column not in a.run.table.columns:
        raise ValueError(f"No column {column!r} in {a.label} to read question families from.")
    families = (
        a.run.table[column].cast(pl.String).fill_null("")[rows_a].alias(FAMILY)
        if column is not None
        else questions.alias(FAMILY)
    )
    families = pl.Series(FAMILY, [f or q for f, q in zip(families.to_list(), questions.to_list(), strict=True)])
    sa = a.sample[rows_a]
    language = groups_key(sa) if LANGUAGE in sa.columns else pl.Series(LANGUAGE, [""] * len(rows_a), dtype=pl.String)
    sa = sa.with_columns(questions, families, language.alias(LANGUAGE))
    sb = b.sample[rows_b].with_columns(questions, families, language.alias(LANGUAGE))
    return sa, sb


@dataclass(frozen=True)
class HeadToHead:
    """Every pair of distinct contenders on the estimated truth: ``overall`` (Holm over the pairs),
    ``by_language`` (per language, Holm over its pairs), the duplicates left out, and per
    contender the share of its adjudicated verdicts that are automatic."""

    overall: list[Difference]
    by_language: dict[str, list[Difference]]
    duplicates: list[tuple[str, str]]
    automatic: dict[str, tuple[int, int]]
    method: str = HEAD_METHOD

    def sentences(self) -> list[str]:
        """The lead: one sentence per pair overall, the duplicates named."""
        return [difference_sentence(d) for d in self.overall] + duplicate_sentences(self.duplicates)

    @property
    def several_languages(self) -> bool:
        return len(self.by_language) > 1

    def language_sentences(self) -> list[str]:
        return [f"{lang}: {difference_sentence(d)}" for lang, ds in self.by_language.items() for d in ds]

    def lead_lines(self, per_language: bool = False) -> list[str]:
        """The sentences of the pairs with a figure (per language when asked and there is more
        than one), then how many pairs wait for reviews, then the duplicates: what a page leads with."""
        found = self.by_language if per_language and self.by_language else {"": self.overall}
        pairs = [(lang, d) for lang, ds in found.items() for d in ds]
        shown = [(lang, d) for lang, d in pairs if d.shown]
        lines = [f"{lang}: {difference_sentence(d)}" if lang else difference_sentence(d) for lang, d in shown or pairs]
        if shown and len(shown) < len(pairs):
            lines.append(
                f"{len(pairs) - len(shown)} more pair(s) have no head-to-head on the estimated true accuracy yet: "
                "both sides need an estimate with its 95% interval (the True accuracy page says what to review)."
            )
        return lines + duplicate_sentences(self.duplicates)

    def automatic_sentences(self) -> list[str]:
        return [s for label, (k, n) in self.automatic.items() if (s := automatic_sentence(label, k, n))]

    def as_dict(self) -> dict:
        return {
            "overall": [{**d.as_dict(), "sentence": difference_sentence(d)} for d in self.overall],
            "by_language": {
                lang: [{**d.as_dict(), "sentence": difference_sentence(d)} for d in ds]
                for lang, ds in self.by_language.items()
            },
            "duplicates": [{"run": dup, "same_content_as": first} for dup, first in self.duplicates],
            "automatic": {label: {"automatic": k, "rows": n} for label, (k, n) in self.automatic.items()},
            "sentences": self.sentences(),
            "lead": self.lead_lines(),
            "language_sentences": self.language_sentences(),
            "automatic_sentences": self.automatic_sentences(),
            "method": self.method,
        }


def head_to_head(contenders: Sequence[Contender], family: str | None = None, by_language: bool = True) -> HeadToHead:
    """Every pair of ``contenders`` (in order: the first of a pair is A) on the estimated truth."""
    kept, duplicates = distinct(contenders)
    overall: list[Difference] = []
    split: dict[str, list[Difference]] = {}
    for a, b in combinations(kept, 2):
        sa, sb = paired_samples(a, b, family)
        if not sa.height:
            continue
        overall.append(estimate_difference(sa, sb, a.label, b.label, COMBINED))
        languages = sorted(set(sa[LANGUAGE].to_list()))
        if by_language:
            for lang in languages:
                keep = pl.col(LANGUAGE) == lang
                split.setdefault(lang, []).append(
                    replace(overall[-1], scope=lang)  # one language alone: the pair's own figure
                    if len(languages) == 1
                    else estimate_difference(sa.filter(keep), sb.filter(keep), a.label, b.label, lang, group=True)
                )
    automatic = {c.label: automatic_count(c.final_sources) for c in kept if c.final_sources}
    several = len(overall) > 1 or any(len(v) > 1 for v in split.values())
    method = HEAD_METHOD if several else HEAD_METHOD.split(" Several comparisons:")[0] + " " + NO_FAMILY
    languages = {k: adjust(v) for k, v in sorted(split.items())}
    return HeadToHead(adjust(overall), languages, duplicates, automatic, method)


def automatic_count(sources: Sequence[str]) -> tuple[int, int]:
    """(rows whose final verdict is automatic, rows)."""
    return sum(1 for s in sources if s in AUTOMATIC_SOURCES), len(sources)


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def difference_sentence(d: Difference) -> str:
    """The head-to-head in one sentence (see the module)."""
    a, b = d.a.label, d.b.label
    if not d.shown or d.difference is None or d.adjusted_low is None or d.adjusted_high is None:
        todo = " ".join(f"{s.label}: {s.what_to_review}" for s in (d.a, d.b) if s.what_to_review)
        why = todo or "the two runs share too few questions."
        return f"No head-to-head of {a} and {b} on the estimated true accuracy yet: {why}"
    adjusted = f", Holm-adjusted over {d.family_size} comparisons" if d.family_size > 1 else ""
    first, second = (d.b, d.a) if d.ahead == b else (d.a, d.b)  # the side named first, first
    figures = (
        f"estimated true accuracy {_points(first.estimate or 0.0)}% vs {_points(second.estimate or 0.0)}% "
        f"on {d.questions:,} shared questions"
    )
    ahead = d.ahead
    if ahead is not None:
        sign = 1 if ahead == a else -1
        lo, hi = sorted((sign * d.adjusted_low, sign * d.adjusted_high))
        behind = b if ahead == a else a
        by = _points(sign * d.difference)
        head = f"{ahead} is ahead of {behind} by {by} points (95% CI {_points(lo)} to {_points(hi)}{adjusted})"
    else:
        head = (
            f"No clear difference between {a} and {b} (95% CI {_points(d.adjusted_low)} to {_points(d.adjusted_high)}"
            f" for {a} − {b}{adjusted})"
        )
    widened = ""
    if d.clustering_widened and d.unclustered_half_width is not None and d.clustered_half_width is not None:
        widened = (
            f" Clustering by question family ({d.families:,} families) widened the interval from "
            f"±{_points(d.unclustered_half_width)} to ±{_points(d.clustered_half_width)} points."
        )
    return f"{head}: {figures}.{widened}"


def automatic_sentence(label: str, automatic: int, rows: int) -> str | None:
    """What share of ``label``'s adjudicated figure is automatic metric verdicts, when it is most of
    it (None otherwise)."""
    if not rows or automatic / rows <= LARGELY:
        return None
    return (
        f"{label}: {automatic:,} of {rows:,} adjudicated verdicts ({100 * automatic / rows:.0f}%) are automatic "
        "metric verdicts, not a person's: a verdict figure of it is mostly the metrics' reading, so the lead compares "
        "estimated true accuracies instead."
    )
