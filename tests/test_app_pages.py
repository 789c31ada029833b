"""AppTest tests of the dashboard: every page opens, uploads, the run in the URL, CLI parity, no Markdown.

Each test gets its own SQLite file through ``REVIEW_DB_URL``; ``st.cache_resource`` is keyed by
that URL, so a test never sees another test's engine or cached frames.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from apptest_support import markdown_texts, texts, unescape_md
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import ingest, review, store
from scoring.core.loader import load_bytes, load_path
from scoring.core.report import score_frame
from scoring.store import ENV_VAR

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
SAMPLE = ROOT / "sample_data" / "sample_run.csv"
TIMEOUT = 60
# Every page listed in app.py, so new or replaced pages stay covered.
PAGES = re.findall(r"""st\.Page\(\s*["']([^"']+\.py)["']""", APP.read_text(encoding="utf-8"))


def page_path(stem: str) -> str:
    """The app.py path of the page whose file is ``<stem>.py`` (whatever folder holds the pages)."""
    found = [p for p in PAGES if Path(p).stem == stem]
    assert len(found) == 1, f"app.py lists {found} for {stem!r}"
    return found[0]


UPLOAD_PAGE = page_path("upload")
AGREEMENT_PAGE = page_path("agreement")

GOOD_NAME = "my_model_hindi.csv"
GOOD_CSV = (
    "\n".join(
        [
            "question,answer,Domain,response,id",
            "Capital of India?,New Delhi,Geography,The capital is New Delhi.,g1",
            "Longest river?,Ganga,Geography,The Godavari,g2",
            "Highest peak?,Kangchenjunga,Geography,Kangchenjunga peak,g3",
            'Who wrote Gitanjali?,Rabindranath Tagore,Literature,"Tagore, Rabindranath",l1',
            "Author of Godaan?,Munshi Premchand,Literature,Premchand,l2",
            "Epic by Valmiki?,Ramayana,Literature,,l3",
            "भारत की राजधानी?,नई दिल्ली,Hindi,राजधानी नई दिल्ली है,h1",
            "सबसे लंबी नदी?,गंगा नदी,Hindi,यमुना,h2",
            "Founder of the Maurya empire?,Chandragupta Maurya,History,Chandragupta,h3",
            "Year of independence?,1947,History,It was 1947,h4",
            "No domain here?,yes,,yes indeed,n1",
        ]
    ).encode("utf-8")
    + b"\n"
)

PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "![x](http://127.0.0.1:9/p.png)",
)
XSS_NAME = "xss_model.csv"
XSS_FRAME = pd.DataFrame(
    {
        "question": [PAYLOADS[0], "Plain question?", "Other question?", "Fourth?"],
        "answer": [PAYLOADS[1], "plain answer", "other", "fourth"],
        "Domain": [PAYLOADS[2], PAYLOADS[0], PAYLOADS[1], "Plain"],
        "response": [" ".join(PAYLOADS), "plain answer here", "nothing", "fourth"],
    }
)
XSS_CSV = XSS_FRAME.to_csv(index=False).encode("utf-8")
# Element types whose text Streamlit renders as Markdown.


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh SQLite database for the app, selected through REVIEW_DB_URL."""
    url = f"sqlite:///{tmp_path / 'dashboard.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    return url


def new_app() -> AppTest:
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT)


def open_app(query: dict[str, str] | None = None) -> AppTest:
    """A first run of the app (on the default page), optionally with URL query parameters."""
    at = new_app()
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    """Open the Upload page and upload one file through the file uploader."""
    at.switch_page(UPLOAD_PAGE)
    at.run()
    assert not at.exception, at.exception
    at.file_uploader(key="uploads").set_value((name, data, "text/csv"))
    at.run()
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(page)
    at.run()
    return at


def run_param(at: AppTest) -> str | None:
    value = at.query_params.get("run")
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def titles(at: AppTest) -> list[str]:
    return [str(t.value).replace("\\", "") for t in at.title]  # titles are Markdown-escaped


def cli_report(path: Path) -> dict:
    """``python -m scoring score --json`` on a file, as a subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "scoring", "score", "--json", "--responses", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The first dataframe element that has ``column``."""
    for df in at.dataframe:
        value = df.value
        if column in value.columns:
            return value
    raise AssertionError(f"no dataframe with a {column!r} column; got {[list(d.value.columns) for d in at.dataframe]}")


