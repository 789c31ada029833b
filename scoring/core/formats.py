"""Which format a responses file is in, and reading the non-CSV ones into a table of text.

The format is chosen by content first (gzip and Parquet magic bytes, a first character of ``{``
or ``[``), by extension only to break ties; an extension the content contradicts is refused
with both named, never read as something else. Every cell becomes text, as the CSV reader
keeps it: a JSON string as is, a number as its literal text (``1.50`` stays ``1.50``), a
boolean ``true``/``false``, null an empty cell, a nested value its compact JSON. Parquet values
are written the same way (numbers by polars' formatting, which is exact for integers).
"""

from __future__ import annotations

import io
import json
import re
import zlib
from pathlib import PurePath

import polars as pl
import pyarrow as pa
import pyarrow.json as pa_json

from scoring.core.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
#: Extensions that name a format (after a ``.gz`` is taken off).
EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
              ".json": "json", ".parquet": "parquet", ".pq": "parquet", ".eval": "zip"}  # fmt: skip
#: What the Upload page's file picker accepts.
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "ndjson", "json", "parquet", "pq", "eval", "gz"]
#: Largest decompressed size read from a gzip file (a bomb is refused, not unpacked): a million
#: rows of this dataset are 100-300 MB, and the dashboard's whole upload should fit in 2 GiB.
MAX_INFLATED = 2 << 30
#: Longest line of a text file (CSV, TSV, JSON): a 200 KB cell is fine, a file of one 1 GB line
#: (a missing line break, a binary blob) is refused before any parser holds copies of it.
MAX_LINE = 64 << 20
#: How much of a gzip file is unpacked at a time.
_PIECE = 16 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")
#: pyarrow's JSON block (:func:`read_jsonl_fast`): rows are parsed a block at a time, on both cores.
_JSON_BLOCK = 8 << 20  # pyarrow reads a longer line whole too, in one block


class _Number(str):
    """A JSON number kept as its literal text."""


def ungzip(data: bytes, filename: str | None) -> tuple[bytes, str | None]:
    """(the bytes, the name without ``.gz``) of a gzip file; other files unchanged.

    Unpacked in pieces of :data:`_PIECE`, every member (``cat a.gz b.gz``) counted against
    :data:`MAX_INFLATED`, and a text file's lines measured as they come: a few MB of gzip that
    unpack to one 1 GB line are refused after :data:`MAX_LINE`, not after a gigabyte."""
    if not data.startswith(GZIP_MAGIC):
        if filename and filename.lower().endswith(".gz"):
            raise InputError(f"{filename!r} is named .gz but is not gzip-compressed (it does not start with 1F 8B).")
        return data, filename
    pieces: list[bytes] = []
    total = lines = 0
    line_start = 0  # offset of the current line's first byte
    text: bool | None = None  # decided on the first bytes: binary formats have no lines
    pending, inflater = data, zlib.decompressobj(wbits=31)
    try:
        while True:
            piece = inflater.decompress(pending, min(_PIECE, MAX_INFLATED - total + 1))
            pending = inflater.unconsumed_tail
            if piece:
                if text is None:
                    text = not piece.startswith((PARQUET_MAGIC, ZIP_MAGIC))
                if total + len(piece) > MAX_INFLATED:
                    raise InputError(f"The gzip file unpacks to more than {MAX_INFLATED >> 30} GiB; split it first.")
                if text:  # a line inside one piece is shorter than it: only the first and the open one can be long
                    first = piece.find(b"\n")
                    if first >= 0:
                        if total + first - line_start > MAX_LINE:
                            raise InputError(_long_line(lines + 1))
                        lines += piece.count(b"\n")
                        line_start = total + piece.rfind(b"\n") + 1
                    if total + len(piece) - line_start > MAX_LINE:
                        raise InputError(_long_line(lines + 1))
                pieces.append(piece)
                total += len(piece)
            if inflater.eof:
                rest = inflater.unused_data
                if not rest.startswith(GZIP_MAGIC):  # concatenated members, as gzip writes them
                    break
                pending, inflater = rest, zlib.decompressobj(wbits=31)
            elif not piece and not pending:
                raise InputError("The gzip file is cut short: it ends before its compressed data does.")
    except zlib.error as exc:
        raise InputError(f"The file is gzip-compressed but damaged: {exc}.") from None
    name = filename[:-3] if filename and filename.lower().endswith(".gz") else filename
    return b"".join(pieces), name


def _long_line(number: int) -> str:
    return (f"Line {number} is longer than {MAX_LINE >> 20} MiB (no line break in {MAX_LINE >> 20} MiB from its "
            "start): a responses file holds one row per line, and a JSON array on one line should be written as "
            "JSON lines.")  # fmt: skip


def check_line_lengths(body: bytes) -> None:
    """Refuse a line longer than :data:`MAX_LINE`, naming it. Steps a window of MAX_LINE bytes
    along the file and jumps to its last line break (``rfind`` runs at memory speed: about 0.1 s
    a GB), so no line is split into Python objects."""
    pos, size = 0, len(body)
    while size - pos > MAX_LINE:
        cut = body.rfind(b"\n", pos, pos + MAX_LINE + 1)
        if cut < 0:
            raise InputError(_long_line(body.count(b"\n", 0, pos) + 1))
        pos = cut + 1


