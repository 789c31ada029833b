"""The row's script counted by compiled code (issue 28, section 5) names every row exactly as the
numpy count it replaced: that count is kept here as the reference, and both read random mixes of
scripts, digits, dandas, emoji, combining marks, nulls and ties. The kernel's module (numba) is
loaded only when a script is wanted, never by a plain ``score``."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from scoring.core import script_kernel
from scoring.core.row_language import script_of, scripts
from scoring.core.script_names import ARABIC, INDIC_BLOCKS, LATIN, OTHER_SCRIPT, SCRIPTS, UNKNOWN_SCRIPT
from scoring.core.slices import SLICE_ROWS

ROOT = Path(__file__).resolve().parent.parent

# --- the reference: the numpy count as it was before the kernel (a byte's code, then a bincount) --


def reference_lead_codes() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint8)
    latin, arabic, other = (SCRIPTS.index(name) + 1 for name in (LATIN, ARABIC, OTHER_SCRIPT))
    table[[*range(0x41, 0x5B), *range(0x61, 0x7B), *range(0xC3, 0xCA)]] = latin
    table[[*range(0xD8, 0xDC), 0xDD]] = arabic
    table[[*range(0xCE, 0xD8), 0xDC, 0xDE, 0xDF, 0xE1, *range(0xE3, 0xEE)]] = other
    return table


REFERENCE_LEADS = reference_lead_codes()


def reference_codes(b: np.ndarray) -> np.ndarray:
    codes = REFERENCE_LEADS[b]
    lead = np.flatnonzero(b[:-2] == 0xE0)
    point = ((b[lead + 1].astype(np.int32) & 0x3F) << 6) | (b[lead + 2] & 0x3F)
    block = (point >> 7) - (0x0900 >> 7)
    offset = point & 0x7F
    letter = (block >= 0) & (block < len(INDIC_BLOCKS)) & ((offset < 0x64) | (offset > 0x6F))
    codes[lead] = np.where(letter, block + 1, np.where(point >= 0x0D80, SCRIPTS.index(OTHER_SCRIPT) + 1, 0))
    return codes


def reference_counts(column: pl.Series) -> np.ndarray:
    array = column.to_arrow()
    array = (array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array).cast(pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = (
        np.frombuffer(array.buffers()[2], dtype=np.uint8) if array.buffers()[2] is not None else np.zeros(0, np.uint8)
    )
    rows = len(array)
    codes = reference_codes(data[offsets[0] : offsets[rows]])
    width = len(SCRIPTS) + 1
    keys = np.repeat(np.arange(0, rows * width, width, dtype=np.int32), np.diff(offsets)) + codes
    return np.bincount(keys, minlength=rows * width).reshape(-1, width)[:, 1:]


def reference_scripts(question: pl.Series, answer: pl.Series) -> list[str]:
    """The old ``scripts``: ASCII rows by a search for a letter, the others by their byte counts."""
    question, answer = question.fill_null(""), answer.fill_null("")
    wide = (
        (question.str.len_bytes() != question.str.len_chars().cast(pl.UInt32))
        | (answer.str.len_bytes() != answer.str.len_chars().cast(pl.UInt32))
    ).arg_true()
    latin = (question.str.contains("[A-Za-z]") | answer.str.contains("[A-Za-z]")).to_list()
    out = [LATIN if found else UNKNOWN_SCRIPT for found in latin]
    if wide.is_empty():
        return out
    counts = reference_counts(question.gather(wide)) + reference_counts(answer.gather(wide))
    names = np.where(counts.max(axis=1) > 0, np.array(SCRIPTS, dtype=object)[counts.argmax(axis=1)], UNKNOWN_SCRIPT)
    for row, name in zip(wide.to_list(), names.tolist(), strict=True):
        out[row] = name
    return out


# --- random mixes ----------------------------------------------------------------------------------

#: Code point ranges a text is drawn from: every Indic block whole (digits and dandas included),
#: the edges of the lead-byte table, marks, symbols, emoji.
RANGES = {
    "ascii letters": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii other": [(0x20, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "devanagari": [(0x0900, 0x097F)],
    "danda and digits": [(0x0964, 0x096F), (0x09E6, 0x09EF), (0x0BE6, 0x0BEF)],
    "bengali": [(0x0980, 0x09FF)],
    "tamil": [(0x0B80, 0x0BFF)],
    "other indic": [(0x0A00, 0x0B7F), (0x0C00, 0x0D7F)],
    "below indic": [(0x0800, 0x08FF)],
    "sinhala to tibetan": [(0x0D80, 0x0FFF)],
    "arabic": [(0x0600, 0x06FF), (0x0750, 0x077F)],
    "syriac thaana nko": [(0x0700, 0x074F), (0x0780, 0x07FF)],
    "latin-1 and extended": [(0x00A0, 0x00FF), (0x0100, 0x024F), (0x0250, 0x02FF)],
    "combining marks": [(0x0300, 0x036F)],
    "greek to hebrew": [(0x0370, 0x05FF)],
    "myanmar to greek extended": [(0x1000, 0x1FFF)],
    "punctuation and symbols": [(0x2000, 0x2FFF)],
    "cjk and hangul": [(0x3000, 0x9FFF), (0xAC00, 0xD7A3)],
    "private use and forms": [(0xE000, 0xFFFD)],
    "emoji": [(0x1F300, 0x1FAFF), (0x10000, 0x1007F)],
}
KINDS = list(RANGES)


def random_text(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return ""
    chars: list[str] = []
    for kind in rng.sample(KINDS, rng.randint(1, 3)):
        for _ in range(rng.randint(0, 6)):
            low, high = rng.choice(RANGES[kind])
            chars.append(chr(rng.randint(low, high)))
    rng.shuffle(chars)
    return "".join(chars)


def random_rows(rows: int, seed: int) -> tuple[pl.Series, pl.Series]:
    rng = random.Random(seed)
    question = pl.Series([random_text(rng) for _ in range(rows)], dtype=pl.String)
    answer = pl.Series([random_text(rng) for _ in range(rows)], dtype=pl.String)
    return question, answer


#: Rows named on purpose: ties, questions and answers in different scripts, the uncounted.
EDGES = [
    ("ab", "कख", "Devanagari"),  # a tie: Devanagari first
    ("ক", "a", "Bengali script"),  # a tie: Bengali before Latin
    ("αβ", "اب", ARABIC),  # a tie: Arabic before other scripts
    ("abc", "कख", LATIN),
    ("கேள்வி", "उत्तर", "Tamil script"),  # question and answer in different scripts
    ("१२३।॥", "", UNKNOWN_SCRIPT),  # digits and dandas only
    ("१२", "٣", ARABIC),  # an Arabic-Indic digit is in the Arabic block: counted, as it always was
    ("\u0301\u0308", "😀🎉", UNKNOWN_SCRIPT),  # combining marks and emoji
    ("Éé", "ÀÿĀɏ", LATIN),  # Latin-1 letters and Latin Extended
    ("\u0964\u0965", "\u096f", UNKNOWN_SCRIPT),
    ("\u0963", "", "Devanagari"),  # the last offset before the digits is a letter
    ("\u0970", None, "Devanagari"),  # and the first after them
    (None, None, UNKNOWN_SCRIPT),
    ("ก", "ශ", OTHER_SCRIPT),  # Thai and Sinhala (U+0D80 on)
    ("\u0800", "\u08ff", UNKNOWN_SCRIPT),  # below the Indic blocks
]


def test_the_edges_are_named_as_the_reference_names_them() -> None:
    question = pl.Series([q for q, _, _ in EDGES], dtype=pl.String)
    answer = pl.Series([a for _, a, _ in EDGES], dtype=pl.String)
    expected = [s for _, _, s in EDGES]
    assert reference_scripts(question, answer) == expected
    assert scripts(question, answer).to_list() == expected
    assert [script_of(q or "", a or "") for q, a, _ in EDGES] == expected


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kernel_names_random_mixes_as_the_numpy_count_did(seed: int) -> None:
    question, answer = random_rows(4_000, seed)
    expected = reference_scripts(question, answer)
    assert scripts(question, answer).to_list() == expected
    assert len(set(expected)) >= 8  # the mixes reach most scripts and the unknown
    some = range(0, 4_000, 37)
    assert [script_of(question[i] or "", answer[i] or "") for i in some] == [expected[i] for i in some]


def test_several_slices_on_threads_keep_row_order() -> None:
    question, answer = random_rows(2_000, 4)
    copies = SLICE_ROWS * 2 // 2_000 + 7  # past two slices, the last one short
    question, answer = pl.concat([question] * copies), pl.concat([answer] * copies)
    found = scripts(question, answer)
    assert len(found) == len(question) > 2 * SLICE_ROWS
    assert found.to_list() == reference_scripts(question, answer)


def test_a_slice_of_a_column_is_read_from_its_offset() -> None:
    question, answer = random_rows(500, 5)
    assert (
        scripts(question.slice(123, 200), answer.slice(123, 200)).to_list()
        == reference_scripts(question, answer)[123:323]
    )


def test_any_bytes_of_one_text_count_as_the_reference_counts_them() -> None:
    """Raw bytes, invalid UTF-8 included (a lead byte 0xE0 among the last two, a lone continuation
    byte): one text per call, the whole column for the reference's look-ahead."""
    rng = np.random.default_rng(6)
    often = [0x41, 0x61, 0x30, 0xC3, 0xC9, 0xCA, 0xD8, 0xDD, 0xE1, *[0xE0] * 8]  # and the bytes after 0xE0:
    alphabet = np.array([*often, *range(0x80, 0xC0), *range(0xA4, 0xB6), *range(256)])
    empty = np.zeros(2, dtype=np.int64)  # the answer: one empty text (offsets 0 and 0)
    out = np.empty(1, dtype=np.int8)
    for _ in range(3_000):
        data = rng.choice(alphabet, size=int(rng.integers(0, 12))).astype(np.uint8)
        counts = np.bincount(reference_codes(data), minlength=len(SCRIPTS) + 1)[1:]
        expected = int(counts.argmax()) if counts.max() > 0 else len(SCRIPTS)
        offsets = np.array([0, len(data)], dtype=np.int64)
        script_kernel.count_scripts(data, offsets, data, empty, script_kernel.LEAD_CODES, out)
        assert int(out[0]) == expected, bytes(data).hex()


