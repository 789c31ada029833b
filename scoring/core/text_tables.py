"""Reading JSON lines, JSON and Parquet files into a table of text, as the CSV reader keeps it.

Every cell becomes text: a JSON string as is, a number as its literal text (``1.50`` stays
``1.50``), a boolean ``true``/``false``, null an empty cell, a nested value its compact JSON.
Parquet values are written the same way (numbers by polars' formatting, which is exact for
integers). Which format a file is in, and unpacking it, is :mod:`scoring.core.formats`' job.
"""

from __future__ import annotations

import importlib
import io
import json
import re

import polars as pl
import pyarrow as pa
import pyarrow.json as pa_json

from scoring.core.errors import InputError
from scoring.core.limits import Limits

_SURROGATE = re.compile("[\ud800-\udfff]")
#: pyarrow's JSON block (:func:`read_jsonl_fast`): rows are parsed a block at a time, on both cores.
_JSON_BLOCK = 8 << 20  # pyarrow reads a longer line whole too, in one block


class _Number(str):
    """A JSON number kept as its literal text."""


class _Raw(str):
    """Text :func:`_compact` writes as it is (brackets, commas, keys)."""


def _compact(value: object) -> str:
    """Compact JSON of a parsed value whose numbers are :class:`_Number` (written as they came).

    Recursive, which is twice as fast as :func:`_compact_deep` on the shallow values files hold; a
    value too deep for the interpreter's stack (``json.loads`` accepts about 1,000 levels, this
    spends two frames a level) is written by :func:`_compact_deep` instead of failing.
    """
    try:
        return _compact_shallow(value)
    except RecursionError:
        return _compact_deep(value)


