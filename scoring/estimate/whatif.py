"""What-if rules: would a looser reading of the golden answer have agreed with the reviewers?

Diagnostic only: the spec's protocols (:mod:`scoring.core.protocols`) never change. Each rule
rescores the *reviewed* rows only (a few thousand at most, so per pair in Python) and reports,
against the reviewers' verdicts: ``fixed`` (the metric disagreed with the reviewers, the rule
agrees: an overturn the rule would have prevented), ``broken`` (the metric agreed, the rule does
not: a confirmed verdict the rule would break), and, through the stratified estimator, the
share of the run's rows the metric would pass under the rule and its agreement with reviewers.

The rules: each step of ``--normalize`` alone (:func:`scoring.core.protocols.normalize_text`:
NFC, format characters dropped, native digits as ASCII; :func:`~scoring.core.protocols.normalize_pair`
also strips the golden answer), all of ``--normalize`` together, and stripping common Indic
inflectional suffixes for word overlap. The suffix lists are a small heuristic, not a
stemmer: on every word of both sides the longest listed suffix is removed once, if at least two
characters remain. They merge some different words too; ``broken`` shows what that costs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from scoring.core.protocols import PUNCTUATION, exact_substring, is_blank, normalize_pair, word_overlap
from scoring.core.stats import Z95
from scoring.estimate.estimator import estimate_indicator
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import Strata, build_strata

#: Common inflectional endings (heuristic, see the module docstring). Hindi: plural oblique
#: -ों/-ियों/-ाओं, plural -ें/-ाएं/-ाएँ, feminine/oblique -ी. Tamil: plural -கள், dative -க்கு, locative
#: -இல் after a glide (-வில்/-யில்) or a consonant (-ில்), genitive -ின், accusative -ை (-யை/-வை).
#: Bengali: plural -গুলো/-রা/-েরা, genitive -দের/-ের/-র, objective -কে, locative -তে/-ে.
INDIC_SUFFIXES: dict[str, tuple[str, ...]] = {
    "hindi": ("ियों", "ाओं", "ाएँ", "ाएं", "ों", "ें", "ी"),
    "tamil": ("களில்", "களை", "கள்", "க்கு", "வில்", "யில்", "ில்", "ின்", "யை", "வை", "ை"),
    "bengali": ("গুলো", "েরা", "দের", "ের", "রা", "কে", "তে", "র", "ে"),
}
_SUFFIXES = sorted({s for group in INDIC_SUFFIXES.values() for s in group}, key=len, reverse=True)
MIN_STEM = 2
WHATIF_COLUMNS = (
    "rule",
    "metric",
    "description",
    "reviewed",
    "changed",
    "fixed",
    "broken",
    "pass_share",
    "pass_low",
    "pass_high",
    "agreement",
    "agreement_low",
    "agreement_high",
)
SPEC = "spec protocol"  #: the baseline row: the metric as the spec defines it


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def drop_format(text: str) -> str:
    """Zero-width and other format (Cf) characters removed: ZWSP, ZWNJ, ZWJ, word joiner, BOM,
    soft hyphen (the set ``--normalize`` removes)."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def ascii_digits(text: str) -> str:
    """Native digits (``१९४७``) as ASCII (``1947``)."""
    return "".join(
        str(unicodedata.digit(ch))
        if ch.isdigit() and not ch.isascii() and unicodedata.digit(ch, None) is not None
        else ch
        for ch in text
    )


def strip_suffix(word: str) -> str:
    """``word`` without its longest :data:`INDIC_SUFFIXES` ending, if two characters remain."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[: -len(suffix)]
    return word


def _stems(text: str) -> set[str]:
    """``word_set`` of the protocol, each word's suffix stripped."""
    words = (tok.strip(PUNCTUATION) for tok in text.lower().split())
    return {strip_suffix(w) for w in words if w}


Verdicts = Callable[[str, str], tuple[bool | None, bool | None]]


def _both(transform: Callable[[str], str]) -> Verdicts:
    """Both metrics on the pair with ``transform`` applied to both sides."""

    def score(answer: str, response: str) -> tuple[bool | None, bool | None]:
        a, r = transform(answer), transform(response)
        return exact_substring(a, r), word_overlap(a, r).is_correct

    return score


