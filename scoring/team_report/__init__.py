"""The table a team reports (issue 29): true accuracy per model and language over stored runs,
with the reviewed rows behind each cell and paired differences between models per language, as
text, CSV, JSON and a picture. ``python -m scoring table`` and the Model x language page share it.

Typical use::

    table = team_table(engine)            # every listed run; or team_table(engine, [1, 2, 5])
    table.cells, table.pairs              # TableCell per (model, language); LanguagePair per language
    cells_frame(table.cells)              # the CSV
    write_picture(table_figure(table.models, table.languages, table.cells, title), Path("t.png"))
"""

from scoring.team_report.language_pairs import PAIRS_METHOD, LanguagePair, LanguagePairs, language_pairs, pairs_frame
from scoring.team_report.stored_table import TeamTable, model_of, team_table
from scoring.team_report.table_cells import (
    CELL_COLUMNS,
    CELL_METHOD,
    ESTIMATE,
    MetricFigure,
    ModelRuns,
    TableCell,
    cells_frame,
    model_cells,
    table_cells,
    with_language,
)
from scoring.team_report.table_picture import (
    HTML_SUFFIX,
    IMAGE_SUFFIXES,
    Written,
    cell_text,
    table_figure,
    write_picture,
)

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
    "TableCell",
    "TeamTable",
    "Written",
    "cell_text",
    "cells_frame",
    "language_pairs",
    "model_cells",
    "model_of",
    "pairs_frame",
    "table_cells",
    "table_figure",
    "team_table",
    "with_language",
    "write_picture",
]
