"""Per code point tables for the compiled matchers, from the running Python's own Unicode data.

The compiled kernels (:mod:`scoring.match.text_kernels`) read text as code points and look each
one up here, so they do what Python's ``str`` methods do:

- ``flags[c]`` (16 bits): :data:`SPACE` (``str.split()`` splits on it), :data:`PUNCT`
  (:data:`scoring.core.protocols.PUNCTUATION`), :data:`INVISIBLE`
  (:data:`scoring.match.norm_exact.INVISIBLE`), :data:`NFC_NO` (NFC might change a text holding it
  wherever it stands: it is not in NFC, or it is a Hangul vowel or final jamo), :data:`MAYBE` (the
  second of a pair NFC composes), :data:`DECOMPOSES` (a canonical decomposition, Hangul syllables
  included), :data:`FOLD_PY` (``casefold()`` is not one character, or is whitespace),
  :data:`LOWER_PY` (``lower()`` is not one character or changes whether it is whitespace or
  punctuation; and Σ, whose lowering depends on its neighbours), :data:`NONSTARTER` (combining
  class not 0) and :data:`NUKTA_LETTER` (U+0929, U+0931, U+0934, which the nukta fold spells
  out). A character with no bit set is plain: normalisation only case-folds it;
- ``ccc[c]``: the canonical combining class;
- ``fold[c]`` / ``lower[c]``: ``casefold()`` / ``lower()`` where that is one character (else ``c``);
- ``pairs``: the canonical pairs NFC composes, as sorted keys ``first * 0x110000 + second``.

A row holding a ``*_PY`` character is left to the per-row function. Building the tables asks
Python about every code point (half a second), so they are kept in a file beside
:mod:`scoring.core.unicode_tables`' cache, named after the Python and Unicode versions (a missing
or unreadable file only costs the time: the tables are built again, never guessed).
"""

from __future__ import annotations

import functools
import io
import sys
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.core.columnar import WHITESPACE
from scoring.core.protocols import PUNCTUATION
from scoring.core.unicode_tables import cache_path, cached_on_disk

SPACE, PUNCT, INVISIBLE, NFC_NO, MAYBE, DECOMPOSES, FOLD_PY, LOWER_PY, NONSTARTER, NUKTA_LETTER = (
    1 << k for k in range(10)
)
#: Zero-width joiner and non-joiner, soft hyphen, byte-order mark, word joiner, zero-width space
#: (the characters :func:`scoring.match.norm_exact.remove_invisible` removes).
INVISIBLE_CHARS = "\u200d\u200c\u00ad\ufeff\u2060\u200b"
SIZE = sys.maxunicode + 1
#: Where Python's Unicode version assigns characters (planes 0-3 and 14); the rest is unassigned:
#: combining class 0, no decomposition, in NFC, no case.
ASSIGNED = (range(0x32000), range(0xE0000, 0xE1000))
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)
HANGUL_V_T = (range(0x1161, 0x1176), range(0x11A8, 0x11C3))
BLOCK = 512
#: Bump when what is stored (or how a table is built) changes, so an old file is never read.
FORMAT = 2


@dataclass(frozen=True)
class CharTables:
    flags: np.ndarray  # uint16, SIZE
    ccc: np.ndarray  # uint8, SIZE
    fold: np.ndarray  # uint32, SIZE
    lower: np.ndarray  # uint32, SIZE
    pairs: np.ndarray  # int64, sorted


def _changed(method: str) -> dict[int, str]:
    """Code point -> ``getattr(chr(c), method)()`` where that differs, block by block (most blocks
    of :data:`BLOCK` code points have no case at all and are passed over whole)."""
    out: dict[int, str] = {}
    for start in range(0, SIZE, BLOCK):
        block = "".join(map(chr, range(start, min(start + BLOCK, SIZE))))
        if getattr(block, method)() != block:
            for ch in block:
                mapped = getattr(ch, method)()
                if mapped != ch:
                    out[ord(ch)] = mapped
    return out


def _mark(flags: np.ndarray, chars: str, bit: int) -> None:
    flags[np.fromiter(map(ord, chars), dtype=np.int64, count=len(chars))] |= bit


