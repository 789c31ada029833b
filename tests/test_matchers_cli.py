"""``python -m scoring score --matchers``: the spec's two metrics are untouched by the matchers
(a property over hypothesis' files: the CSV's spec columns, the printed report and the JSON are the
same bytes with and without them), one verdict column per matcher, and bad names refused."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.cli import main
from scoring.match import MATCHER_COLUMNS
from scoring.match.scorers import match_row

ROOT = Path(__file__).resolve().parents[1]
ALL = "norm_exact,stem_overlap,chrf"
PIECES = [*"ab Aक़\u0929\u093c।,.\"'\n\u200dΣßகள்", "ों", "  ", "Deula", "paintings", "किताबें"]
CELL = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    return code, out.getvalue()


def _write(path: Path, rows: list[tuple[str, str, str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "answer", "Domain", "response", "language"])
        writer.writerows([(f"q{i}", a, d, r, lang) for i, (a, d, r, lang) in enumerate(rows)])


def _records(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            CELL.filter(str.strip), st.sampled_from(["Art", "इतिहास"]), CELL, st.sampled_from(["Hindi", "en", ""])
        ),
        min_size=1,
        max_size=15,
    )
)
def test_the_spec_columns_and_report_are_the_same_bytes_with_matchers_on(rows: list) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source, plain, more = Path(tmp, "in.csv"), Path(tmp, "plain.csv"), Path(tmp, "more.csv")
        _write(source, rows)
        code, text = _run(["score", "--responses", str(source), "--out", str(plain)])
        code_m, text_m = _run(["score", "--responses", str(source), "--out", str(more), "--matchers", ALL])
        assert code == code_m == 0
        # The report: the spec's part is byte for byte the same, the matchers' follows it.
        assert text_m.startswith(text) and "Optional matchers" in text_m[len(text) :]
        # The CSV: every record is the same cells, matcher columns after them.
        before, after = _records(plain), _records(more)
        width = len(before[0])
        assert [r[:width] for r in after] == before
        assert after[0][width:] == list(MATCHER_COLUMNS.values())
        # ... and the spec's bytes: the file without matchers is the file with them, columns cut.
        cut = io.StringIO()
        csv.writer(cut, lineterminator="\n").writerows(r[:width] for r in after)
        assert plain.read_bytes().decode("utf-8").replace("\r\n", "\n") == _rewritten(before)
        assert cut.getvalue() == _rewritten(before)
        _, js = _run(["score", "--responses", str(source), "--json"])
        _, js_m = _run(["score", "--responses", str(source), "--json", "--matchers", ALL])
        with_m = json.loads(js_m)
        assert set(with_m.pop("matchers")) == {"norm_exact", "stem_overlap", "chrf"}
        assert with_m == json.loads(js)


def _rewritten(records: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(records)
    return out.getvalue()


def test_matcher_columns_hold_the_row_verdicts(tmp_path: Path) -> None:
    rows = [
        ("amalak", "Art", "Amalaka", "English"),
        ("scroll painting", "Art", "Scroll paintings", "English"),
        ("किताब", "Art", "दो किताबें।", "Hindi"),
        ("किताब", "Art", "दो किताबें।", "Devanagari"),
        ("\u0958", "Art", "\u0915\u093c है", ""),
    ]
    _write(tmp_path / "in.csv", rows)
    code, text = _run(
        ["score", "--responses", str(tmp_path / "in.csv"), "--out", str(tmp_path / "o.csv"), "--matchers", ALL]
    )
    assert code == 0
    header, *records = _records(tmp_path / "o.csv")
    for (answer, _, response, language), record in zip(rows, records):
        for name, column in MATCHER_COLUMNS.items():
            assert record[header.index(column)] == str(match_row(name, answer, response, language, 30.0))
    assert [r[header.index("stem_overlap_correct")] for r in records] == ["False", "True", "True", "False", "False"]
    assert "stemmed: (no language): no, Devanagari: no, English: yes, Hindi: yes" in text
    assert "correct when >= 30" in text


def test_a_matcher_list_may_name_one_and_an_unknown_name_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path / "in.csv", [("deul", "Art", "Deula", "")])
    code, text = _run(["score", "--responses", str(tmp_path / "in.csv"), "--json", "--matchers", "chrf"])
    assert code == 0 and list(json.loads(text)["matchers"]) == ["chrf"]
    proc = subprocess.run(
        [sys.executable, "-m", "scoring", "score", "--responses", str(tmp_path / "in.csv"), "--matchers", "stems"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "error: Unknown matcher 'stems': choose from norm_exact, stem_overlap, chrf (comma-separated)."
    )
