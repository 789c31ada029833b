"""Reading a responses file: the only place in the project that parses CSV.

Every cell stays text (``NA``, ``007`` and ``1.0`` are answers, not values), the encoding is
never guessed, and every refusal names the column, row or byte that caused it.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from scoring.core.errors import InputError

CANONICAL = {"question": "question", "answer": "answer", "domain": "Domain", "response": "response"}
REQUIRED = ("answer", "response")
SINGLE_DOMAIN = "(all)"
BLANK_DOMAIN = "(no domain)"


@dataclass
class LoadedRun:
    """A parsed responses file: canonical columns first, extra columns after, all text."""

    frame: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)

    @property
    def empty_golden(self) -> int:
        return int((self.frame["answer"] == "").sum())

    @property
    def blank_responses(self) -> int:
        return int(self.frame["response"].str.strip().eq("").sum())


def decode(data: bytes) -> str:
    """UTF-8 (BOM optional) or UTF-16 with BOM; anything else is refused with its byte offset."""
    if data.startswith(codecs.BOM_UTF8):
        encoding, body, offset = "utf-8", data[3:], 3
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, body, offset = "utf-16", data, 0
    else:
        encoding, body, offset = "utf-8", data, 0
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = body[exc.start : exc.start + 1].hex().upper()
        where = exc.start + offset
        line = body[: exc.start].count(b"\n") + 1 if encoding == "utf-8" else None
        at_line = f" (line {line})" if line else ""
        raise InputError(
            f"The file is not valid {encoding.upper()}: byte 0x{bad} at offset {where}{at_line} "
            f"cannot be decoded ({exc.reason}). Save it as UTF-8 (or UTF-16 with a BOM); "
            "other encodings such as cp1252 or Latin-1 are not guessed, because a wrong guess "
            "garbles Indic text."
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(
            f"The file contains a NUL character at character {nul}: it is binary data, "
            "not a CSV or TSV table."
        )
    return text


def _delimiter(text: str, filename: str | None) -> str:
    if filename and filename.lower().endswith((".tsv", ".tab")):
        return "\t"
    header = text.split("\n", 1)[0]
    return "\t" if header.count("\t") > header.count(",") else ","


def _parse(text: str, sep: str) -> pd.DataFrame:
    # object dtype keeps plain Python strings: scoring iterates them, and converting Arrow-backed
    # strings back to Python objects costs more than the Arrow layout saves. The C parser reads
    # UTF-8 bytes more than twice as fast as a text stream.
    try:
        return pd.read_csv(
            io.BytesIO(text.encode("utf-8")),
            encoding="utf-8",
            sep=sep,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            quoting=csv.QUOTE_MINIMAL,
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.EmptyDataError:
        raise InputError("The file is empty: expected a header row and at least one data row.") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"The file is not a well-formed table: {_parser_detail(str(exc))}") from None


def _parser_detail(message: str) -> str:
    # pandas: "Error tokenizing data. C error: Expected 4 fields in line 3, saw 5"
    marker = "C error: "
    detail = message.split(marker, 1)[1] if marker in message else message
    return detail.strip().rstrip(".") + "."


def _canonicalise(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Map header names (trimmed, any case) to the canonical ones; keep extra columns."""
    renamed: dict[str, str] = {}
    seen: dict[str, str] = {}
    for col in frame.columns:
        key = str(col).strip().lower()
        target = CANONICAL.get(key, str(col).strip())
        if target in seen:
            raise InputError(
                f"Columns {seen[target]!r} and {col!r} both mean {target!r}; keep only one."
            )
        seen[target] = str(col)
        renamed[col] = target
    frame = frame.rename(columns=renamed)
    extra = [c for c in frame.columns if c not in CANONICAL.values()]
    return frame, extra


def load_text(text: str, filename: str | None = None) -> LoadedRun:
    """Parse already-decoded text; see :func:`load_bytes`."""
    if not text.strip():
        raise InputError("The file is empty: expected a header row and at least one data row.")
    frame = _parse(text, _delimiter(text, filename))
    frame, extra = _canonicalise(frame)
    found = ", ".join(repr(str(c)) for c in frame.columns) or "none"
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        names = " and ".join(repr(m) for m in missing)
        plural = "columns" if len(missing) > 1 else "column"
        raise InputError(f"Missing required {plural} {names}. Columns found: {found}.")
    if frame.empty:
        raise InputError(f"The file has a header ({found}) but no data rows.")
    warnings: list[str] = []
    if "Domain" not in frame.columns:
        frame["Domain"] = SINGLE_DOMAIN
        warnings.append(f"No 'Domain' column: every row is put in one domain {SINGLE_DOMAIN!r}.")
    else:
        frame["Domain"] = frame["Domain"].where(frame["Domain"].str.strip() != "", BLANK_DOMAIN)
    if "question" not in frame.columns:
        frame["question"] = ""
        warnings.append("No 'question' column: questions will show as empty.")
    ordered = ["question", "answer", "Domain", "response", *extra]
    run = LoadedRun(frame=frame[ordered].reset_index(drop=True), extra_columns=extra)
    if run.empty_golden:
        warnings.append(
            f"{run.empty_golden} row(s) have an empty golden answer; they score correct under "
            "both protocols (an empty string is in every response)."
        )
    if run.blank_responses:
        warnings.append(
            f"{run.blank_responses} row(s) have a blank response; they score incorrect and are "
            "counted apart as blank."
        )
    run.warnings = warnings
    return run


def load_bytes(data: bytes, filename: str | None = None) -> LoadedRun:
    """Parse an uploaded or on-disk responses file. Raises :class:`InputError` on bad input."""
    if not data:
        raise InputError("The file is empty: expected a header row and at least one data row.")
    return load_text(decode(data), filename)


def load_path(path: str | Path) -> LoadedRun:
    """Parse a responses file from disk; a missing or unreadable file is an input error too."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.") from None
    return load_bytes(data, path.name)