def _case(flags: np.ndarray, method: str, bit: int) -> np.ndarray:
    """The one-character mapping of ``method``; ``bit`` set where it is several characters or
    changes whether the character is whitespace or punctuation."""
    table = np.arange(SIZE, dtype=np.uint32)
    for cp, mapped in _changed(method).items():
        kind = flags[cp] & (SPACE | PUNCT)
        if len(mapped) != 1 or flags[ord(mapped)] & (SPACE | PUNCT) != kind:
            flags[cp] |= bit
        else:
            table[cp] = ord(mapped)
    return table


def _nfc(flags: np.ndarray, ccc: np.ndarray) -> np.ndarray:
    """Fill ``ccc`` and the NFC bits; return the composing pairs' keys."""
    keys = []
    for cp in (c for part in ASSIGNED for c in part):
        ch = chr(cp)
        ccc[cp] = unicodedata.combining(ch)
        if not unicodedata.is_normalized("NFC", ch):
            flags[cp] |= NFC_NO
            continue
        parts = unicodedata.decomposition(ch).split()
        if parts and not parts[0].startswith("<"):
            flags[cp] |= DECOMPOSES
            if len(parts) == 2:
                first, second = int(parts[0], 16), int(parts[1], 16)
                keys.append(first * SIZE + second)
                flags[second] |= MAYBE
    flags[HANGUL_SYLLABLES.start : HANGUL_SYLLABLES.stop] |= DECOMPOSES
    for part in HANGUL_V_T:
        flags[part.start : part.stop] |= NFC_NO
    return np.array(sorted(keys), dtype=np.int64)


def build() -> CharTables:
    """Every table from Python's ``unicodedata`` and ``str`` methods (see the module docstring)."""
    flags = np.zeros(SIZE, dtype=np.uint16)
    ccc = np.zeros(SIZE, dtype=np.uint8)
    _mark(flags, WHITESPACE, SPACE)
    _mark(flags, PUNCTUATION, PUNCT)
    _mark(flags, INVISIBLE_CHARS, INVISIBLE)
    pairs = _nfc(flags, ccc)
    flags[ccc != 0] |= NONSTARTER
    _mark(flags, "\u0929\u0931\u0934", NUKTA_LETTER)
    fold = _case(flags, "casefold", FOLD_PY)
    lower = _case(flags, "lower", LOWER_PY)
    flags[ord("Σ")] |= LOWER_PY
    return CharTables(flags=flags, ccc=ccc, fold=fold, lower=lower, pairs=pairs)


def tables_path() -> Path:
    """Beside :func:`scoring.core.unicode_tables.cache_path`, for the same Python and Unicode."""
    base = cache_path()
    version = base.name.removeprefix("unicode-tables-").rsplit("-v", 1)[0]
    return base.with_name(f"match-tables-{version}-v{FORMAT}.npz")


def _encode(tables: CharTables) -> bytes:
    """Only what differs from the identity or zero, compressed (a few kilobytes)."""
    stored: dict[str, np.ndarray] = {"pairs": tables.pairs}
    for name in ("flags", "ccc", "fold", "lower"):
        table = getattr(tables, name)
        where = np.flatnonzero(table != (np.arange(SIZE) if name in ("fold", "lower") else 0))
        stored[f"{name}_at"], stored[name] = where, table[where]
    out = io.BytesIO()
    np.savez_compressed(out, **stored)
    return out.getvalue()


def _load(path: Path) -> CharTables | None:
    try:
        with np.load(path) as stored:
            made = {
                "flags": np.zeros(SIZE, np.uint16),
                "ccc": np.zeros(SIZE, np.uint8),
                "fold": np.arange(SIZE, dtype=np.uint32),
                "lower": np.arange(SIZE, dtype=np.uint32),
            }
            for name, table in made.items():
                table[stored[f"{name}_at"]] = stored[name]
            return CharTables(**made, pairs=stored["pairs"].astype(np.int64))
    except (OSError, ValueError, KeyError, IndexError, zipfile.BadZipFile):
        return None


@functools.cache
def char_tables() -> CharTables:
    """The tables: from the file when present, else built and stored."""
    return cached_on_disk(tables_path(), _load, build, _encode)
