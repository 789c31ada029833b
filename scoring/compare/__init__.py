"""Comparing runs: matching their rows, per-run accuracy per verdict source, paired statistics
on the matched rows, and the questions two runs disagree on. Pure functions on polars frames
(no streamlit, no database): the Compare page and ``python -m scoring compare`` share them.
Stored runs load through :func:`scoring.compare.database_runs.stored_run` (imported by name: it pulls in
the database layer).

Typical use::

    runs = [scored_run("a.csv", load_path("a.csv").table), scored_run("b.csv", load_path("b.csv").table)]
    choice = default_key(runs)                     # id column when every run has one
    match = match_runs(runs, choice.key)
    accuracy_table(runs)                           # per run, source, domain: Wilson intervals
    paired_comparisons(match)                      # b, c, difference, Newcombe interval, McNemar p, Holm
    discordant_rows(match, 0, 1, sources=["exact"], domains=["Art"])
"""

from scoring.compare.answer import lead_sentences
from scoring.compare.compared_runs import (
    ADJUDICATED,
    EXACT,
    JUDGE,
    OVERLAP,
    SOURCE_COLUMNS,
    SOURCE_TITLES,
    SOURCES,
    UNKNOWN_RULE,
    Run,
    SourceAccuracy,
    accuracy_table,
    make_run,
    run_accuracy,
    scored_run,
    unique_labels,
    verdict_column,
)
from scoring.compare.heatmap import HeatCell, heat_cells
from scoring.compare.matching import (
    DUPLICATE,
    EMPTY_KEY,
    ID_CANDIDATES,
    NOT_EVERYWHERE,
    REASONS,
    ROW,
    RUN_FIELDS,
    TEXT_KEY,
    UNMATCHED_COLUMNS,
    KeyChoice,
    MatchResult,
    check_key,
    default_key,
    match_runs,
    readable_matched,
    run_column,
    shared_id_column,
)
from scoring.compare.paired import (
    ADJUSTMENT_METHOD,
    ALL_MATCHED,
    DECIDED_IN_BOTH,
    INTERVAL_METHOD,
    TEST_METHOD,
    PairedComparison,
    discordant_rows,
    paired_comparisons,
    paired_table,
)

__all__ = [
    "ADJUDICATED",
    "ADJUSTMENT_METHOD",
    "ALL_MATCHED",
    "DECIDED_IN_BOTH",
    "DUPLICATE",
    "EMPTY_KEY",
    "EXACT",
    "ID_CANDIDATES",
    "INTERVAL_METHOD",
    "JUDGE",
    "NOT_EVERYWHERE",
    "OVERLAP",
    "REASONS",
    "ROW",
    "RUN_FIELDS",
    "SOURCES",
    "SOURCE_COLUMNS",
    "SOURCE_TITLES",
    "TEST_METHOD",
    "TEXT_KEY",
    "UNKNOWN_RULE",
    "UNMATCHED_COLUMNS",
    "HeatCell",
    "KeyChoice",
    "MatchResult",
    "heat_cells",
    "PairedComparison",
    "Run",
    "SourceAccuracy",
    "accuracy_table",
    "check_key",
    "default_key",
    "discordant_rows",
    "lead_sentences",
    "make_run",
    "match_runs",
    "paired_comparisons",
    "paired_table",
    "readable_matched",
    "run_accuracy",
    "run_column",
    "scored_run",
    "shared_id_column",
    "unique_labels",
    "verdict_column",
]
