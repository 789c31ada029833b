"""The row's script counted by compiled code (numba), for :func:`scoring.core.row_language.scripts`.

One pass over each row's UTF-8 bytes of question and answer, letters counted per script in a
small array, then the script of most letters: a million rows in about a tenth of a second of
CPU, where numpy's count (a repeat and a bincount over every byte) took most of a second.

Imported only when a row's script is wanted (through ``importlib``): it imports numba, which the
CLI's plain ``score`` never needs. The dashboard loads it at start (:func:`warm_up`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from scoring.core.compiled_utf8 import compiled, utf8_of
from scoring.core.script_names import ARABIC, INDIC_BLOCKS, LATIN, OTHER_SCRIPT, SCRIPTS, UNKNOWN_SCRIPT

#: A row with no letter: the code after the last of :data:`SCRIPTS`.
NO_LETTER = len(SCRIPTS)
#: Each code's name: :data:`SCRIPTS` in order, then :data:`UNKNOWN_SCRIPT`.
NAMES = pl.Series([*SCRIPTS, UNKNOWN_SCRIPT], dtype=pl.String)
FIRST_INDIC_BLOCK, INDIC_COUNT = 0x0900 >> 7, len(INDIC_BLOCKS)
OTHER_CODE = SCRIPTS.index(OTHER_SCRIPT) + 1
SCHEMA = {"question": pl.String, "answer": pl.String}


def lead_codes() -> np.ndarray:
    """For each byte value, 1 + the index in :data:`SCRIPTS` of the letter a byte of that value
    starts, or 0: a letter of one or two bytes, or the lead byte of a three-byte letter outside
    U+0800-U+0FFF (those are decoded: :func:`count_scripts`).

    Latin: ASCII letters and U+00C0-U+024F; Arabic: U+0600-U+06FF and U+0750-U+077F; other
    scripts: Greek to Hebrew, U+1000-U+1FFF and U+3000-U+D7FF (CJK, Hangul), by their lead bytes.
    Punctuation and symbols (U+2000-U+2FFF), digits and emoji count as none.
    """
    table = np.zeros(256, dtype=np.uint8)
    latin, arabic, other = (SCRIPTS.index(name) + 1 for name in (LATIN, ARABIC, OTHER_SCRIPT))
    table[[*range(0x41, 0x5B), *range(0x61, 0x7B), *range(0xC3, 0xCA)]] = latin
    table[[*range(0xD8, 0xDC), 0xDD]] = arabic
    table[[*range(0xCE, 0xD8), 0xDC, 0xDE, 0xDF, 0xE1, *range(0xE3, 0xEE)]] = other
    return table


LEAD_CODES = lead_codes()


@compiled
def count_letters(data: np.ndarray, start: int, end: int, leads: np.ndarray, counts: np.ndarray) -> None:
    """Add the letters of ``data[start:end]`` (one text's UTF-8) to ``counts`` (slot 1 + the
    script's index; a byte that starts no letter counts nowhere).

    A letter of an Indic block (U+0900-U+0D7F, 128 code points each) is any code point of the
    block but its digits and dandas (offsets 0x64-0x6F): vowel signs and viramas count with their
    letters. The rest of U+0800-U+0FFF: from U+0D80 on (Sinhala, Thai...) other scripts, below
    U+0900 none. A lead byte 0xE0 without two more bytes in its text (never in valid UTF-8)
    counts as none, as numpy's count did at the end of its bytes.
    """
    i = start
    while i < end:
        byte = data[i]
        code = leads[byte]
        step = 1
        if byte == 0xE0 and i + 2 < end:
            follow, last = np.int32(data[i + 1]), np.int32(data[i + 2])
            point = ((follow & 0x3F) << 6) | (last & 0x3F)
            block = (point >> 7) - FIRST_INDIC_BLOCK
            offset = point & 0x7F
            if 0 <= block < INDIC_COUNT and (offset < 0x64 or offset > 0x6F):
                code = block + 1
            elif point >= 0x0D80:
                code = OTHER_CODE
            else:
                code = 0
            if follow & 0xC0 == 0x80 and last & 0xC0 == 0x80:
                step = 3  # two continuation bytes: they start nothing
        if code:
            counts[code] += 1
        i += step


@compiled
def count_scripts(
    question: np.ndarray,
    question_at: np.ndarray,
    answer: np.ndarray,
    answer_at: np.ndarray,
    leads: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[row]``: the index in :data:`SCRIPTS` of the script of most letters of the row's
    question and answer together (ties: the first), or :data:`NO_LETTER`."""
    counts = np.zeros(NO_LETTER + 1, dtype=np.int64)
    for row in range(len(out)):
        counts[:] = 0
        count_letters(question, question_at[row], question_at[row + 1], leads, counts)
        count_letters(answer, answer_at[row], answer_at[row + 1], leads, counts)
        best, most = NO_LETTER, 0
        for code in range(1, NO_LETTER + 1):
            if counts[code] > most:
                best, most = code - 1, counts[code]
        out[row] = best


def script_names(rows: pl.DataFrame) -> pl.Series:
    """The script of each row of ``rows`` (``question`` and ``answer``; nulls as "") by name."""
    question, answer = utf8_of(rows["question"]), utf8_of(rows["answer"])
    out = np.empty(rows.height, dtype=np.int8)
    count_scripts(question.data, question.offsets, answer.data, answer.offsets, LEAD_CODES, out)
    return NAMES.gather(out)


def warm_up() -> None:
    """The kernel once on two rows: its machine code loaded from numba's cache (or compiled), so
    the first upload pays neither."""
    script_names(pl.DataFrame({"question": ["a", None], "answer": ["किताब", "ক"]}, schema=SCHEMA))