# --- every page opens --------------------------------------------------------------------------


def test_app_lists_all_pages() -> None:
    """The page list parsed from app.py is complete and every file exists."""
    assert len(PAGES) >= 7
    stems = [Path(p).stem for p in PAGES]
    for name in ("overview", "upload", "agreement", "review", "reviewers", "judge", "export"):
        assert name in stems
    for page in PAGES:
        assert (ROOT / page).is_file(), page


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_on_the_sample_run(db_url: str, engine: Engine, page: str) -> None:
    """First start on an empty database: the sample run is loaded and every page renders."""
    at = open_app()
    runs = store.list_runs(engine)
    assert [r.name for r in runs] == [s.name for s in reversed(store.SAMPLE_SET)]  # newest first
    assert titles(at) == ["Start here"]  # the default page
    assert titles(goto(at, page_path("overview"))) == ["Overview: Sample run"]
    goto(at, page)
    assert not at.exception, at.exception
    assert run_param(at) == str(runs[0].id)
    assert at.sidebar.selectbox(key="run_picker").value == runs[0].id
    assert len(at.main.children) > 0


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_on_an_uploaded_run(db_url: str, engine: Engine, page: str) -> None:
    """After an upload every page renders on the new run."""
    at = upload(open_app(), GOOD_NAME, GOOD_CSV)
    assert not at.exception, at.exception
    new = [r for r in store.list_runs(engine) if r.filename == GOOD_NAME]
    assert len(new) == 1
    goto(at, page)
    assert not at.exception, at.exception
    assert run_param(at) == str(new[0].id)
    assert len(at.main.children) > 0
    # A rerun of the same page (a click) also works.
    at.run()
    assert not at.exception, at.exception