def _stripped_answer(answer: str, response: str) -> tuple[bool | None, bool | None]:
    return exact_substring(answer.strip(), response), word_overlap(answer.strip(), response).is_correct


def _normalized(answer: str, response: str) -> tuple[bool | None, bool | None]:
    a, r = normalize_pair(answer, response)
    return exact_substring(a, r), word_overlap(a, r).is_correct


def _suffixes(answer: str, response: str) -> tuple[bool | None, bool | None]:
    if is_blank(response):
        return None, False
    return None, _stems(answer) <= _stems(response)


@dataclass(frozen=True)
class Rule:
    """A named reading of (answer, response): ``verdicts`` gives (exact, overlap) under it, None
    for a metric it does not apply to (``metrics``)."""

    name: str
    description: str
    verdicts: Verdicts
    metrics: tuple[str, ...] = ("exact", "overlap")


RULES: tuple[Rule, ...] = (
    Rule("NFC", "both sides in Unicode NFC (precomposed and decomposed spellings match)", _both(nfc)),
    Rule("format characters", "zero-width and format characters removed from both sides", _both(drop_format)),
    Rule("native digits", "native digits read as ASCII digits on both sides", _both(ascii_digits)),
    Rule("strip golden answer", "leading and trailing whitespace stripped from the golden answer", _stripped_answer),
    Rule(
        "--normalize", "all --normalize steps together (NFC, format characters, digits, stripped answer)", _normalized
    ),
    Rule(
        "Indic suffixes",
        "word overlap with common Hindi/Tamil/Bengali inflectional suffixes stripped",
        _suffixes,
        ("overlap",),
    ),
)


def what_if(sample: pl.DataFrame, rules: tuple[Rule, ...] = RULES, z: float = Z95) -> pl.DataFrame:
    """One row per (rule, metric) the rule applies to, :data:`WHATIF_COLUMNS`, after a baseline
    row per metric (:data:`SPEC`). ``sample`` must carry ``answer`` and ``response``
    (:func:`scoring.estimate.reviewed_sample` keeps them from the final-verdict frame)."""
    check_sample(sample)
    if not {"answer", "response"} <= set(sample.columns):
        raise ValueError("What-if rules need the rows' answer and response columns.")
    strata = build_strata(sample)
    at = np.flatnonzero(strata.reviewed_rows)
    truth = sample["truth"].fill_null(False).to_numpy()
    pairs = sample.select(pl.col("answer").fill_null(""), pl.col("response").fill_null("")).to_numpy()[at]
    out = []
    for metric, column in (("exact", "exact_correct"), ("overlap", "overlap_correct")):
        spec = sample[column].to_numpy().astype(bool)
        out.append(_row(SPEC, metric, "the metric as the spec defines it", strata, spec, spec, truth, z))
        for rule in (r for r in rules if metric in r.metrics):
            scored = [rule.verdicts(a, r)[0 if metric == "exact" else 1] for a, r in pairs]
            verdict = spec.copy()
            verdict[at] = [spec[i] if v is None else v for i, v in zip(at, scored)]
            out.append(_row(rule.name, metric, rule.description, strata, spec, verdict, truth, z))
    return pl.DataFrame(out, schema=list(WHATIF_COLUMNS), orient="row")


def _row(
    name: str,
    metric: str,
    description: str,
    strata: Strata,
    spec: np.ndarray,
    verdict: np.ndarray,
    truth: np.ndarray,
    z: float,
) -> tuple:
    rev = strata.reviewed_rows
    right, was_right = verdict == truth, spec == truth
    passes, _ = estimate_indicator(strata, verdict, z)
    agrees, _ = estimate_indicator(strata, right, z)
    return (
        name,
        metric,
        description,
        int(rev.sum()),
        int((verdict != spec)[rev].sum()),
        int((right & ~was_right)[rev].sum()),
        int((~right & was_right)[rev].sum()),
        passes.estimate,
        passes.ci_low,
        passes.ci_high,
        agrees.estimate,
        agrees.ci_low,
        agrees.ci_high,
    )
