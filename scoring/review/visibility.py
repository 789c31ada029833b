"""What a viewer may see during double-blind review: the one rule every page applies.

Double-blind review (each item of a scope to two reviewers in turn, neither seeing the other's
verdict: :mod:`scoring.review.claim_rules`) is worth something only if no page tells a reviewer
what the others decided. So while any scope of a run is double-blind, a viewer who is not an
adjudicator is shown nothing built on that run's human verdicts: not the other reviewers'
verdicts, names or notes; not the adjudicated accuracy; not the estimated true accuracy (it
counts the verdicts); not agreement, precision, or anything measured against the reviewers (the
matchers' report, the judge's trust). The metrics' own figures stay: they are no person's verdict.
Adjudicators see everything, since they settle the disagreements; without an adjudicators list
(``REVIEW_ADJUDICATORS``) everyone is one, as on one machine.

Which rows are shown without their metric verdicts and the judge's label is the other half of
blind review, decided per row by :mod:`scoring.review.blind`.

The dashboard reads one :class:`Visibility` per page run (``ui.identity.visibility``). Pages that
show some of a run and hide the rest ask it per run (:meth:`Visibility.others_hidden`,
:meth:`Visibility.hidden`); every other page is withheld whole by the navigation
(:meth:`Visibility.withholds`), so a page added later is blind until it says it applies the rule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Engine

from scoring.review.roles import Identity
from scoring.store.blind_table import blind_run_ids


@dataclass(frozen=True)
class Visibility:
    """What one viewer may see of the stored runs (see the module docstring)."""

    viewer: str
    #: sees every verdict and every figure built on them (an adjudicator, or no adjudicators list)
    adjudicator: bool
    #: the runs with at least one double-blind scope
    blind_runs: frozenset[int] = frozenset()

    def others_hidden(self, run_id: int | None) -> bool:
        """Whether other reviewers' verdicts on ``run_id``, and every figure built on them, are
        withheld from this viewer (None: no run, nothing to withhold)."""
        return run_id is not None and not self.adjudicator and run_id in self.blind_runs

    def hidden(self, run_ids: Iterable[int]) -> list[int]:
        """Of ``run_ids`` (in their order), those whose verdicts are withheld from this viewer."""
        return [i for i in run_ids if self.others_hidden(i)]

    def shown(self, run_ids: Iterable[int]) -> list[int]:
        """Of ``run_ids`` (in their order), those whose verdicts this viewer may see."""
        return [i for i in run_ids if not self.others_hidden(i)]

    def withholds(self, run_id: int | None, applies_rule: bool) -> bool:
        """Whether a page on ``run_id`` is withheld whole from this viewer: it does not apply this
        rule itself (a page that does not say it does is taken to show verdicts) and the run's
        verdicts are withheld from the viewer."""
        return not applies_rule and self.others_hidden(run_id)


def visibility_for(config: Identity, viewer: str, blind_runs: Collection[int]) -> Visibility:
    """The rule for ``viewer`` under the roles ``config`` (:func:`scoring.review.roles.identity`),
    given the runs with a double-blind scope. Nobody named is no adjudicator when there is a list."""
    adjudicator = config.adjudicators is None or config.may_adjudicate(viewer)
    return Visibility(viewer, adjudicator, frozenset(blind_runs))


def read_visibility(engine: Engine, config: Identity, viewer: str) -> Visibility:
    """:func:`visibility_for` with the runs under double-blind review read from the database (one
    query, whatever the number of runs a page shows)."""
    if config.adjudicators is None:  # everyone adjudicates: nothing to read
        return visibility_for(config, viewer, ())
    return visibility_for(config, viewer, blind_run_ids(engine))
