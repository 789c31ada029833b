"""``python -m scoring table --by model,language [--runs 1,2] [--json] [--out F]``: the table a
team reports over stored runs, a row per model and a column per language.

Each cell is the estimated true accuracy with its 95% interval where the model's runs have a
reviewed random sample in that language, else the LLM judge's (else exact substring's) accuracy
with a Wilson interval, marked as the metric's; the reviewed rows behind it; then, per language,
the paired difference between each pair of models on the questions both answered. ``--by
language,model`` turns the table. ``--out`` writes the cells as CSV (``.csv``), the whole report
as JSON (``.json``), or a picture (``.png``/``.svg``/``.pdf``; HTML with the reason where no image
can be drawn here, ``.html`` always).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from scoring.cli.common import guarded, register
from scoring.core.errors import InputError
from scoring.core.same_content import duplicate_sentences
from scoring.store import open_database
from scoring.team_report import (
    IMAGE_SUFFIXES,
    TableCell,
    TeamTable,
    cell_text,
    cells_csv_frame,
    table_figure,
    table_title,
    team_table,
    write_picture,
)

BY_CHOICES = ("model,language", "language,model")
OUT_SUFFIXES = (".csv", ".json", *IMAGE_SUFFIXES, ".html")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", default="model,language", help="model,language (default) or language,model")
    parser.add_argument("--runs", help="comma-separated run ids (default: every listed run)")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", metavar="F", help="write F: .csv (cells), .json, .png/.svg/.pdf or .html (picture)")


def parse_run_ids(text: str | None) -> list[int] | None:
    """``--runs 1,3,4`` as ids (None: every listed run); :class:`InputError` for anything else."""
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--runs: {text!r} is not a list of run ids (e.g. --runs 1,3,4).") from None


def _by(text: str) -> bool:
    """True when models are the rows."""
    value = ",".join(part.strip() for part in text.split(","))
    if value not in BY_CHOICES:
        raise InputError(f"--by: {text!r} is not one of {', '.join(BY_CHOICES)}.")
    return value == BY_CHOICES[0]


def _shown(text: str) -> str:
    """A model or language name as one printable line (it is the uploader's text)."""
    return "".join(c if c.isprintable() else "?" for c in " ".join(str(text).split()))


def text_report(table: TeamTable, models_as_rows: bool = True) -> str:
    """The table as lines: one block per row (model or language), one line per cell, then the pairs."""
    rows, cols = (table.models, table.languages) if models_as_rows else (table.languages, table.models)
    lines = [table_title(table.cells, "model and language" if models_as_rows else "language and model")]
    for row in rows:
        lines.append(_shown(row))
        for col in cols:
            cell = table.cell(row, col) if models_as_rows else table.cell(col, row)
            if cell is not None:
                lines.append(f"  {_shown(col)}: {cell_text(cell)}")
    if table.pairs:
        lines.append("")
        lines.append("Paired differences per language (questions both models answered)")
        lines += [f"  {_shown(p.sentence)}" for p in table.pairs]
    lines += [f"  {_shown(line)}" for line in duplicate_sentences(table.duplicates)]
    report = table.as_dict()
    lines += [f"left out, damaged: #{r['id']} {_shown(r['name'])}: {_shown(r['reason'])}" for r in report["skipped"]]
    lines += ["", f"cells: {report['cell_method']}", f"pairs: {report['pairs_method']}"]
    return "\n".join(lines)


def write_out(table: TeamTable, path: Path, models_as_rows: bool = True) -> str:
    """Write ``path`` by its suffix; the line saying what was written."""
    suffix = path.suffix.lower()
    if suffix not in OUT_SUFFIXES:
        raise InputError(f"--out: {path.name!r} must end in one of {', '.join(OUT_SUFFIXES)}.")
    if suffix == ".csv":
        cells_csv_frame(table.cells).write_csv(path)
        return f"wrote {len(table.cells)} cells to {path}"
    if suffix == ".json":
        path.write_text(json.dumps(table.as_dict(), ensure_ascii=False, indent=2), encoding="utf-8")
        return f"wrote the report to {path}"
    rows, cols = (table.models, table.languages) if models_as_rows else (table.languages, table.models)
    cells = table.cells if models_as_rows else [_turned(c) for c in table.cells]
    title = table_title(table.cells, "model and language" if models_as_rows else "language and model")
    written = write_picture(table_figure(rows, cols, cells, title), path)
    note = f" ({written.fallback_reason}; wrote HTML instead)" if written.fallback_reason else ""
    return f"wrote the picture to {written.path}{note}"


def _turned(cell: TableCell) -> TableCell:
    """A cell with model and language swapped, for the turned picture."""
    return replace(cell, model=cell.language, language=cell.model)


@register("table", "true accuracy per model and language over stored runs, with paired differences", _configure)
def cmd_table(args: argparse.Namespace) -> int:
    """``python -m scoring table``; see the module docstring."""

    def body() -> None:
        models_as_rows = _by(args.by)
        ids = parse_run_ids(args.runs)
        table = team_table(open_database(args.db), ids, strict=ids or ())
        if args.out:
            message = write_out(table, Path(args.out), models_as_rows)
        if args.json:
            print(json.dumps(table.as_dict(), ensure_ascii=False, indent=2))
        else:
            print(text_report(table, models_as_rows))
        if args.out:  # after a JSON report, on stderr: stdout holds the JSON alone (a pipe reads it)
            print(message, file=sys.stderr if args.json else sys.stdout)

    return guarded(body)
