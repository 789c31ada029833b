"""Reading a responses file: the only place in the project that parses CSV (and, through
:mod:`scoring.core.formats`, JSON lines, JSON arrays and Parquet, each optionally gzipped).

Every cell stays text (``NA``, ``007`` and ``1.0`` are answers, not values), the encoding is
never guessed, and every refusal names the column, row or byte that caused it.

Files are read by polars (:mod:`scoring.core.fast_csv`) into a polars table of strings. A file
polars might read differently from pandas' C parser, or cannot read, is parsed by pandas, the
reference: it gives the same table or the refusal with its line or byte.
"""

from __future__ import annotations

import codecs
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from scoring.core import formats, limits
from scoring.core.columnar import patterns
from scoring.core.errors import InputError
from scoring.core.fast_csv import read_polars
from scoring.core.formats import (
    GZIP_MAGIC,
    PARQUET_MAGIC,
    ZIP_MAGIC,
    check_line_lengths,
    sniff,
    ungzip,
)
from scoring.core.harness import read_harness
from scoring.core.harness import sniff as harness_kind
from scoring.core.row_language import LANGUAGE, language_field, take_language
from scoring.core.text_tables import read_json, read_jsonl, read_jsonl_fast, read_parquet

if TYPE_CHECKING:
    import pandas as pd

CANONICAL = {
    "question": "question",
    "answer": "answer",
    "domain": "Domain",
    "response": "response",
    "language": LANGUAGE,
}
REQUIRED = ("answer", "response")
_PLAIN = ("csv", "tsv", "jsonl", "json", "parquet")  #: formats that are not a harness's log
SINGLE_DOMAIN = "(all)"
BLANK_DOMAIN = "(no domain)"


@dataclass
class LoadedRun:
    """A parsed responses file: canonical columns first, extra columns after, all text.

    ``table`` is what the project computes on; ``frame`` is the same as pandas, made on first
    use, for callers that want pandas.
    """

    table: pl.DataFrame
    warnings: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)
    empty_golden: int = 0
    blank_responses: int = 0
    #: ``csv``, ``tsv``, ``jsonl``, ``json``, ``parquet`` or a harness's name
    format: str = "csv"
    #: the column mapping applied (canonical name -> the file's field), empty when names matched
    columns: dict[str, str] = field(default_factory=dict)
    #: the model a harness's log names (None for plain tables)
    model: str | None = None
    #: the file's own field names, before any renaming (what a remembered mapping is keyed on)
    source_fields: list[str] = field(default_factory=list)
    #: where the ``language`` column came from (``column:<field>``, ``metadata``), None without one
    #: (:mod:`scoring.core.row_language`)
    language_from: str | None = None
    _frame: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = self.table.to_pandas().astype(object)  # plain str cells, as pandas read them
        return self._frame