def extension_format(filename: str | None) -> str | None:
    return EXTENSIONS.get(PurePath(filename).suffix.lower()) if filename else None


def sniff(body: bytes, filename: str | None) -> str:
    """``parquet``, ``zip``, ``jsonl``, ``json`` (one JSON value: an array of records or a
    harness's log) or ``text`` (CSV/TSV), from the content; refuses a contradicting extension."""
    named = extension_format(filename)
    if body.startswith(PARQUET_MAGIC):
        found = "parquet"
    elif body.startswith(ZIP_MAGIC):
        found = "zip"
    else:
        start = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        found = _json_kind(body) if start in (b"{", b"[") else "text"
    expected = {"csv": "text", "tsv": "text"}.get(named or "", named)
    if expected and expected != found and {expected, found} != {"json", "jsonl"}:
        raise InputError(f"{filename!r} is named as {named.upper()} but its content is {_describe(found)}; "
                         f"rename it or save it as {named.upper()}.")  # fmt: skip
    return found


def _json_kind(body: bytes) -> str:
    """``jsonl`` when the first line is a whole JSON value, else ``json``."""
    text = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    try:
        json.loads(text.partition(b"\n")[0])
    except ValueError:
        return "json"  # one object over several lines: a harness's log
    return "jsonl"


def _describe(kind: str) -> str:
    return {"parquet": "Parquet", "zip": "a zip archive", "jsonl": "JSON lines", "json": "JSON",
            "text": "text (CSV or TSV)"}[kind]  # fmt: skip


def _compact(value: object) -> str:
    """Compact JSON of a parsed value whose numbers are :class:`_Number` (written as they came)."""
    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _compact(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


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
    return json.loads(text, parse_int=_Number, parse_float=_Number, parse_constant=_Number,
                      object_pairs_hook=_first_wins)  # fmt: skip


def records_table(records: list[dict], where: str = "row") -> pl.DataFrame:
    """A table of text from parsed records (fields in first-seen order, absent fields empty)."""
    fields: dict[str, None] = {}
    for record in records:
        fields.update(dict.fromkeys(record))
    columns = {f: [cell_text(r.get(f)) for r in records] for f in fields}
    try:
        return pl.DataFrame({f: pl.Series(f, v, dtype=pl.String) for f, v in columns.items()})
    except UnicodeEncodeError:  # a lone surrogate escape such as \ud800: no character at all
        field, number, found = next((f, i, m) for f, v in columns.items() for i, text in enumerate(v, start=1)
                                    if (m := _SURROGATE.search(text)))  # fmt: skip
        raise InputError(f"{where.capitalize()} {number}, field {field!r}: a lone surrogate escape (\\u"
                         f"{ord(found.group()):04x}) that is no character; the file was written from broken UTF-16 "
                         "text.") from None  # fmt: skip


def read_jsonl(text: str) -> pl.DataFrame:
    """One JSON object per line (blank lines skipped); a bad line is refused with its number."""
    records: list[dict] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = _loads(line)
        except RecursionError:
            raise InputError(f"Line {number} is nested too deeply to read.") from None
        except ValueError as exc:
            raise InputError(f"Line {number} is not valid JSON: {getattr(exc, 'msg', str(exc)).removesuffix(' at')} "
                             f"(column {getattr(exc, 'colno', '?')}).") from None  # fmt: skip
        if not isinstance(value, dict):
            raise InputError(f"Line {number} is a JSON {_kind(value)}, not an object with fields (one row per line).")
        records.append(value)
    if not records:
        raise InputError("The file is empty: expected one JSON object per line.")
    return records_table(records)


def read_jsonl_fast(body: bytes) -> pl.DataFrame | None:
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
    except ValueError:
        return None
    if not isinstance(pairs, list) or not pairs or not all(isinstance(v, str) for _, v in pairs):
        return None
    fields = [key for key, _ in pairs]
    if len(set(fields)) != len(fields):
        return None
    options = pa_json.ParseOptions(explicit_schema=pa.schema([(f, pa.string()) for f in fields]),
                                   unexpected_field_behavior="error")  # fmt: skip
    try:
        table = pa_json.read_json(io.BytesIO(body), read_options=pa_json.ReadOptions(block_size=_JSON_BLOCK),
                                  parse_options=options)  # fmt: skip
    except pa.ArrowException:
        return None
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.with_columns(pl.all().fill_null(""))


def read_json(text: str) -> pl.DataFrame:
    """A JSON array of objects, one per row."""
    try:
        value = _loads(text)
    except RecursionError:
        raise InputError("The JSON is nested too deeply to read.") from None
    except ValueError as exc:
        raise InputError(f"The file is not valid JSON: {exc}.") from None
    if isinstance(value, dict):
        raise InputError("The JSON file is one object, not a list of rows: expected an array of objects or "
                         "JSON lines (or a log of Inspect AI or promptfoo).")  # fmt: skip
    if not isinstance(value, list) or not value:
        raise InputError("The JSON file holds no rows: expected an array of objects.")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InputError(f"Row {number} of the JSON array is a JSON {_kind(item)}, not an object with fields.")
    return records_table(value)


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, _Number):
        return "number"
    return "null" if value is None else "string" if isinstance(value, str) else "value"


def read_parquet(body: bytes) -> pl.DataFrame:
    """Every column as text (strings as they are, numbers and booleans as JSON writes them)."""
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