def test_deep_link_as_first_run_runs_app_py(db_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """AppTest starts like a fresh server: the first run asks for /agreement?run=ID.

    app.py (sidebar, ``?run=`` handling) must run around the page, on this run and the next; with a
    ``pages/`` folder next to app.py Streamlit would run the page file alone (multipage v1).
    """
    sample = ingest.ensure_sample(engine)
    assert sample is not None
    at = new_app()
    at.query_params["run"] = str(sample.id)
    at.switch_page(AGREEMENT_PAGE)
    at.run()
    assert not at.exception, at.exception
    assert titles(at) == [f"Agreement: {sample.name}"]
    assert at.sidebar.selectbox(key="run_picker").value == sample.id


# --- uploads -----------------------------------------------------------------------------------


def test_upload_missing_response_column_asks_for_it_and_creates_no_run(db_url: str, engine: Engine) -> None:
    """The mapping step (an info line, not an error: issue 27) names the missing column; no run is
    stored and the selection stays."""
    at = open_app()
    before = store.list_runs(engine)
    upload(at, "broken_hindi.csv", b"question,answer,Domain\nq1,a1,D\nq2,a2,D\n")
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    infos = [unescape_md(str(i.value)) for i in at.info]
    assert any("'response'" in i and "broken_hindi.csv" in i for i in infos), infos
    assert store.list_runs(engine) == before
    assert run_param(at) == str(before[0].id)
    assert titles(at) == ["Upload a model run"]


def test_upload_selects_the_new_run(db_url: str, engine: Engine) -> None:
    """A good upload is stored, selected (?run=ID) and opened on the overview."""
    at = upload(open_app(), GOOD_NAME, GOOD_CSV)
    assert not at.exception, at.exception
    new = [r for r in store.list_runs(engine) if r.filename == GOOD_NAME]
    assert len(new) == 1
    run = new[0]
    assert (run.name, run.model, run.language, run.n_rows) == ("my_model_hindi", "my_model", "Hindi", 11)
    assert run_param(at) == str(run.id)
    assert titles(at) == ["Overview: my_model_hindi"]
    assert at.sidebar.selectbox(key="run_picker").value == run.id
    # The loader's warning about the blank response is shown with the run.
    warnings = [unescape_md(str(w.value)) for w in at.warning]
    assert any("1 row(s) have a blank response" in w for w in warnings), warnings


def test_reupload_of_identical_bytes_opens_the_existing_run(db_url: str, engine: Engine) -> None:
    """A second session uploading the same bytes gets the same run, not a duplicate."""
    upload(open_app(), GOOD_NAME, GOOD_CSV)
    count = store.count_runs(engine)
    at = upload(open_app(), "copy.csv", GOOD_CSV)
    assert not at.exception, at.exception
    assert store.count_runs(engine) == count
    run = store.find_run_by_sha(engine, store.sha256_bytes(GOOD_CSV))
    assert run is not None
    assert run_param(at) == str(run.id)
    assert titles(at) == [f"Overview: {run.name}"]


# --- the run in the URL ------------------------------------------------------------------------


def test_missing_run_in_url_falls_back_with_a_warning(db_url: str, engine: Engine) -> None:
    """?run=999 (no such run) warns and shows the newest run."""
    at = open_app({"run": "999"})
    newest = store.list_runs(engine)[0]
    warnings = [str(w.value) for w in at.sidebar.warning]
    assert any("999" in w for w in warnings), warnings
    assert run_param(at) == str(newest.id)
    assert titles(at) == ["Start here"]
    assert titles(goto(at, page_path("overview"))) == [f"Overview: {newest.name}"]


def test_non_numeric_run_in_url_falls_back(db_url: str, engine: Engine) -> None:
    """?run=abc is ignored and the newest run is shown."""
    at = open_app({"run": "abc"})
    newest = store.list_runs(engine)[0]
    assert run_param(at) == str(newest.id)
    assert titles(at) == ["Start here"]
    assert titles(goto(at, page_path("overview"))) == [f"Overview: {newest.name}"]


def test_run_in_url_opens_that_run(db_url: str, engine: Engine) -> None:
    """A shared link with ?run= of an older run lands on that run, not the newest."""
    older = ingest.save_run(engine, GOOD_CSV, GOOD_NAME).run
    newer = ingest.save_run(engine, XSS_CSV, XSS_NAME).run
    assert store.list_runs(engine)[0].id == newer.id
    at = open_app({"run": str(older.id)})
    assert run_param(at) == str(older.id)
    assert titles(at) == ["Start here"]
    assert titles(goto(at, page_path("overview"))) == [f"Overview: {older.name}"]
    goto(at, AGREEMENT_PAGE)
    assert not at.exception, at.exception
    assert titles(at) == [f"Agreement: {older.name}"]
    assert run_param(at) == str(older.id)


# --- numbers equal the CLI ---------------------------------------------------------------------


def _check_against_cli(at: AppTest, report: dict) -> None:
    """Overview table and combined metrics, then agreement buckets and McNemar, equal the CLI."""
    assert titles(at)[0].startswith("Overview: ")
    table = frame_with(at, "Exact substring accuracy").set_index("domain")
    cli_domains = [d["domain"] for d in report["metrics"]["exact_substring"]["domains"]]
    assert set(cli_domains) <= set(table.index)
    assert set(table.index) <= {*cli_domains, "combined"}
    for metric, title in (("exact_substring", "Exact substring"), ("word_overlap", "Word overlap")):
        cli = report["metrics"][metric]
        for row in [*cli["domains"], cli["combined"]]:
            if row["domain"] not in table.index:
                continue
            got = table.loc[row["domain"]]
            assert int(got["n"]) == row["n"], row
            assert int(got["blank responses"]) == row["blank"], row
            assert int(got[f"{title} correct"]) == row["correct"], row
            assert float(got[f"{title} accuracy"]) == pytest.approx(row["accuracy"], abs=5e-5), row
            assert got[f"{title} 95% CI"] == f"{row['ci_low']:.1%} to {row['ci_high']:.1%}", row
        combined = cli["combined"]
        metrics = {m.label: m for m in at.metric}
        metric_el = metrics[f"{title} (combined)"]
        assert metric_el.value == f"{combined['accuracy']:.1%}"
        assert metric_el.help.startswith(f"{combined['correct']} of {combined['n']};")
        assert f"{combined['ci_low']:.1%} to {combined['ci_high']:.1%}" in metric_el.help

    goto(at, AGREEMENT_PAGE)
    assert not at.exception, at.exception
    buckets = frame_with(at, "overlap_only")
    for domain, counts in report["buckets"].items():
        assert buckets.loc[domain].to_dict() == counts, domain
    assert len(buckets) == len(report["buckets"])
    test = report["mcnemar"]
    texts = [str(t.value) for t in at.text]
    assert any(f"exact_only = {test['exact_only']}, overlap_only = {test['overlap_only']}" in t for t in texts), texts
    grid = frame_with(at, "overlap passes")
    combined_buckets = report["buckets"]["combined"]
    assert grid.loc["exact passes", "overlap passes"].startswith(f"{combined_buckets['both_pass']} (")
    assert grid.loc["exact fails", "overlap fails"].startswith(f"{combined_buckets['both_fail']} (")
    assert grid.loc["exact passes", "overlap fails"].startswith(f"{combined_buckets['exact_only']} (")
    assert grid.loc["exact fails", "overlap passes"].startswith(f"{combined_buckets['overlap_only']} (")


def test_sample_overview_equals_cli(db_url: str) -> None:
    """The sample run's dashboard numbers equal `python -m scoring score --json` on the file."""
    at = goto(open_app(), OVERVIEW_PAGE)
    _check_against_cli(at, cli_report(SAMPLE))


def test_uploaded_overview_equals_cli(db_url: str, tmp_path: Path) -> None:
    """An uploaded run's dashboard numbers equal the CLI on the same bytes."""
    path = tmp_path / GOOD_NAME
    path.write_bytes(GOOD_CSV)
    at = upload(open_app(), GOOD_NAME, GOOD_CSV)
    assert not at.exception, at.exception
    report = cli_report(path)
    assert report["rows"] == 11
    _check_against_cli(at, report)


# --- dataset text is never Markdown --------------------------------------------------------------


def _payload_bucket() -> str:
    scored = score_frame(load_bytes(XSS_CSV, XSS_NAME).frame)
    return str(scored.loc[0, "bucket"])


def _assert_no_raw_payload(at: AppTest, where: str) -> None:
    texts = markdown_texts(at)
    assert texts, f"{where}: no Markdown elements found at all"
    for text in texts:
        for payload in PAYLOADS:
            assert payload not in text, f"{where}: raw payload {payload!r} in a Markdown element: {text!r}"


@pytest.mark.parametrize("page", PAGES)
def test_dataset_payloads_never_reach_markdown(db_url: str, engine: Engine, page: str) -> None:
    """Payloads in question/answer/Domain/response never appear in a Markdown element."""
    at = upload(open_app(), XSS_NAME, XSS_CSV)
    assert not at.exception, at.exception
    _assert_no_raw_payload(at, "after upload")
    goto(at, page)
    assert not at.exception, at.exception
    _assert_no_raw_payload(at, page)


def test_agreement_rows_show_payloads_as_escaped_text(db_url: str, engine: Engine) -> None:
    """The payload row, in its bucket and domain, is shown escaped in HTML and as plain text."""
    at = upload(open_app(), XSS_NAME, XSS_CSV)
    goto(at, AGREEMENT_PAGE)
    at.selectbox(key="agree_bucket").set_value(_payload_bucket())
    at.selectbox(key="agree_domain").set_value(PAYLOADS[2])
    at.run()
    assert not at.exception, at.exception
    _assert_no_raw_payload(at, "agreement rows")
    bodies = "".join(str(h.value) for h in at.get("html"))
    assert html.escape(PAYLOADS[0]) in bodies
    assert html.escape(PAYLOADS[1]) in bodies
    assert "<script" not in bodies and "<img" not in bodies
    texts = " ".join(str(t.value) for t in at.text)
    assert f"Domain: {PAYLOADS[2]}" in texts


# --- numbers, search, reviewers (issue 8, section 6) ---------------------------------------------

REVIEWERS_PAGE = page_path("reviewers")
OVERVIEW_PAGE = page_path("overview")
JUDGE_PAGE = page_path("judge")
P_ZERO = re.compile(r"p = 0(?![.\d])")
# 30 rows whose golden words are all present but rearranged (overlap_only) and no exact_only row:
# McNemar's exact p = 2 * 0.5**30, about 1.9e-9.
SKEWED_NAME = "skewed_model.csv"
SKEWED_CSV = (
    "question,answer,Domain,response\n"
    + "".join(f"Q{i}?,Ganga river {i},Geography,river {i} Ganga\n" for i in range(30))
    + "Capital?,New Delhi,Geography,New Delhi\n"
).encode("utf-8")
# Row 2 and row 5 are the same item (identical question, answer and response).
DUP_NAME = "dup_model.csv"
DUP_CSV = (
    b"question,answer,Domain,response\n"
    b"Capital of India?,New Delhi,Geography,The capital is New Delhi.\n"
    b"Longest river?,Ganga,Geography,The Godavari\n"
    b"Highest peak?,Kangchenjunga,Geography,Kangchenjunga peak\n"
    b"Author of Godaan?,Munshi Premchand,Literature,Premchand\n"
    b"Longest river?,Ganga,Geography,The Godavari\n"
)
DUP_OTHER_CSV = DUP_CSV.replace(b"Highest peak?", b"Tallest peak?")  # another run holding rows 1, 2, 4, 5


def column_config(at: AppTest, column: str) -> dict[str, dict]:
    """The column config (column name -> settings) of the first dataframe that has ``column``."""
    found = [d for d in at.dataframe if column in d.value.columns]
    assert found, f"no dataframe with a {column!r} column"
    return json.loads(found[0].proto.columns or "{}")


def displayed(at: AppTest, column: str) -> pd.DataFrame:
    """What the browser shows in the cells of the first dataframe that has ``column``: the Styler's
    display values when the page formats them, else the values themselves as text."""
    found = [d for d in at.dataframe if column in d.value.columns]
    assert found, f"no dataframe with a {column!r} column"
    styler = found[0].proto.arrow_data.styler
    if not styler.display_values:
        return found[0].value.astype(str)
    shown = pa.ipc.open_stream(styler.display_values).read_pandas()
    shown.columns = found[0].value.columns
    return shown


def page_texts(at: AppTest) -> list[str]:
    """What a reader sees as text: st.text, metric values and help, and every dataframe cell."""
    out = [str(t.value) for t in at.main.text]
    out += [f"{m.value} {m.help}" for m in at.metric]
    for df in at.dataframe:  # the Styler's display values where the page formats the cells
        styler = df.proto.arrow_data.styler
        shown = pa.ipc.open_stream(styler.display_values).read_pandas() if styler.display_values else df.value
        out += [str(v) for v in shown.astype(str).to_numpy().ravel()]
    return out


def row_cards(at: AppTest) -> list[int]:
    """1-based row numbers of the Agreement browser's cards on screen."""
    return [int(m.group(1)) for t in at.main.text if (m := re.match(r"^Row (\d+)   ", str(t.value)))]


def test_overview_accuracy_reads_as_percentages(db_url: str) -> None:
    at = goto(open_app(), OVERVIEW_PAGE)
    table = frame_with(at, "Exact substring accuracy")
    shown = displayed(at, "Exact substring accuracy")
    accuracy_cols = [c for c in table.columns if c.endswith("accuracy")] + ["Adjudicated if pending right"]
    assert len(accuracy_cols) >= 4
    for col in accuracy_cols:
        assert table[col].between(0, 1).all()  # values stay numbers (sorting), shown as percentages
        assert shown[col].tolist() == [f"{v:.1%}" for v in table[col]], col
    art = table["domain"].tolist().index("Art")
    assert shown.loc[art, "Exact substring accuracy"] == "66.7%"  # 8 of 12, rounded as the CLI does
    assert all(str(v).endswith("%") for v in table["Exact substring 95% CI"])
    for metric in at.metric:
        assert re.fullmatch(r"\d{1,3}\.\d%", metric.value), metric.value
    adjudicated = [t for t in page_texts(at) if t.startswith("Adjudicated (human")]
    assert len(adjudicated) == 1 and re.search(r"\d\.\d% if every pending row is wrong", adjudicated[0])
    assert not any("None" in t for t in page_texts(at))


def test_tiny_p_value_reads_p_below_floor_and_precision_dash(db_url: str, engine: Engine) -> None:
    at = upload(open_app(), SKEWED_NAME, SKEWED_CSV)
    goto(at, AGREEMENT_PAGE)
    assert not at.exception, at.exception
    texts = page_texts(at)
    mcnemar_line = [t for t in texts if t.startswith("McNemar")]
    assert mcnemar_line == ["McNemar exact test: exact_only = 0, overlap_only = 30, p < 0.0001"], mcnemar_line
    assert not any(P_ZERO.search(t) for t in texts)
    precision = frame_with(at, "precision")
    assert precision["precision"].tolist() == ["—", "—"]  # nothing reviewed yet
    assert not any("None" in t for t in texts)

    run = store.find_run_by_sha(engine, store.sha256_bytes(SKEWED_CSV))
    assert run is not None
    scored = store.load_scored(engine, run.id)
    review.record_mark(engine, str(scored.loc[0, "item_key"]), run.id, "alice", "correct")
    at.run()
    precision = frame_with(at, "precision").set_index("metric")
    assert precision.loc["overlap_correct", "precision"] == "100.0%"
    assert precision.loc["exact_correct", "precision"] == "—"  # the marked row fails exact


def _search(at: AppTest, query: str) -> AppTest:
    at.text_input(key="agree_search").set_value(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_agreement_search_narrows_the_row_browser(db_url: str) -> None:
    at = upload(open_app(), GOOD_NAME, GOOD_CSV)
    goto(at, AGREEMENT_PAGE)
    at.selectbox(key="agree_bucket").set_value("All buckets")
    at.run()
    assert row_cards(at) == list(range(1, 11))  # first page of 11 rows
    assert at.number_input(key="agree_page").label.startswith("Page (of 2; 11 rows)")

    at.number_input(key="agree_page").set_value(2)
    at.run()
    assert row_cards(at) == [11]
    _search(at, "दिल्ली")  # Indic text, in the golden answer and the response of row 7
    assert row_cards(at) == [7]
    assert at.number_input(key="agree_page").value == 1  # a new search starts at its first page
    assert "1 of 11 rows in the run match the search." in page_texts(at)
    _search(at, "DELHI")  # case-insensitive; question, answer and response
    assert row_cards(at) == [1]
    _search(at, "tagore,")  # punctuation taken literally (response "Tagore, Rabindranath")
    assert row_cards(at) == [4]
    _search(at, ".*")
    assert row_cards(at) == []
    _search(at, "#3")
    assert row_cards(at) == [3]
    _search(at, "")
    assert len(row_cards(at)) == 10

    # Within one bucket the search says how many rows of the whole run match elsewhere.
    at.selectbox(key="agree_bucket").set_value("both_fail")
    at.run()
    _search(at, "delhi")
    assert row_cards(at) == []
    notes = [t for t in page_texts(at) if "match the search" in t]
    assert notes and "1 rows of the whole run match (choose All buckets to see them)" in notes[0], notes


def test_agreement_opens_a_found_row_in_the_review_queue(db_url: str, engine: Engine) -> None:
    at = upload(open_app(), GOOD_NAME, GOOD_CSV)
    run = store.find_run_by_sha(engine, store.sha256_bytes(GOOD_CSV))
    assert run is not None
    goto(at, AGREEMENT_PAGE)
    at.selectbox(key="agree_bucket").set_value("All buckets")
    at.run()
    _search(at, "godaan")
    assert row_cards(at) == [5]
    at.button(key="agree_open_5").click()
    at.run()
    assert not at.exception, at.exception
    assert titles(at)[0].startswith("Review queue")
    assert run_param(at) == str(run.id)
    # The queue reads ?row= (1-based) and may drop it from the URL once it has opened that row.
    shown = [t for t in texts(at) if t.startswith("Row 5 of the run")]
    assert at.query_params.get("row") in ("5", ["5"]) or shown, (dict(at.query_params), shown)


def test_reviewers_page_units_duplicates_conflicts_and_carried_marks(db_url: str, engine: Engine) -> None:
    run = ingest.save_run(engine, DUP_CSV, DUP_NAME).run
    other = ingest.save_run(engine, DUP_OTHER_CSV, "other_" + DUP_NAME).run
    scored = store.load_scored(engine, run.id)
    keys = scored["item_key"].tolist()
    assert keys[1] == keys[4] and len(set(keys)) == 4
    review.record_mark(engine, keys[1], run.id, "alice", "correct")  # the item on rows 2 and 5
    review.record_mark(engine, keys[0], run.id, "alice", "correct")
    review.record_mark(engine, keys[1], run.id, "bob", "wrong")
    review.record_mark(engine, keys[3], other.id, "carol", "wrong")  # given on the other run's row 4

    at = open_app({"run": str(run.id)})
    goto(at, REVIEWERS_PAGE)
    assert not at.exception, at.exception
    per = frame_with(at, "duplicate rows")
    assert per.loc["alice", "correct"] == 2 and per.loc["alice", "items"] == 2
    assert per.loc["alice", "duplicate rows"] == 1  # alice's 2 items cover 3 rows
    assert per.loc["bob", "wrong"] == 1 and per.loc["bob", "duplicate rows"] == 1
    texts = page_texts(at)
    assert (
        "All reviewers together: 3 item(s) with a verdict, on 4 row(s) of this run; "
        "1 of those items appear on more than one row." in texts
    )
    # current_verdicts tells the run each mark was given in: carol's mark on the other run shows here.
    assert per.loc["carol", "marked in another run"] == 1 and per.loc["alice", "marked in another run"] == 0
    assert any(
        t.startswith("carol: 1 verdict(s) carried over") and f"1 marked in run #{other.id}" in t for t in texts
    ), texts

    assert "1 conflict(s): items whose reviewers' current verdicts differ (2 rows, counting duplicate rows)." in texts
    conflicts = frame_with(at, "golden answer")
    assert list(conflicts.columns[:3]) == ["question", "golden answer", "response"]
    assert list(conflicts.columns[-1:]) == ["item_key"]
    assert len(conflicts) == 1
    first = conflicts.iloc[0]
    assert (first["question"], first["golden answer"], first["response"]) == ("Longest river?", "Ganga", "The Godavari")
    assert first["rows"] == "2, 5"  # 1-based, both copies
    assert (first["alice"], first["bob"]) == ("correct", "wrong")
    hidden = {c for c, cfg in column_config(at, "golden answer").items() if cfg.get("hidden")}
    assert {"item_key", "row_idx"} <= hidden


@pytest.mark.parametrize("page", ["overview", "agreement", "reviewers", "judge"])
def test_no_none_or_p_zero_on_number_pages(db_url: str, engine: Engine, page: str) -> None:
    run = ingest.save_run(engine, SKEWED_CSV, SKEWED_NAME).run
    scored = store.load_scored(engine, run.id)
    review.record_mark(engine, str(scored.loc[0, "item_key"]), run.id, "alice", "correct")
    review.record_mark(engine, str(scored.loc[0, "item_key"]), run.id, "bob", "wrong")
    at = open_app({"run": str(run.id)})
    goto(at, page_path(page))
    assert not at.exception, at.exception
    for text in page_texts(at):
        assert "None" not in text and "nan" not in text.split() and not P_ZERO.search(text), (page, text)


@pytest.mark.parametrize("page", PAGES)
def test_a_run_named_with_payloads_never_reaches_markdown(db_url: str, engine: Engine, page: str) -> None:
    """The run's name, model and language (from the file name, or typed on the Upload page) are
    untrusted too: page titles and captions show them escaped."""
    at = upload(open_app(), XSS_NAME, XSS_CSV)
    run = store.find_run_by_sha(engine, store.sha256_bytes(XSS_CSV))
    assert run is not None
    store.update_run_meta(engine, run.id, PAYLOADS[0], PAYLOADS[1], PAYLOADS[2])
    goto(at, page)
    assert not at.exception, at.exception
    _assert_no_raw_payload(at, page)


def mapping_boxes(at: AppTest) -> dict:
    """The Upload page's column-mapping select boxes, by label."""
    return {b.label: b for b in at.selectbox if b.key and b.key.startswith("map_")}


def save_mapping(at: AppTest) -> None:
    """Press "Save with this mapping", as a person does."""
    next(b for b in at.button if b.label == "Save with this mapping").click()
    at.run()
    assert not at.exception, at.exception


def test_upload_with_other_field_names_asks_which_is_which_and_remembers(db_url: str, engine: Engine) -> None:
    """Issue 19: a file whose fields are target/prediction/category is not refused: the page asks
    (select boxes with a few values of each, guessed from the names), saves with the mapping, shows it
    with the run, and a second file with the same fields is read with it without asking."""
    data = b"id,target,prediction,category\n1,Delhi,It is Delhi,Geo\n2,Agra,Mumbai,Geo\n"
    at = upload(open_app(), "harness_out.csv", data)
    assert not at.exception, at.exception
    boxes = mapping_boxes(at)
    assert set(boxes) == {"Golden answer", "Response", "Question", "Domain", "Language (per row)"}
    assert boxes["Language (per row)"].value is None  # no field named like a language
    assert (boxes["Golden answer"].value, boxes["Response"].value, boxes["Domain"].value) == (
        "target",
        "prediction",
        "category",
    )
    assert boxes["Question"].value is None
    assert "Delhi | Agra" in boxes["Golden answer"].format_func("target")
    boxes["Question"].set_value("id")
    save_mapping(at)
    run = next(r for r in store.list_runs(engine) if r.filename == "harness_out.csv")
    assert run.n_rows == 2 and titles(at) == [f"Overview: {run.name}"]
    assert store.load_scored(engine, run.id)["answer"].tolist() == ["Delhi", "Agra"]
    again = upload(open_app(), "harness_out_2.csv", data.replace(b"Mumbai", b"Agra"))
    assert not again.exception, again.exception
    second = next(r for r in store.list_runs(engine) if r.filename == "harness_out_2.csv")
    assert store.load_scored(engine, second.id)["question"].tolist() == ["1", "2"]
    shown = goto(again, UPLOAD_PAGE)
    assert any("Column mapping: answer = target, response = prediction" in t.value for t in shown.text)


HARNESS = Path(__file__).resolve().parent / "harness_files"


def test_harness_logs_upload_as_runs_with_their_model(db_url: str, engine: Engine) -> None:
    """Issue 19: an Inspect AI .eval log (written by inspect_ai with its mock model) becomes a run
    named for its model, and lm-evaluation-harness's samples file uploaded together with its
    results file takes the model from the results (which is not made a run of its own)."""
    at = upload(open_app(), "inspect_indic_qa.eval", (HARNESS / "inspect_indic_qa.eval").read_bytes())
    assert not at.exception, at.exception
    run = next(r for r in store.list_runs(engine) if r.filename == "inspect_indic_qa.eval")
    assert run.model == "mockllm/model" and run.n_rows == 10
    scored = store.load_scored(engine, run.id)
    assert {"sample_id", "epoch", "task"} <= set(scored.columns)
    at = open_app()
    at.switch_page(UPLOAD_PAGE)
    at.run()
    samples, results = HARNESS / "lm_eval_samples_indic_qa.jsonl", HARNESS / "lm_eval_results.json"
    at.file_uploader(key="uploads").set_value(
        [
            (samples.name, samples.read_bytes(), "application/json"),
            (results.name, results.read_bytes(), "application/json"),
        ]
    )
    at.run()
    assert not at.exception, at.exception
    names = [r.filename for r in store.list_runs(engine)]
    assert samples.name in names and results.name not in names
    lm = next(r for r in store.list_runs(engine) if r.filename == samples.name)
    expected = json.loads(results.read_text(encoding="utf-8"))["model_name"]
    assert lm.model == expected


def test_the_domain_can_be_another_metadata_field_of_a_harness_log(db_url: str, engine: Engine) -> None:
    """Issue 19: with "Choose which field is which" on, an Inspect AI log whose names all match
    still asks, preselecting its own fields, and the user makes a metadata field the domain."""
    at = open_app()
    at.switch_page(UPLOAD_PAGE)
    at.run()
    at.toggle(key="map_always").set_value(True)
    at.run()
    data = (HARNESS / "inspect_indic_qa.eval").read_bytes()
    at.file_uploader(key="uploads").set_value(("inspect_indic_qa.eval", data, "application/zip"))
    at.run()
    assert not at.exception, at.exception
    boxes = mapping_boxes(at)
    assert (boxes["Golden answer"].value, boxes["Response"].value, boxes["Domain"].value) == (
        "answer",
        "response",
        "Domain",
    )
    assert "Bharhut" in boxes["Domain"].format_func("metadata_source")
    assert boxes["Language (per row)"].value == "language"  # the log's metadata language, preselected
    boxes["Domain"].set_value("metadata_source")
    save_mapping(at)
    run = next(r for r in store.list_runs(engine) if r.filename == "inspect_indic_qa.eval")
    scored = store.load_scored(engine, run.id)
    source = load_path(HARNESS / "inspect_indic_qa.eval").table["metadata_source"].to_list()
    assert scored["Domain"].tolist() == [v or "(no domain)" for v in source] and "Bharhut" in source
    assert "Domain_original" in scored.columns  # the log's own domain kept
    assert store.language_source(engine, run.id) == "metadata" and "Hindi" in set(scored["language"])
