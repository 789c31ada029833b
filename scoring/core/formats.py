"""Which format a responses file is in, and unpacking a gzipped one within the limits.

The format is chosen by content first (gzip and Parquet magic bytes, a first character of ``{``
or ``[``), by extension only to break ties; an extension the content contradicts is refused
with both named, never read as something else. Reading JSON lines, JSON and Parquet into a
table of text is :mod:`scoring.core.text_tables`.
"""

from __future__ import annotations

import codecs
import io
import json
import zlib
from pathlib import PurePath

from scoring.core import limits
from scoring.core.errors import InputError
from scoring.core.limits import Limits

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
#: Extensions that name a format (after a ``.gz`` is taken off).
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".eval": "zip",
}
#: What the Upload page's file picker accepts.
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "ndjson", "json", "parquet", "pq", "eval", "gz"]
#: Largest decompressed size read from a gzip file when ``UPLOAD_MAX_UNPACKED_MB`` is not set (a
#: bomb is refused, not unpacked): a million rows of this dataset are 100-300 MB, and the
#: dashboard's whole upload should fit in 2 GiB. See :mod:`scoring.core.limits`.
MAX_INFLATED = 2 << 30
#: Longest line of a text file (CSV, TSV, JSON): a 200 KB cell is fine, a file of one 1 GB line
#: (a missing line break, a binary blob) is refused before any parser holds copies of it.
MAX_LINE = 64 << 20
#: How much of a gzip file is unpacked at a time.
_PIECE = 16 << 20


def ungzip(data: bytes, filename: str | None, bound: Limits | None = None) -> tuple[bytes, str | None]:
    """(the bytes, the name without ``.gz``) of a gzip file; other files unchanged.

    Unpacked in pieces of :data:`_PIECE`, every member (``cat a.gz b.gz``) counted against the
    unpacked-size limit (``bound``, else the settings with :data:`MAX_INFLATED` as the default), a
    text file's lines measured and its rows counted as they come: a few KB of gzip that unpack to
    one 1 GB line are refused after :data:`MAX_LINE`, and to millions of short rows after the row
    limit, not after a gigabyte. Pieces go into one growing buffer, so the file is held once."""
    if not data.startswith(GZIP_MAGIC):
        if filename and filename.lower().endswith(".gz"):
            raise InputError(f"{filename!r} is named .gz but is not gzip-compressed (it does not start with 1F 8B).")
        return data, filename
    bound = bound or limits.current(MAX_INFLATED)
    cap = bound.unpacked_bytes
    out = io.BytesIO()
    total = lines = endings = 0  # lines: LFs (for MAX_LINE); endings: of any kind, at least the rows
    line_start = 0  # offset of the current line's first byte
    text: bool | None = None  # decided on the first bytes: binary formats have no lines
    utf16 = False
    rows: limits.RowCount | None = None  # counting rows exactly: only once there are more lines than rows allowed
    pending, inflater = data, zlib.decompressobj(wbits=31)
    try:
        while True:
            piece = inflater.decompress(pending, min(_PIECE, cap - total + 1))
            pending = inflater.unconsumed_tail
            if piece:
                if text is None:
                    text = not piece.startswith((PARQUET_MAGIC, ZIP_MAGIC))
                    utf16 = piece.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))  # counted once decoded
                if total + len(piece) > cap:
                    raise bound.too_large_unpacked()
                if text:  # a line inside one piece is shorter than it: only the first and the open one can be long
                    first = piece.find(b"\n")
                    if first >= 0:
                        if total + first - line_start > MAX_LINE:
                            raise InputError(_long_line(lines + 1))
                        lines += piece.count(b"\n")
                        line_start = total + piece.rfind(b"\n") + 1
                    if total + len(piece) - line_start > MAX_LINE:
                        raise InputError(_long_line(lines + 1))
                    endings += limits.line_endings(piece) if rows is None else 0
                    if rows is None and endings > bound.rows and not utf16:  # maybe too many rows: count them
                        rows = limits.RowCount(bound, limits.text_kind(_first_line(out.getbuffer(), piece)))
                        with out.getbuffer() as so_far:
                            rows.feed(so_far)
                    if rows is not None:
                        rows.feed(piece)
                out.write(piece)
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
    return out.getvalue(), name


def _first_line(so_far: memoryview, piece: bytes) -> bytes:
    """The first line of what was unpacked so far and ``piece`` (at most :data:`MAX_LINE` long)."""
    with so_far:
        head = bytes(so_far[: MAX_LINE + 1])
    end = head.find(b"\n")
    return head[:end] if end >= 0 else head + piece[: max(0, piece.find(b"\n"))]


def _long_line(number: int) -> str:
    return (
        f"Line {number} is longer than {MAX_LINE >> 20} MiB (no line break in {MAX_LINE >> 20} MiB from its "
        "start): a responses file holds one row per line, and a JSON array on one line should be written as "
        "JSON lines."
    )


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
        raise InputError(
            f"{filename!r} is named as {named.upper()} but its content is {_describe(found)}; "
            f"rename it or save it as {named.upper()}."
        )
    return found


def _json_kind(body: bytes) -> str:
    """``jsonl`` when the first line is a whole JSON value, else ``json``."""
    text = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    try:
        json.loads(text.partition(b"\n")[0])
    except RecursionError:
        return "jsonl"  # a line nested too deeply to parse: read as lines, whose reader names it
    except ValueError:
        return "json"  # one object over several lines: a harness's log
    return "jsonl"


def _describe(kind: str) -> str:
    return {
        "parquet": "Parquet",
        "zip": "a zip archive",
        "jsonl": "JSON lines",
        "json": "JSON",
        "text": "text (CSV or TSV)",
    }[kind]
