"""``python -m scoring export``: a run's adjudicated verdicts as CSV, JSONL or Parquet, with a manifest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scoring.cli.common import fail, guarded, register
from scoring.core.errors import InputError
from scoring.store import open_database
from scoring.verdict_export import export_file


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, type=int, help="id of the run to export")
    parser.add_argument(
        "--out",
        required=True,
        help="output file; the manifest goes to OUT.manifest.json (and, for Parquet, into the file's metadata)",
    )
    parser.add_argument(
        "--format", choices=("csv", "jsonl", "parquet"), default="csv", help="file format (default csv)"
    )
    parser.add_argument("--bom", action="store_true", help="start the CSV with a UTF-8 BOM (for Excel)")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument(
        "--judge",
        action="store_true",
        help="add each row's judge label (judge_label): the run's chosen judge configuration, "
        "else the latest label of each row until one is chosen",
    )
    parser.add_argument(
        "--judge-settles",
        action="store_true",
        help="let a CORRECT/INCORRECT judge label settle overlap_only rows without a human verdict (implies --judge)",
    )


@register("export", "adjudicated verdicts of a run as CSV, JSONL or Parquet, with a manifest", _configure)
def cmd_export(args: argparse.Namespace) -> int:
    """``python -m scoring export --run ID --out F``: the file plus ``F.manifest.json``."""
    if args.bom and args.format != "csv":
        return fail("--bom applies to CSV only.")

    def body() -> None:
        engine = open_database(args.db)
        # One rule for every reader: the run's chosen configuration, else the latest label of each row.
        written = export_file(
            engine, args.run, args.format, judge=args.judge, judge_settles=args.judge_settles, bom=args.bom
        )
        data, info = written.data, written.manifest
        judge_config = info.get("judge_configuration")  # named only when the file carries the labels
        out = Path(args.out)
        side = Path(f"{args.out}.manifest.json")
        try:
            out.write_bytes(data)
            side.write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"Cannot write {str(exc.filename or out)!r}: {exc.strerror or exc}.") from None
        sources = ", ".join(f"{k} {v}" for k, v in info["counts"]["final_source"].items())
        print(f"wrote {written.rows} rows to {out} ({sources}); manifest {side}")
        if judge_config is not None:
            print(f"Judge: {judge_config}.")

    return guarded(body)
