"""The metric vocabulary, defined once: each verdict source's key, the column it is read from,
the spec's name for it and its title on pages and reports.

Reports, the estimate, Compare, the charts and the CLI name the metrics from here, so a title
cannot read "Word overlap" on one page and something else on another.
"""

from __future__ import annotations

EXACT, OVERLAP, JUDGE, ADJUDICATED = "exact", "overlap", "judge", "adjudicated"

#: The column of a scored row holding each deterministic metric's verdict.
METRIC_COLUMNS: dict[str, str] = {EXACT: "exact_correct", OVERLAP: "overlap_correct"}
#: The spec's names of the two scorers (``score``'s report keys and ``--metric`` values).
SPEC_NAMES: dict[str, str] = {EXACT: "exact_substring", OVERLAP: "word_overlap"}
#: Each source's title where a sentence or a table names it.
TITLES: dict[str, str] = {
    EXACT: "Exact substring",
    OVERLAP: "Word overlap",
    JUDGE: "LLM judge",
    ADJUDICATED: "Adjudicated (final verdict)",
}
#: The shorter titles of a chart's legend and a figure's label (the judge as "Judge").
SHORT_TITLES: dict[str, str] = {
    EXACT: TITLES[EXACT],
    OVERLAP: TITLES[OVERLAP],
    JUDGE: "Judge",
    ADJUDICATED: "Adjudicated",
}