class MissingColumns(InputError):
    """The required fields were not found by name: the fields there are, with a few values of
    each, so the Upload page can ask which is which (a CLI names them with ``--columns``)."""

    def __init__(self, message: str, missing: list[str], examples: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.missing = missing
        self.examples = examples

    @property
    def fields(self) -> list[str]:
        return list(self.examples)


def parse_columns(spec: str) -> dict[str, str]:
    """``answer=target,response=output,Domain=category`` as a mapping (canonical -> field)."""
    mapping: dict[str, str] = {}
    for part in (p for p in spec.split(",") if p.strip()):
        target, sep, source = part.partition("=")
        if not sep or not source.strip():
            raise InputError(f"--columns: {part.strip()!r} is not NAME=FIELD (e.g. answer=target,response=output).")
        mapping[target.strip()] = source.strip()
    return check_columns(mapping)


def check_columns(mapping: Mapping[str, str]) -> dict[str, str]:
    """The mapping with canonical keys; an unknown key or a field used twice is refused."""
    out: dict[str, str] = {}
    for target, source in mapping.items():
        canon = CANONICAL.get(str(target).strip().lower())
        if canon is None:
            raise InputError(
                f"Column mapping: {target!r} is not a field to map; map question, answer, response, Domain or language."
            )
        if canon in out:
            raise InputError(f"Column mapping: {canon!r} is mapped twice.")
        if source in out.values():
            raise InputError(f"Column mapping: the field {source!r} is mapped to two names.")
        out[canon] = str(source)
    return out


def apply_columns(table: pl.DataFrame, mapping: Mapping[str, str]) -> pl.DataFrame:
    """``table`` with each mapped field renamed to its canonical name; a column that already had
    that name (in any case) is kept as ``<name>_original`` so nothing in the file is lost."""
    mapping = check_columns(mapping)
    fields = ", ".join(repr(c) for c in table.columns)
    for canon, source in mapping.items():
        if source not in table.columns:
            raise InputError(f"Column mapping {canon}={source}: the file has no field {source!r}. Fields: {fields}.")
    sources = set(mapping.values())
    rename: dict[str, str] = {}
    for col in table.columns:
        canon = CANONICAL.get(col.strip().lower())
        if col not in sources and canon in mapping:
            rename[col] = f"{col.strip()}_original"
    rename.update({source: canon for canon, source in mapping.items()})
    return table.rename(rename)


#: Field names harnesses and datasets use for each canonical one, most likely first (the Upload
#: page preselects the first found; nothing is mapped without the user's say).
SYNONYMS = {
    "question": ("question", "input", "prompt", "query", "problem"),
    "answer": ("answer", "target", "gold", "golden", "expected", "reference", "label", "ground_truth"),
    "response": ("response", "prediction", "output", "completion", "model_answer", "generation", "answer_pred"),
    "Domain": ("domain", "category", "subject", "topic", "task"),
    LANGUAGE: ("language", "lang"),
}


def mapping_text(mapping: Mapping[str, str]) -> str:
    """``answer = target, response = output``: a mapping as the page and the CLI print it."""
    return ", ".join(f"{canon} = {source}" for canon, source in mapping.items())


def suggest_columns(fields: list[str]) -> dict[str, str]:
    """A first guess at the mapping from the fields' names (see :data:`SYNONYMS`), each field used once."""
    lowered = {f.strip().lower(): f for f in reversed(fields)}
    out: dict[str, str] = {}
    for canon, names in SYNONYMS.items():
        found = next((lowered[n] for n in names if n in lowered and lowered[n] not in out.values()), None)
        if found is not None:
            out[canon] = found
    return out


#: How many of a file's field names a message lists, each cut to :data:`_NAME_CHARS` (a header
#: line of 50 MB must not come back as a 50 MB message).
_NAMES_SHOWN, _NAME_CHARS = 30, 80


def _short(text: str) -> str:
    return text if len(text) <= _NAME_CHARS else text[: _NAME_CHARS - 1] + "…"


def _examples(table: pl.DataFrame, count: int = 3) -> dict[str, list[str]]:
    """Per field, its first few non-empty values (shortened), for a mapping's select boxes."""
    out: dict[str, list[str]] = {}
    for col in table.columns:
        values = table[col].cast(pl.String).drop_nulls()
        values = values.filter(values.str.strip_chars() != "").head(count).to_list()
        out[str(col)] = [_short(v) for v in values]
    return out


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
            f"The file contains a NUL character at character {nul}: it is binary data, not a CSV or TSV table."
        )
    return text


def _delimiter(text: str, filename: str | None) -> str:
    if filename and filename.lower().endswith((".tsv", ".tab")):
        return "\t"
    header = text.split("\n", 1)[0]
    return "\t" if header.count("\t") > header.count(",") else ","


def _canonical_names(columns: list[str]) -> dict[str, str]:
    """Map header names (trimmed, any case) to the canonical ones; extra columns keep theirs."""
    renamed: dict[str, str] = {}
    seen: dict[str, str] = {}
    for col in columns:
        key = str(col).strip().lower()
        target = CANONICAL.get(key, str(col).strip())
        if target in seen:
            raise InputError(f"Columns {seen[target]!r} and {col!r} both mean {target!r}; keep only one.")
        seen[target] = str(col)
        renamed[col] = target
    return renamed


def _reference_table(text: str, sep: str) -> pl.DataFrame:
    """pandas' reading (:mod:`scoring.core.reference_csv`), imported only when a file needs it:
    half a second of importing pandas that reading a well-formed file should not pay."""
    return importlib.import_module("scoring.core.reference_csv").reference_table(text, sep)


def _blank(column: str) -> pl.Expr:
    """Empty or whitespace only, whitespace as ``str.isspace`` has it (``str.strip() == ""``)."""
    return pl.col(column).str.contains(patterns()["blank"])