def _compact_shallow(value: object) -> str:
    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _compact_shallow(v) for k, v in value.items())
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(_compact_shallow(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _compact_deep(value: object) -> str:
    """:func:`_compact` with an explicit stack: any depth, no recursion."""
    out: list[str] = []
    todo: list[object] = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, (_Raw, _Number)):
            out.append(str(item))
        elif isinstance(item, dict):
            todo.append(_Raw("}"))
            for i, (key, inner) in reversed(list(enumerate(item.items()))):
                todo.append(inner)
                todo.append(_Raw(("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"))
            out.append("{")
        elif isinstance(item, list):
            todo.append(_Raw("]"))
            for i in range(len(item) - 1, -1, -1):
                todo.append(item[i])
                if i:
                    todo.append(_Raw(","))
            out.append("[")
        else:
            out.append(json.dumps(item, ensure_ascii=False))
    return "".join(out)


def cell_text(value: object) -> str:
    """A parsed JSON value as a cell's text (see the module)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    return _compact(value)


def _first_wins(pairs: list[tuple[str, object]]) -> dict:
    """An object's fields, a repeated one keeping its first value (the one a reader of the line sees
    first; pyarrow's reader refuses such a file and leaves it to this one)."""
    out: dict = {}
    for key, value in pairs:
        out.setdefault(key, value)
    return out


def _loads(text: str) -> object:
    return json.loads(
        text, parse_int=_Number, parse_float=_Number, parse_constant=_Number, object_pairs_hook=_first_wins
    )


def records_table(records: list[dict], where: str = "row") -> pl.DataFrame:
    """A table of text from parsed records (fields in first-seen order, absent fields empty)."""
    fields: dict[str, None] = {}
    for record in records:
        fields.update(dict.fromkeys(record))
    columns = {f: [cell_text(r.get(f)) for r in records] for f in fields}
    try:
        return pl.DataFrame({f: pl.Series(f, v, dtype=pl.String) for f, v in columns.items()})
    except UnicodeEncodeError:  # a lone surrogate escape such as \ud800: no character at all
        field, number, found = next(
            (f, i, m) for f, v in columns.items() for i, text in enumerate(v, start=1) if (m := _SURROGATE.search(text))
        )
        raise InputError(
            f"{where.capitalize()} {number}, field {field!r}: a lone surrogate escape (\\u"
            f"{ord(found.group()):04x}) that is no character; the file was written from broken UTF-16 "
            "text."
        ) from None


def read_jsonl(text: str, bound: Limits | None = None) -> pl.DataFrame:
    """One JSON object per line (blank lines skipped); a bad line is refused with its number, and
    so is the line that brings the fields past ``bound.columns``."""
    records: list[dict] = []
    fields: set[str] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = _loads(line)
        except RecursionError:
            raise InputError(f"Line {number} is nested too deeply to read.") from None
        except ValueError as exc:
            raise InputError(
                f"Line {number} is not valid JSON: {getattr(exc, 'msg', str(exc)).removesuffix(' at')} "
                f"(column {getattr(exc, 'colno', '?')})."
            ) from None
        if not isinstance(value, dict):
            raise InputError(f"Line {number} is a JSON {_kind(value)}, not an object with fields (one row per line).")
        if bound is not None:
            fields.update(value)
            if len(fields) > bound.columns:
                raise bound.too_many_columns(len(fields), f" by line {number}")
        records.append(value)
    if not records:
        raise InputError("The file is empty: expected one JSON object per line.")
    return records_table(records)


def read_jsonl_fast(body: bytes, bound: Limits | None = None) -> pl.DataFrame | None:
    """The table of JSON lines whose every value is a string (or null) and whose every field is in
    the first line, in its order; None for any other file, which the line-by-line reader then reads
    (keeping numbers' literal text, naming a bad line). pyarrow's JSON reader, told that the first
    line's fields are strings, refuses a number, boolean or nested value, a field not declared, a
    repeated field and a broken surrogate pair. About 7x faster on a million rows; a missing field
    or a null is empty, as there."""
    if b"\x00" in body:
        return None
    first = body.lstrip(b"\xef\xbb\xbf \t\r\n").partition(b"\n")[0]
    try:
        pairs = json.loads(first, object_pairs_hook=list)
    except (ValueError, RecursionError):  # the line-by-line reader names the line
        return None
    if not isinstance(pairs, list) or not pairs or not all(isinstance(v, str) for _, v in pairs):
        return None
    fields = [key for key, _ in pairs]
    if len(set(fields)) != len(fields):
        return None
    if bound is not None and len(fields) > bound.columns:
        raise bound.too_many_columns(len(fields), " by line 1")
    options = pa_json.ParseOptions(
        explicit_schema=pa.schema([(f, pa.string()) for f in fields]), unexpected_field_behavior="error"
    )
    try:
        table = pa_json.read_json(
            io.BytesIO(body), read_options=pa_json.ReadOptions(block_size=_JSON_BLOCK), parse_options=options
        )
    except pa.ArrowException:
        return None
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.with_columns(pl.all().fill_null(""))


_COUNTER = json.JSONDecoder()  # no hooks: the C scanner alone, to count elements fast
_SPACE = re.compile(r"[ \t\r\n]*")


def _check_array_rows(text: str, bound: Limits) -> None:
    """Refuse a JSON array of more than ``bound.rows`` elements before it is parsed whole (millions
    of parsed objects take gigabytes): its elements are parsed one at a time and dropped, stopping
    past the limit. Anything malformed is left to the whole parse, which names it."""
    pos = _SPACE.match(text, 1 if text.startswith("\ufeff") else 0).end()
    if not text.startswith("[", pos):
        return
    count, skip, decode = 0, _SPACE.match, _COUNTER.raw_decode
    pos = skip(text, pos + 1).end()
    if text.startswith("]", pos):
        return
    try:
        while True:
            pos = skip(text, decode(text, pos)[1]).end()
            count += 1
            if count > bound.rows:
                raise bound.too_many_rows()
            if not text.startswith(",", pos):
                return
            pos = skip(text, pos + 1).end()
    except (ValueError, RecursionError):
        return


def read_json(text: str, bound: Limits | None = None) -> pl.DataFrame:
    """A JSON array of objects, one per row (more than ``bound``'s rows or fields refused)."""
    if bound is not None and text.count("{") > bound.rows:  # fewer objects than that: fewer rows
        _check_array_rows(text, bound)
    try:
        value = _loads(text)
    except RecursionError:
        raise InputError("The JSON is nested too deeply to read.") from None
    except ValueError as exc:
        raise InputError(f"The file is not valid JSON: {exc}.") from None
    if isinstance(value, dict):
        raise InputError(
            "The JSON file is one object, not a list of rows: expected an array of objects or "
            "JSON lines (or a log of Inspect AI or promptfoo)."
        )
    if not isinstance(value, list) or not value:
        raise InputError("The JSON file holds no rows: expected an array of objects.")
    fields: set[str] = set()
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InputError(f"Row {number} of the JSON array is a JSON {_kind(item)}, not an object with fields.")
        if bound is not None:
            fields.update(item)
            if len(fields) > bound.columns:
                raise bound.too_many_columns(len(fields), f" by row {number}")
    return records_table(value)


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, _Number):
        return "number"
    return "null" if value is None else "string" if isinstance(value, str) else "value"


def check_parquet_size(body: bytes, bound: Limits) -> None:
    """Refuse a Parquet file whose own metadata declares too many rows or columns, or more bytes
    once unpacked than allowed, before any column is read (a few KB of repeated values can stand
    for millions of rows). Metadata that cannot be read is left to the reader, which names it."""
    parquet = importlib.import_module("pyarrow.parquet")  # only when a Parquet file comes
    try:
        meta = parquet.read_metadata(io.BytesIO(body))
        columns = len(meta.schema.to_arrow_schema().names)
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception:  # noqa: BLE001  damaged metadata: read_parquet says what is wrong
        return
    bound.check_rows(meta.num_rows)
    bound.check_columns(columns)
    if unpacked > bound.unpacked_bytes:
        raise bound.too_large_unpacked("The Parquet file")


def read_parquet(body: bytes, bound: Limits | None = None) -> pl.DataFrame:
    """Every column as text (strings as they are, numbers and booleans as JSON writes them)."""
    if bound is not None:
        check_parquet_size(body, bound)
    try:
        table = pl.read_parquet(io.BytesIO(body))
    except Exception as exc:  # polars raises several kinds for a damaged file
        raise InputError(f"The Parquet file cannot be read: {str(exc).splitlines()[0]}.") from None
    out = {}
    for name in table.columns:
        column = table[name]
        if column.dtype == pl.String:
            out[name] = column.fill_null("")
        elif column.dtype == pl.Boolean:
            out[name] = column.replace_strict({True: "true", False: "false"}, return_dtype=pl.String).fill_null("")
        elif column.dtype.is_numeric() or column.dtype.is_temporal():
            out[name] = column.cast(pl.String).fill_null("")
        else:  # lists, structs, binary: compact JSON of each value
            out[name] = pl.Series(name, [cell_text(_plain(v)) for v in column.to_list()], dtype=pl.String)
    return pl.DataFrame(out)


def _plain(value: object) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
