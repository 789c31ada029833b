"""Which rows a viewer is shown blind: the one decision every page that serves a row asks.

A row is blind when a double-blind scope of the run holds it (the planner's audit, a bucket, a
domain, a reproducible sample: :class:`~scoring.review.claim_rules.BlindSpec`), or when the viewer
chose blind review for themselves, or when it is in the run's random sample and blind audits are
on (``REVIEW_BLIND_AUDIT``, the default): the audit scope the planner chose, and the reproducible
sample of the queue scope the viewer reviews (its first k rows in review order), which the
true-accuracy estimate counts. Verdicts anchored by a metric's or the judge's label would bias
both that estimate and the judge's measured agreement with people. Triage scopes (a bucket or
domain without a sample) keep the verdicts and the highlighting. A blind row is blind wherever it
is served (any queue scope, a link to the row, "My verdicts"): the question, golden answer and
response only; no metric verdicts, highlighting, bucket or judge label, since any of them names
both metrics' verdicts.

Decided per item (question, golden answer, response): identical rows share one verdict, so an
item is blind on every row that holds it once one of its rows is in a blind scope.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.core.verdict_rules import isin
from scoring.review.claim_rules import BlindSpec
from scoring.review.queue import rows_in_scope, sampled_rows_in_scope
from scoring.store.audit import AUDIT

#: What "My verdicts" shows in the bucket column of a blind row (double-blind scope or blind audit).
HIDDEN = "hidden (blind review)"
#: The card's one line on why a row is blind (not said when the viewer chose blind review).
WHY_DOUBLE_BLIND = (
    "Shown blind: a row of a double-blind scope; its metric verdicts, highlighting and judge label are hidden."
)
WHY_BLIND_AUDIT = "Shown blind: a random-sample row for the true accuracy; metric verdicts and judge label are hidden."


@dataclass(frozen=True)
class BlindRows:
    """The items one viewer is shown blind (see :func:`blind_rows`)."""

    items: frozenset[str] = frozenset()
    everything: bool = False  #: the viewer's own blind review, or a blind scope over the whole run
    #: of ``items``, those blind only as rows of the random sample (a blind audit), not double-blind
    sampled: frozenset[str] = frozenset()

    def why(self, item_key: Hashable) -> str | None:
        """The card's plain line on why the row is blind (None: it is not)."""
        if not self.hides(item_key):
            return None
        return WHY_BLIND_AUDIT if not self.everything and str(item_key) in self.sampled else WHY_DOUBLE_BLIND

    def hides(self, item_key: Hashable) -> bool:
        """Whether the row holding ``item_key`` is shown blind to this viewer."""
        return self.everything or str(item_key) in self.items

    def mask(self, item_keys: Iterable[Hashable]) -> np.ndarray:
        """:meth:`hides` for many rows at once (True: blind)."""
        keys = item_keys if isinstance(item_keys, pd.Series) else pd.Series(list(item_keys), dtype=object)
        if self.everything or not self.items:
            return np.full(len(keys), self.everything, dtype=bool)
        return isin(keys.astype(str), self.items)

    def __bool__(self) -> bool:
        return self.everything or bool(self.items)


def blind_rows(
    scored: pd.DataFrame,
    specs: Iterable[BlindSpec],
    seed: int,
    audit: Collection[str] = (),
    chose_blind: bool = False,
    blind_audit: bool = False,
    viewing: BlindSpec | None = None,
) -> BlindRows:
    """The rows of a run (its scored frame) shown blind to a viewer: those of the run's
    double-blind scopes ``specs`` (:func:`~scoring.review.claim_rules.blind_scopes`; a sampled scope
    holds the first k of its review order under the run's ``seed``; the audit scope the items
    in ``audit``), or every row when ``chose_blind`` (the viewer's own Blind review switch).

    With ``blind_audit`` (the ``REVIEW_BLIND_AUDIT`` setting) the random sample is blind too: the
    items in ``audit``, and the rows of ``viewing`` (the queue scope the viewer reviews) when it
    is the audit scope or a sample; a bucket or domain scope without a sample (triage) is not."""
    specs = list(specs)
    if chose_blind or any(s.bucket is None and s.domain is None and not s.sample for s in specs):
        return BlindRows(everything=True)
    items = _items(scored, specs, seed, audit)
    sampled: set[str] = set()
    if blind_audit:
        drawn = [BlindSpec(AUDIT)] if audit else []
        if viewing is not None and viewing.sample and viewing.bucket != AUDIT:
            drawn.append(viewing)
        sampled = _items(scored, drawn, seed, audit) - items
    return BlindRows(frozenset(items | sampled), sampled=frozenset(sampled))


def _items(scored: pd.DataFrame, specs: Iterable[BlindSpec], seed: int, audit: Collection[str]) -> set[str]:
    """The item keys the scopes ``specs`` hold."""
    items: set[str] = set()
    for spec in specs:
        keys = audit if spec.bucket == AUDIT else None
        rows = (
            sampled_rows_in_scope(scored, spec.bucket, spec.domain, spec.sample, seed, keys)
            if spec.sample
            else rows_in_scope(scored, spec.bucket, spec.domain, keys=keys)
        )
        items.update(str(k) for k in rows["item_key"])
    return items
