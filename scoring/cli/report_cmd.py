"""``python -m scoring report [--runs 1,2] [--out report.html|report.md] [--json]``: the report a
team sends, over stored runs.

One self-contained HTML file (``.html``: opens with no network, charts drawn inline) or its
Markdown twin (``.md``), holding the model x language table in percentages with intervals, the
reviewed rows and source of each cell, the per-language sentences, per-domain charts, the method
in plain words and each run's provenance (:mod:`scoring.team_report.report_content`). The same
file as the Model x language page's button. Without ``--out`` the Markdown is printed; ``--json``
prints the report's content as JSON (and says what ``--out`` wrote on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scoring.cli.common import guarded, register
from scoring.cli.table_cmd import parse_run_ids
from scoring.core.errors import InputError
from scoring.store import open_database
from scoring.team_report import report_html, report_markdown, team_report

OUT_SUFFIXES = (".html", ".htm", ".md")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", help="comma-separated run ids (default: every listed run)")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--out", metavar="F", help="write F: .html (self-contained) or .md (Markdown)")
    parser.add_argument("--json", action="store_true", help="print the report's content as JSON")


@register("report", "the report a team sends: one self-contained HTML (or Markdown) file over stored runs", _configure)
def cmd_report(args: argparse.Namespace) -> int:
    """``python -m scoring report``; see the module docstring."""

    def body() -> None:
        path = Path(args.out) if args.out else None
        if path is not None and path.suffix.lower() not in OUT_SUFFIXES:
            raise InputError(f"--out: {path.name!r} must end in .html or .md.")
        ids = parse_run_ids(args.runs)
        report = team_report(open_database(args.db), ids, strict=ids or ())
        if path is not None:
            text = report_markdown(report) if path.suffix.lower() == ".md" else report_html(report)
            path.write_text(text, encoding="utf-8")
            message = f"wrote the report to {path} ({len(report.table.cells)} cells, {len(report.runs)} runs)"
        if args.json:
            print(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        elif path is None:
            print(report_markdown(report), end="")
        if path is not None:
            print(message, file=sys.stderr if args.json else sys.stdout)

    return guarded(body)