def _finish(
    table: pl.DataFrame, columns: Mapping[str, str] | None = None, fmt: str = "csv", model: str | None = None
) -> LoadedRun:
    """Canonical names and order, every cell text, the warnings; refusals name the columns."""
    raw = table
    if columns:
        table = apply_columns(table, columns)
    table = table.rename(_canonical_names(table.columns))
    checked = check_columns(columns or {})
    found = ", ".join(repr(_short(c)) for c in table.columns[:_NAMES_SHOWN]) or "none"
    if table.width > _NAMES_SHOWN:
        found += f" and {table.width - _NAMES_SHOWN} more"
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        names = " and ".join(repr(m) for m in missing)
        plural = "columns" if len(missing) > 1 else "column"
        raise MissingColumns(
            f"Missing required {plural} {names}. Columns found: {found}. Say which field is which (on the Upload "
            f"page, or --columns {missing[0]}=FIELD on the command line).",
            missing,
            _examples(raw),
        )
    if table.height == 0:
        raise InputError(f"The file has a header ({found}) but no data rows.")
    table = table.with_columns(pl.all().cast(pl.String))
    with_nulls = [name for name, count in zip(table.columns, table.null_count().row(0)) if count]
    # "" where a cell is missing, only those rows written (fill_null wrote the whole column anew)
    table = table.with_columns(table[n].clone().scatter(table[n].is_null().arg_true(), "") for n in with_nulls)
    table, language_from = take_language(table, language_field(raw.columns, checked), fmt not in _PLAIN)
    warnings: list[str] = []
    if "Domain" not in table.columns:
        table = table.with_columns(Domain=pl.lit(SINGLE_DOMAIN))
        warnings.append(f"No 'Domain' column: every row is put in one domain {SINGLE_DOMAIN!r}.")
    else:
        table = table.with_columns(Domain=pl.when(_blank("Domain")).then(pl.lit(BLANK_DOMAIN)).otherwise("Domain"))
    if "question" not in table.columns:
        table = table.with_columns(question=pl.lit(""))
        warnings.append("No 'question' column: questions will show as empty.")
    extra = [c for c in table.columns if c not in CANONICAL.values()]
    table = table.select("question", "answer", "Domain", *([LANGUAGE] if language_from else []), "response", *extra)
    counts = table.select(empty=(pl.col("answer") == "").sum(), blank=_blank("response").sum()).row(0)
    run = LoadedRun(
        table=table,
        extra_columns=extra,
        empty_golden=int(counts[0]),
        blank_responses=int(counts[1]),
        format=fmt,
        columns=checked,
        model=model,
        source_fields=[str(c) for c in raw.columns],
        language_from=language_from,
    )
    if run.empty_golden:
        warnings.append(
            f"{run.empty_golden} row(s) have an empty golden answer; they score correct under "
            "both protocols (an empty string is in every response)."
        )
    if run.blank_responses:
        warnings.append(
            f"{run.blank_responses} row(s) have a blank response; they score incorrect and are counted apart as blank."
        )
    run.warnings = warnings
    return run


def load_text(text: str, filename: str | None = None, columns: Mapping[str, str] | None = None) -> LoadedRun:
    """Parse already-decoded CSV or TSV text; see :func:`load_bytes`."""
    if not text.strip():
        raise InputError("The file is empty: expected a header row and at least one data row.")
    sep = _delimiter(text, filename)
    return _finish(_reference_table(text, sep), columns, "tsv" if sep == "\t" else "csv")


def is_results_companion(data: bytes, filename: str | None) -> bool:
    """Whether a file is lm-evaluation-harness's ``results_*.json`` (uploaded beside its samples
    file to name the model, not a run of its own)."""
    name = Path(filename or "").name
    return "results" in name and name.endswith(".json") and b'"results"' in data[: 1 << 20]


def load_bytes(
    data: bytes,
    filename: str | None = None,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
) -> LoadedRun:
    """Parse an uploaded or on-disk responses file: CSV, TSV, JSON lines, a JSON array or Parquet,
    any of them gzipped, the format found from the content (:func:`scoring.core.formats.sniff`),
    or a harness's log (Inspect AI, lm-evaluation-harness, promptfoo: :mod:`scoring.core.harness`;
    ``companions``: files given with it, such as lm-eval's ``results_*.json``). ``columns`` maps
    canonical names to the file's fields (``{"answer": "target"}``). Raises :class:`InputError` on
    bad input (:class:`MissingColumns` when required fields are not found)."""
    table, fmt, model = read_table(data, filename, companions)
    return _finish(table, columns, fmt, model)


def field_examples(
    data: bytes, filename: str | None = None, companions: Mapping[str, bytes] | None = None
) -> dict[str, list[str]]:
    """The file's own fields with a few values of each (a mapping's select boxes, when the user
    chooses the fields themselves although the names matched: another metadata field as the domain)."""
    return _examples(read_table(data, filename, companions)[0])