def test_the_kernel_counts_both_columns_and_breaks_ties_by_order() -> None:
    question, answer = "कख".encode(), b"abc"
    q = np.frombuffer(question, dtype=np.uint8)
    a = np.frombuffer(answer, dtype=np.uint8)
    out = np.empty(1, dtype=np.int8)
    at = np.array([0, len(q)], dtype=np.int64)
    script_kernel.count_scripts(q, at, a, np.array([0, 2], dtype=np.int64), script_kernel.LEAD_CODES, out)
    assert SCRIPTS[out[0]] == "Devanagari"  # two letters each: the first of SCRIPTS
    script_kernel.count_scripts(q, at, a, np.array([0, 3], dtype=np.int64), script_kernel.LEAD_CODES, out)
    assert SCRIPTS[out[0]] == LATIN


def run_python(code: str) -> str:
    found = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()


def test_a_plain_score_never_loads_numba_and_the_warm_up_does(tmp_path: Path) -> None:
    out = tmp_path / "scored.csv"
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['scoring', 'score', '--responses', 'sample_data/hindi_model_a.csv', '--out', {str(out)!r}]\n"
        "try:\n    runpy.run_module('scoring', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code\n"
        "print('numba' in sys.modules)\n"
        "from scoring.core.row_language import warm_up_scripts\n"
        "warm_up_scripts().join(120)\n"
        "from scoring.core.script_kernel import count_scripts\n"
        "print('numba' in sys.modules, len(count_scripts.signatures))"
    )
    assert run_python(code).splitlines()[-2:] == ["False", "True 1"]
    assert out.stat().st_size > 0
