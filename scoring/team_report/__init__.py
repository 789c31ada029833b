"""The table a team reports (issue 29): true accuracy per model and language over stored runs,
with the reviewed rows behind each cell and paired differences between models per language, as
text, CSV, JSON and a picture; and the report a team sends (issue 37): one self-contained HTML
file, or its Markdown twin, holding the table, the sentences, per-domain charts, the method and
each run's provenance. ``python -m scoring table`` / ``report`` and the Model x language page
share it.

Typical use::

    table = team_table(engine)            # every listed run; or team_table(engine, [1, 2, 5])
    table.cells, table.pairs              # TableCell per (model, language); LanguagePair per language
    cells_csv_frame(table.cells)          # the CSV (percentages)
    write_picture(table_figure(table.models, table.languages, table.cells, table_title(table.cells)), Path("t.png"))
    report_html(team_report(engine))      # the report a team sends
"""

from scoring.team_report.language_pairs import PAIRS_METHOD, LanguagePair, LanguagePairs, language_pairs, pairs_frame
from scoring.team_report.report_content import RunSource, TeamReport, rows_sha256, team_report
from scoring.team_report.report_html import report_html
from scoring.team_report.report_markdown import report_markdown
from scoring.team_report.stored_table import TeamTable, model_of, team_table
from scoring.team_report.table_cells import (
    CELL_METHOD,
    ESTIMATE,
    MetricFigure,
    ModelRuns,
    TableCell,
    model_cells,
    table_cells,
    with_language,
)
from scoring.team_report.table_csv import CELL_COLUMNS, cells_csv_frame, pairs_csv_frame
from scoring.team_report.table_picture import (
    HTML_SUFFIX,
    IMAGE_SUFFIXES,
    Written,
    cell_text,
    table_figure,
    write_picture,
)
from scoring.team_report.table_words import source_sentence, source_words, table_title

__all__ = [
    "CELL_COLUMNS",
    "CELL_METHOD",
    "ESTIMATE",
    "HTML_SUFFIX",
    "IMAGE_SUFFIXES",
    "PAIRS_METHOD",
    "LanguagePair",
    "LanguagePairs",
    "MetricFigure",
    "ModelRuns",
    "RunSource",
    "TableCell",
    "TeamReport",
    "TeamTable",
    "Written",
    "cell_text",
    "cells_csv_frame",
    "language_pairs",
    "model_cells",
    "model_of",
    "pairs_csv_frame",
    "pairs_frame",
    "report_html",
    "report_markdown",
    "rows_sha256",
    "source_sentence",
    "source_words",
    "table_cells",
    "table_figure",
    "table_title",
    "team_report",
    "team_table",
    "with_language",
    "write_picture",
]