def read_table(
    data: bytes, filename: str | None = None, companions: Mapping[str, bytes] | None = None
) -> tuple[pl.DataFrame, str, str | None]:
    """(the file's table as read, its format, the model a harness's log names): see :func:`load_bytes`.

    The readers name a line nested too deeply themselves; a RecursionError from anywhere else (a
    harness's own reader) is still one message, never a traceback.
    """
    try:
        return _read_table(data, filename, companions)
    except RecursionError:
        raise InputError(
            "The file is nested too deeply to read (JSON or Parquet values hundreds of levels deep)."
        ) from None


def _read_table(
    data: bytes, filename: str | None, companions: Mapping[str, bytes] | None
) -> tuple[pl.DataFrame, str, str | None]:
    if not data:
        raise InputError("The file is empty: expected a header row and at least one data row.")
    bound = limits.current(formats.MAX_INFLATED)  # rows, columns, unpacked bytes (see scoring.core.limits)
    measured = data.startswith(GZIP_MAGIC)  # ungzip measures the lines and counts the rows as it unpacks them
    data, filename = ungzip(data, filename, bound)
    if not measured and not data.startswith((PARQUET_MAGIC, ZIP_MAGIC)):
        check_line_lengths(data)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        data, measured = decode(data).encode("utf-8"), False  # one path for the text formats below
    body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
    if not measured and not body.startswith((PARQUET_MAGIC, ZIP_MAGIC)) and limits.line_endings(body) > bound.rows:
        end = body.find(b"\n")  # more lines than rows allowed: count the rows, before any parser builds them
        limits.RowCount(bound, limits.text_kind(body[: end if end >= 0 else len(body)])).feed(body)
    table, fmt, model = _parsed(body, data, filename, companions, bound)
    bound.check_rows(table.height)  # what the counts above could not see: a JSON document's samples
    bound.check_columns(table.width)
    return table, fmt, model


def _parsed(
    body: bytes, data: bytes, filename: str | None, companions: Mapping[str, bytes] | None, bound: limits.Limits
) -> tuple[pl.DataFrame, str, str | None]:
    """The table of ``body`` (``data`` with any UTF-8 BOM) by the reader its content calls for."""
    harness = harness_kind(body, filename)
    if harness is not None:
        table = read_harness(harness, body, filename, companions=dict(companions or {}))
        models = table["model"].unique().to_list() if "model" in table.columns else []
        return table, harness, models[0] if len(models) == 1 and models[0] else None
    kind = sniff(body, filename)
    if kind == "parquet":
        return read_parquet(body, bound), "parquet", None
    if kind == "zip":
        raise InputError("The file is a zip archive (binary data), not a responses table or an Inspect AI .eval log.")
    if kind == "jsonl":
        fast = read_jsonl_fast(body, bound)  # None unless every value is a string (pyarrow checks the UTF-8 too)
        return (read_jsonl(decode(data), bound) if fast is None else fast), kind, None
    if kind == "json":
        return read_json(decode(data), bound), kind, None
    if b"\x00" in body or not body or body.isspace():
        text = _nonempty(decode(data))  # decode() refuses NUL bytes with their place
        sep = _delimiter(text, filename)
        return _reference_table(text, sep), "tsv" if sep == "\t" else "csv", None
    line_end = body.find(b"\n")
    sep = _delimiter(body[: line_end if line_end >= 0 else len(body)].decode("utf-8", "replace"), filename)
    if limits.header_line(body).count(sep.encode()) >= bound.columns:  # more separators than allowed: count cells
        bound.check_columns(limits.header_cells(body, sep))
    fmt = "tsv" if sep == "\t" else "csv"
    table = read_polars(body, sep)
    if table is None:
        return _reference_table(_nonempty(decode(data)), sep), fmt, None
    return table, fmt, None


def _nonempty(text: str) -> str:
    if not text.strip():
        raise InputError("The file is empty: expected a header row and at least one data row.")
    return text


def load_path(path: str | Path, columns: Mapping[str, str] | None = None) -> LoadedRun:
    """Parse a responses file from disk; a missing or unreadable file is an input error too. An
    lm-evaluation-harness samples file reads the ``results_*.json`` beside it for the model."""
    path = Path(path)
    try:
        data = path.read_bytes()
        companions = {}
        if "samples" in path.name and ".jsonl" in path.name:
            companions = {p.name: p.read_bytes() for p in sorted(path.parent.glob("*results*.json"))}
    except OSError as exc:
        raise InputError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.") from None
    return load_bytes(data, path.name, columns, companions)
