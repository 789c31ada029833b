"""What every command line of the project shares: errors as one line and exit code 2, the common
flags, reading a responses file, writing a CSV, and the registry of ``python -m scoring``
subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from scoring.core.errors import InputError
from scoring.core.loader import LoadedRun, load_path, parse_columns

if TYPE_CHECKING:
    import pandas as pd

EXIT_BAD_INPUT = 2


def fail(message: str) -> int:
    """One clear line on stderr; the caller returns the exit code."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    add_input_flags(parser)
    parser.add_argument("--out", help="write per-row verdicts to this CSV (UTF-8)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--normalize", action="store_true", help="diagnostic: NFC, strip format chars, fold digits")


def add_input_flags(parser: argparse.ArgumentParser, responses: bool = True) -> None:
    """``--responses`` (unless the command takes files itself) and ``--columns``."""
    if responses:
        parser.add_argument(
            "--responses",
            required=True,
            help="responses file: CSV, TSV, JSONL, JSON or Parquet (gzip too), with answer and "
            "response fields (or name them with --columns)",
        )
    parser.add_argument(
        "--columns",
        metavar="MAP",
        help="which field is which when the names differ, e.g. answer=target,response=output,"
        "Domain=category,language=lang (question, answer, response, Domain, language)",
    )


def load_for_cli(path: str, columns: str | None = None, named: bool = False) -> LoadedRun:
    """The file read with the ``--columns`` mapping; warnings on stderr. ``named``: prefix each
    message with the file's path (commands that read several files)."""
    prefix = f"{path}: " if named else ""
    try:
        run = load_path(path, parse_columns(columns) if columns else None)
    except InputError as exc:
        raise InputError(f"{prefix}{exc}") from None
    for warning in run.warnings:
        print(f"warning: {prefix}{warning}", file=sys.stderr)
    return run


def csv_cells(table: pl.DataFrame) -> pl.DataFrame:
    """Cells as the spec's scripts write them: booleans ``True``/``False``, an empty text cell
    unquoted (polars would write ``""``); missing values stay empty."""
    strings = [name for name, dtype in table.schema.items() if dtype == pl.String]
    has_empty = table.select((pl.col(name).str.len_bytes() == 0).any() for name in strings).row(0) if strings else ()
    empty = {name for name, found in zip(strings, has_empty) if found}
    cells = []
    for name, dtype in table.schema.items():
        col = pl.col(name)
        if dtype == pl.Boolean:
            cells.append(pl.when(col).then(pl.lit("True")).when(~col).then(pl.lit("False")).alias(name))
        elif name in empty:  # rewriting a column costs a copy of its text: only where needed
            cells.append(pl.when(col != "").then(col).alias(name))
        else:
            cells.append(col)
    return table.select(cells)


def write_csv(frame: pd.DataFrame | pl.DataFrame, out: str) -> None:
    """UTF-8, input order, booleans as True/False; written by polars (a million rows in a few
    tenths of a second). A cell holding a line break of either kind is quoted."""
    table = frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame)
    try:
        csv_cells(table).write_csv(Path(out), quote_style="necessary", line_terminator="\n")
    except OSError as exc:
        raise InputError(f"Cannot write {out!r}: {exc.strerror or exc}.") from None


def guarded(body: Callable[[], None]) -> int:
    """Run a command body, turning input errors and database failures (a damaged file, a schema
    made by newer code, a wrong password...: :mod:`scoring.store.failures`) into one stderr line
    and exit code 2."""
    try:
        body()
    except InputError as exc:
        return fail(str(exc))
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # Imported only on failure: ``score`` never opens a database and should not import one.
        found = importlib.import_module("scoring.store.failures").describe(exc)
        if found is None:
            raise
        return fail(found.message)
    return 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def register(name: str, help_text: str, configure: Callable[[argparse.ArgumentParser], None]):
    """Decorator: add a subcommand to ``python -m scoring`` (later modules add export, compare)."""

    def wrap(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = (help_text, configure, func)
        return func

    return wrap
