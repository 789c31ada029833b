"""The one rule of what a viewer may see during double-blind review (issue 36, point 8):
:mod:`scoring.review.visibility` on its own, read from a real SQLite database, and the
navigation's declaration in app.py of the pages that apply it themselves (every other page is
withheld whole). The real-browser sweep of every page is ``tests/test_browser_blind_pages.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sqlalchemy import Engine

from scoring import ingest, review
from scoring.review.roles import Identity, identity

APP = Path(__file__).resolve().parent.parent / "app.py"


def _roles(adjudicators: str | None) -> Identity:
    return identity({}, {} if adjudicators is None else {"REVIEW_ADJUDICATORS": adjudicators})


def test_only_a_named_non_adjudicator_is_kept_from_a_blind_runs_verdicts() -> None:
    with_list = _roles("Ana, carol")
    bob = review.visibility_for(with_list, "bob", {4})
    assert bob.others_hidden(4) and not bob.others_hidden(3) and not bob.others_hidden(None)
    assert bob.hidden([1, 4, 3]) == [4] and bob.shown([1, 4, 3]) == [1, 3]
    assert not review.visibility_for(with_list, " ANA ", {4}).others_hidden(4)  # names ignore case and spaces
    assert review.visibility_for(with_list, "", {4}).others_hidden(4)  # nobody named is no adjudicator
    # Without an adjudicators list everyone is one, as on one machine.
    assert not review.visibility_for(_roles(None), "bob", {4}).others_hidden(4)


def test_a_page_that_does_not_apply_the_rule_itself_is_withheld_on_a_blind_run() -> None:
    bob = review.visibility_for(_roles("ana"), "bob", {4})
    assert bob.withholds(4, applies_rule=False)  # a page added later: blind by default
    assert not bob.withholds(4, applies_rule=True)  # the page shows what bob may see itself
    assert not bob.withholds(3, applies_rule=False) and not bob.withholds(None, applies_rule=False)
    ana = review.visibility_for(_roles("ana"), "ana", {4})
    assert not ana.withholds(4, applies_rule=False)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_blind_runs_are_read_from_the_database(engine: Engine) -> None:
    """One query names every run with a double-blind scope, whatever the scope; turning the
    scope off gives the run's verdicts back."""
    runs = [
        ingest.save_run(engine, f"question,answer,response\nq{i},a,a\n".encode(), f"r{i}.csv").run.id for i in (1, 2, 3)
    ]
    roles = _roles("ana")
    assert review.read_visibility(engine, roles, "bob").blind_runs == frozenset()
    review.set_blind(engine, runs[0], review.BlindSpec(review.AUDIT), "ana")
    review.set_blind(engine, runs[2], review.BlindSpec("overlap_only", "Art", 5), "ana")
    review.set_blind(engine, runs[2], None, "ana")
    seen = review.read_visibility(engine, roles, "bob")
    assert seen.blind_runs == {runs[0], runs[2]} and seen.hidden(runs) == [runs[0], runs[2]]
    assert review.read_visibility(engine, roles, "ana").hidden(runs) == []
    review.set_blind(engine, runs[0], review.BlindSpec(review.AUDIT), "ana", on=False)
    assert review.read_visibility(engine, roles, "bob").hidden(runs) == [runs[2]]


def _app_literals() -> tuple[list[str], set[str]]:
    """The titles of app.py's navigation and the set of pages it says apply the rule themselves."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    titles = [
        kw.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page"
        for kw in node.keywords
        if kw.arg == "title" and isinstance(kw.value, ast.Constant)
    ]
    declared = next(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "APPLY_BLIND_RULE" for t in node.targets)
    )
    assert isinstance(declared, ast.Call) and declared.args, "APPLY_BLIND_RULE = frozenset({...})"
    return titles, set(ast.literal_eval(declared.args[0]))


def test_every_page_said_to_apply_the_rule_is_in_the_navigation() -> None:
    """A misspelt title would only withhold that page (the safe side); still, say so. The pages
    built on reviewers' verdicts are left to the gate."""
    titles, applying = _app_literals()
    assert len(titles) == len(set(titles)) >= 10
    assert applying <= set(titles), applying - set(titles)
    assert {"Reviewers", "True accuracy", "Matchers", "Judge", "Export"}.isdisjoint(applying)
