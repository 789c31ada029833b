"""Unit tests of scoring/store.py (runs, dedupe, item keys), scoring/db.py (URL) and highlighting."""

from __future__ import annotations

import hashlib
import html
import re
import sqlite3
import threading
import time
from datetime import timedelta
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from sqlalchemy import Engine, func, insert, inspect, select

from scoring import ingest, store
from scoring.core.errors import InputError
from scoring.core.highlight import highlight_golden, highlight_response, text_block
from scoring.core.items import item_key
from scoring.core.loader import load_bytes
from scoring.core.report import score_frame
from scoring.core.row_language import row_languages
from scoring.store import ENV_VAR, chunked, database_url, default_sqlite_path, make_engine, run_table, runs
from scoring.store.orm_tables import Run, RunPart, utcnow

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "sample_run.csv"

BASE_CSV = (
    "question,answer,Domain,response,id,notes\n"
    "Capital of France?,Paris,Geography,It is Paris.,q1,first\n"
    "Largest planet?,Jupiter,Science,Saturn,q2,\n"
    "Author of Gitanjali?,Rabindranath Tagore,Literature,Tagore wrote it,q3,n3\n"
    "Blank one?,Something,Science,   ,q4,n4\n"
)
# A corrected file: one row changed, one appended; the others are byte-identical rows.
CORRECTED_CSV = (
    "question,answer,Domain,response,id,notes\n"
    "Capital of France?,Paris,Geography,It is Paris.,q1,first\n"
    "Largest planet?,Jupiter,Science,Jupiter,q2,\n"
    "Author of Gitanjali?,Rabindranath Tagore,Literature,Tagore wrote it,q3,n3\n"
    "Blank one?,Something,Science,   ,q4,n4\n"
    "New row?,new,Science,new,q5,n5\n"
)

PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "![x](http://127.0.0.1:9/p.png)",
)


def _row_count(engine: Engine) -> int:
    """Rows stored for every run (each run's parts read back as its Parquet table)."""
    with engine.connect() as conn:
        ids = conn.execute(select(RunPart.run_id).distinct()).scalars().all()
    return sum(run_table.read_rows(engine, run_id).height for run_id in ids)


def _part_count(engine: Engine, run_id: int | None = None) -> int:
    """Stored parts of one run, or of all runs."""
    query = select(func.count()).select_from(RunPart)
    with engine.connect() as conn:
        return int(conn.execute(query if run_id is None else query.where(RunPart.run_id == run_id)).scalar_one())


# --- runs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "model", "language"),
    [
        ("my_model_hindi.csv", "my_model", "Hindi"),
        ("gpt-4o-Tamil.tsv", "gpt_4o", "Tamil"),
        ("llama3 bengali v2.csv", "llama3_v2", "Bengali"),
        ("plain_model.csv", "plain_model", ""),
    ],
)
def test_guess_model_language(filename: str, model: str, language: str) -> None:
    """The language part of a file name is recognised and removed from the model name."""
    assert ingest.guess_model_language(filename) == (model, language)


def test_save_run_records_name_model_language_sha(engine: Engine) -> None:
    """A new upload becomes a run named after the file, with guessed model and language."""
    data = BASE_CSV.encode()
    result = ingest.save_run(engine, data, "my_model_hindi.csv")
    assert result.created is True
    run = result.run
    assert (run.name, run.model, run.language) == ("my_model_hindi", "my_model", "Hindi")
    assert run.filename == "my_model_hindi.csv"
    assert run.sha256 == hashlib.sha256(data).hexdigest()
    assert run.n_rows == 4
    assert run.extra_columns == ["id", "notes"]
    assert run.uploaded_at is not None
    assert [r.id for r in store.list_runs(engine)] == [run.id]
    assert store.get_run(engine, run.id) == run
    assert _row_count(engine) == 4


def test_save_run_previews_rows_per_domain_before_it_scores(engine: Engine) -> None:
    """The Upload page shows what the file holds while a large one is scored: rows per domain
    (sorted as the Overview sorts them), heard after reading and before the scoring phase."""
    heard: list[object] = []
    data = BASE_CSV.encode()
    ingest.save_run(
        engine,
        data,
        "preview.csv",
        progress=lambda phase, done, total: heard.append(phase),
        preview=lambda counts: heard.append(counts),
    )
    table = load_bytes(data, "preview.csv").table
    expected = sorted(table["Domain"].value_counts().iter_rows(), key=lambda row: row[0])
    assert heard.index(expected) == heard.index("scoring") - 1
    assert sum(n for _, n in expected) == 4
    # Identical bytes open the stored run: nothing is read, so nothing is previewed.
    heard.clear()
    ingest.save_run(engine, data, "preview.csv", preview=lambda counts: heard.append(counts))
    assert heard == []


@pytest.mark.parametrize(
    ("data", "name", "language"),
    [
        (BASE_CSV.encode(), "my_model_hindi.csv", None),  # extras, the language from the file's name
        (BASE_CSV.encode(), "plain.csv", ""),  # no language: each row's script
        (BASE_CSV.replace("id,notes", "bucket,language").encode(), "named.csv", None),  # extras named as stored
        (SAMPLE.read_bytes(), "sample_run.csv", "Tamil"),
    ],
)
def test_the_rows_a_save_hands_over_are_the_rows_a_read_gives(
    engine: Engine, data: bytes, name: str, language: str | None
) -> None:
    """The Overview of a run just uploaded starts from the saved rows instead of reading them back:
    the same frame, names, dtypes and values, as load_table would give."""
    result = ingest.save_run(engine, data, name, language=language)
    assert result.rows is not None
    loaded = store.load_table(engine, result.run.id)
    assert result.rows.schema == loaded.schema
    assert result.rows.equals(loaded)
    assert ingest.save_run(engine, data, name).rows is None  # identical bytes: nothing was saved


def test_save_run_explicit_meta_and_update(engine: Engine) -> None:
    """Explicit name/model/language win over the guess; update_run_meta edits them."""
    run = ingest.save_run(engine, BASE_CSV.encode(), "x_hindi.csv", name="N", model="M", language="").run
    assert (run.name, run.model, run.language) == ("N", "M", "")
    store.update_run_meta(engine, run.id, "Renamed", "m2", "Tamil")
    again = store.get_run(engine, run.id)
    assert again is not None
    assert (again.name, again.model, again.language) == ("Renamed", "m2", "Tamil")


def test_identical_bytes_open_the_existing_run(engine: Engine) -> None:
    """Dedupe by sha256: the same bytes under another name give the same run, created=False."""
    first = ingest.save_run(engine, BASE_CSV.encode(), "a_hindi.csv")
    second = ingest.save_run(engine, BASE_CSV.encode(), "renamed_copy.csv")
    assert second.created is False
    assert second.run.id == first.run.id
    assert second.run.name == "a_hindi"
    assert store.count_runs(engine) == 1
    assert _row_count(engine) == 4


def test_different_bytes_make_a_new_run(engine: Engine) -> None:
    """One changed byte of a cell is a different file and a different run (a byte that changes
    no row, a trailing line break, opens the same rows' run); list_runs is newest first."""
    first = ingest.save_run(engine, BASE_CSV.encode(), "a.csv")
    assert ingest.save_run(engine, BASE_CSV.encode() + b"\n", "a.csv").found == "same_rows"
    second = ingest.save_run(engine, BASE_CSV.replace(",n4", ",n5").encode(), "a.csv")
    assert second.created is True
    assert second.run.id != first.run.id
    assert [r.id for r in store.list_runs(engine)] == [second.run.id, first.run.id]
    assert store.find_run_by_sha(engine, first.run.sha256) == first.run


# --- item keys ---------------------------------------------------------------------------------


def test_item_keys_are_content_hashes_stable_across_uploads(engine: Engine) -> None:
    """Identical rows in different runs share a key; a changed row gets a new key."""
    base = ingest.save_run(engine, BASE_CSV.encode(), "base.csv").run
    corrected = ingest.save_run(engine, CORRECTED_CSV.encode(), "corrected.csv").run
    keys_a = store.load_scored(engine, base.id)["item_key"].tolist()
    keys_b = store.load_scored(engine, corrected.id)["item_key"].tolist()
    assert keys_a[0] == keys_b[0] and keys_a[2] == keys_b[2] and keys_a[3] == keys_b[3]
    assert keys_a[1] != keys_b[1]
    assert len(set(keys_b)) == 5
    assert keys_a[0] == item_key("Capital of France?", "Paris", "It is Paris.")
    # Re-loading gives the same keys (they are stored, not recomputed differently).
    assert store.load_scored(engine, base.id)["item_key"].tolist() == keys_a


def test_item_key_has_no_separator_collisions() -> None:
    """Moving text between fields changes the key."""
    assert item_key("a,b", "c", "d") != item_key("a", "b,c", "d")
    assert item_key("", "ab", "") != item_key("a", "b", "")
    assert len(item_key("q", "a", "r")) == 64


# --- load_scored -------------------------------------------------------------------------------


def test_load_scored_returns_stored_verdicts_in_input_order(engine: Engine) -> None:
    """Rows come back in file order with the verdicts of score_frame and the extra columns."""
    run = ingest.save_run(engine, BASE_CSV.encode(), "base.csv").run
    frame = store.load_scored(engine, run.id)
    assert frame["row_idx"].tolist() == [0, 1, 2, 3]
    assert frame["question"].tolist() == [
        "Capital of France?",
        "Largest planet?",
        "Author of Gitanjali?",
        "Blank one?",
    ]
    assert frame["id"].tolist() == ["q1", "q2", "q3", "q4"]
    assert frame["notes"].tolist() == ["first", "", "n3", "n4"]
    direct = score_frame(pd.DataFrame({"answer": frame["answer"], "response": frame["response"]}))
    for col in ("exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket"):
        assert frame[col].tolist() == direct[col].tolist(), col
    assert frame["exact_correct"].tolist() == [True, False, False, False]
    assert frame["is_blank"].tolist() == [False, False, False, True]
    assert frame["exact_correct"].dtype == bool
    for col in ("row_idx", "item_key", "question", "answer", "Domain", "response", "bucket"):
        assert col in frame.columns
    assert "extra" not in frame.columns and "run_id" not in frame.columns


def test_load_scored_keeps_runs_apart(engine: Engine) -> None:
    """Each run's frame holds only its own rows."""
    a = ingest.save_run(engine, BASE_CSV.encode(), "a.csv").run
    b = ingest.save_run(engine, CORRECTED_CSV.encode(), "b.csv").run
    assert len(store.load_scored(engine, a.id)) == 4
    assert len(store.load_scored(engine, b.id)) == 5


def test_sample_verdicts_match_scoring_core(engine: Engine) -> None:
    """The sample's stored verdicts equal a fresh score of the file."""
    run = ingest.ensure_sample(engine)
    assert run is not None
    stored = store.load_scored(engine, run.id)
    raw = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    fresh = score_frame(raw)
    assert stored["bucket"].tolist() == fresh["bucket"].tolist()
    assert stored["response"].tolist() == raw["response"].tolist()


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"question,answer,Domain\nq,a,d\n", "'response'"),
        (b"question,Domain,response\nq,d,r\n", "'answer'"),
        (b"", "empty"),
        (b"answer,response\n", "no data rows"),
        ("answer,response\ncaf\u00e9,x\n".encode("cp1252"), "0xE9"),
        (b"answer,response\na,b\x00c\n", "NUL"),
    ],
)
def test_bad_input_raises_and_creates_no_run(engine: Engine, data: bytes, fragment: str) -> None:
    """InputError names the problem; nothing is written."""
    with pytest.raises(InputError) as info:
        ingest.save_run(engine, data, "bad_hindi.csv")
    assert fragment in str(info.value)
    assert store.count_runs(engine) == 0
    assert store.list_runs(engine) == []
    assert _row_count(engine) == 0


def test_bad_input_after_good_run_leaves_it_alone(engine: Engine) -> None:
    """A failed upload does not disturb existing runs."""
    good = ingest.save_run(engine, BASE_CSV.encode(), "good.csv").run
    with pytest.raises(InputError):
        ingest.save_run(engine, b"question,answer\nq,a\n", "bad.csv")
    assert [r.id for r in store.list_runs(engine)] == [good.id]
    assert _row_count(engine) == 4


# --- database_url ------------------------------------------------------------------------------


def test_database_url_prefers_the_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """REVIEW_DB_URL wins over secrets.toml."""
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(f'{ENV_VAR} = "sqlite:///from-secrets.db"\n')
    monkeypatch.setenv(ENV_VAR, "sqlite:///from-env.db")
    assert database_url(tmp_path) == "sqlite:///from-env.db"


def test_database_url_then_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the env var, .streamlit/secrets.toml under the root is used."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(f'{ENV_VAR} = "postgresql://u@h/db"\n')
    assert database_url(tmp_path) == "postgresql://u@h/db"
    assert not (tmp_path / "data").exists()


def test_database_url_defaults_to_sqlite_under_root_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With neither, a SQLite file in root/data, whose folder is created with the engine (finding
    the URL creates nothing: test_settings.py)."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    url = database_url(tmp_path)
    assert url == f"sqlite:///{tmp_path / 'data' / 'review.db'}"
    assert default_sqlite_path(tmp_path) == tmp_path / "data" / "review.db"
    engine = make_engine(url)
    assert (tmp_path / "data").is_dir()
    assert store.count_runs(engine) == 0
    assert (tmp_path / "data" / "review.db").is_file()


def test_database_url_empty_env_var_falls_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty REVIEW_DB_URL counts as unset."""
    monkeypatch.setenv(ENV_VAR, "")
    assert database_url(tmp_path).startswith("sqlite:///")


# --- highlight escaping ------------------------------------------------------------------------

_OWN_TAGS = re.compile(r'<span style="[^"<>]*">|</span>|<s>|</s>|<div style="[^"<>]*">|</div>')


def _text_of(markup: str) -> str:
    """The text of highlighted HTML after removing only the tags highlight.py writes itself."""
    rest = _OWN_TAGS.sub("", markup)
    assert "<" not in rest and ">" not in rest, f"foreign markup left: {rest!r}"
    return html.unescape(rest)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_highlight_escapes_payloads(payload: str) -> None:
    """Response, golden answer and plain blocks keep payloads as escaped text."""
    response = f"Answer: {payload} and Paris"
    for answer in ("Paris", payload, "alert onerror src"):
        markup = highlight_response(answer, response)
        assert "<script" not in markup and "<img" not in markup
        assert _text_of(markup) == response
        golden = highlight_golden(answer, response)
        assert "<script" not in golden and "<img" not in golden
        assert _text_of(golden) == answer
    block = text_block(payload)
    assert _text_of(block) == payload
    assert html.escape(payload) in block


def test_highlight_marks_the_exact_match_of_a_payload() -> None:
    """A payload that is the golden answer is highlighted, still escaped."""
    answer = "<img src=x onerror=alert(2)>"
    markup = highlight_response(answer, f"see {answer}!")
    assert '<span style="background:#fde68a;border-radius:3px">&lt;img src=x onerror=alert(2)&gt;</span>' in markup


def test_markdown_image_is_plain_text_in_highlight() -> None:
    """The Markdown image stays literal characters (no tag is produced for it)."""
    markup = highlight_response("x", PAYLOADS[2])
    assert "<img" not in markup and "src=" not in markup
    assert _text_of(markup) == PAYLOADS[2]


def test_concurrent_save_of_identical_bytes_keeps_one_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two first starts (or uploads) racing with the same bytes: one run, no error for the loser."""
    engine = make_engine(f"sqlite:///{tmp_path / 'race.db'}")
    data = (Path(__file__).parents[1] / "sample_data" / "sample_run.csv").read_bytes()
    real_find = store.find_run_by_sha
    calls = {"n": 0}

    def find_late(eng, sha):  # the loser's pre-check runs before the winner commits
        calls["n"] += 1
        return None if calls["n"] == 1 else real_find(eng, sha)

    first = ingest.save_run(engine, data, "a.csv")
    monkeypatch.setattr(runs, "find_run_by_sha", find_late)
    second = ingest.save_run(engine, data, "a.csv")
    assert first.created and not second.created
    assert second.run.id == first.run.id
    assert len(store.list_runs(engine)) == 1


# --- uploads in short transactions (issue 8, section 4) ----------------------------------------


def _all_runs_and_parts(engine: Engine) -> tuple[int, int]:
    """Every run row (complete or not) and every stored part: what a failed upload must not leave."""
    with engine.connect() as conn:
        runs = conn.execute(select(func.count()).select_from(Run)).scalar_one()
    return int(runs), _part_count(engine)


def _parts_of(data: bytes) -> int:
    """How many parts an upload of ``data`` is stored as (at the part size in force)."""
    table = load_bytes(data, "x.csv").table
    return len(run_table.to_parts(run_table.scored_rows(table, [], row_languages(table).values)))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    """Parts of 256 bytes, one per transaction and no pause, so a few dozen rows make several."""
    monkeypatch.setattr(run_table, "PART_BYTES", 256)
    monkeypatch.setattr(chunked, "MAX_CHUNK", 1)
    monkeypatch.setattr(chunked, "MIN_CHUNK", 1)
    monkeypatch.setattr(chunked, "YIELD_S", 0.0)
    return 1


def _rows_csv(n: int, tag: str = "") -> bytes:
    lines = ["question,answer,Domain,response"] + [f"q{i}{tag},a{i},D,a{i} it is" for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("failure", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_upload_failing_half_way_leaves_no_run_and_no_rows(
    engine: Engine, small_chunks: int, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    """The 3rd part fails (an error or an interrupt): the partial run was never visible, and
    its run row and the parts already written are removed; the exception reaches the caller."""
    good = ingest.save_run(engine, BASE_CSV.encode(), "good.csv").run
    good_parts = _part_count(engine, good.id)
    assert _parts_of(_rows_csv(55)) >= 4
    real_insert = run_table._insert_parts
    seen: list[tuple[list[int], int]] = []

    def third_fails(conn, rows):
        if len(seen) == 2:
            raise failure
        real_insert(conn, rows)
        seen.append(([r.id for r in store.list_runs(engine)], store.count_runs(engine)))

    monkeypatch.setattr(run_table, "_insert_parts", third_fails)
    with pytest.raises(type(failure)):
        ingest.save_run(engine, _rows_csv(55), "half.csv")
    assert seen == [([good.id], 1), ([good.id], 1)]  # hidden while its first parts went in
    assert _all_runs_and_parts(engine) == (1, good_parts)  # only the good run and its parts are left
    assert [r.id for r in store.list_runs(engine)] == [good.id]
    monkeypatch.setattr(run_table, "_insert_parts", real_insert)
    again = ingest.save_run(engine, _rows_csv(55), "half.csv")  # the same bytes save cleanly later
    assert again.created and again.run.n_rows == 55
    assert len(store.load_scored(engine, again.run.id)) == 55


def test_rows_go_in_several_short_transactions(
    engine: Engine, small_chunks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 55-row upload cut into 256-byte parts is one transaction per part, and every row arrives
    in order."""
    stats: list[chunked.WriteStats] = []
    real = runs._write_parts

    def spy(*args, **kwargs):
        stats.append(real(*args, **kwargs))
        return stats[-1]

    monkeypatch.setattr(runs, "_write_parts", spy)
    run = ingest.save_run(engine, _rows_csv(55), "chunks.csv").run
    parts = _parts_of(_rows_csv(55))
    assert parts >= 4 and stats[0].rows == [1] * parts
    assert _part_count(engine, run.id) == parts
    assert store.load_scored(engine, run.id)["question"].tolist() == [f"q{i}" for i in range(55)]


def test_next_size_aims_at_the_lock_target() -> None:
    """Chunks grow at most twofold, shrink to what fits the target, and stay within bounds."""
    target = chunked.LOCK_TARGET_S
    assert chunked.next_size(1_000, 1_000, target / 4) == 2_000  # fast: doubles, no more
    assert chunked.next_size(1_000, 1_000, target * 2) == 500  # slow: halves
    assert chunked.next_size(1_000, 1_000, 100.0) == chunked.MIN_CHUNK
    assert chunked.next_size(chunked.MAX_CHUNK, chunked.MAX_CHUNK, 0.0) == chunked.MAX_CHUNK


def _hold_back(monkeypatch: pytest.MonkeyPatch, delay: float) -> threading.Event:
    """Slow every part by ``delay`` seconds; the event is set once the first part is in."""
    real_insert = run_table._insert_parts
    started = threading.Event()

    def slow(conn, rows):
        real_insert(conn, rows)
        started.set()
        time.sleep(delay)

    monkeypatch.setattr(run_table, "_insert_parts", slow)
    return started


def test_second_save_of_same_bytes_waits_for_the_first(
    engine: Engine, small_chunks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two uploads of the same bytes: the second waits while the first writes (its progress is
    not mistaken for a crash), then opens the first's run; one run, its rows once."""
    monkeypatch.setattr(runs, "WAIT_POLL_S", 0.02)
    monkeypatch.setattr(runs, "STALE_AFTER_S", 0.6)  # longer than one chunk, shorter than the save
    started = _hold_back(monkeypatch, 0.25)
    data = _rows_csv(40)
    results: dict[str, ingest.SaveResult] = {}
    first = threading.Thread(target=lambda: results.setdefault("first", ingest.save_run(engine, data, "a.csv")))
    first.start()
    assert started.wait(30)
    waited = time.monotonic()
    second = ingest.save_run(engine, data, "b.csv")
    waited = time.monotonic() - waited
    first.join(30)
    assert waited >= 0.5  # three more slowed chunks of the first went in meanwhile
    assert results["first"].created and not second.created
    assert second.run.id == results["first"].run.id
    assert second.run.name == "a"
    assert _all_runs_and_parts(engine) == (1, _parts_of(data))


def test_stale_incomplete_run_of_same_bytes_is_replaced(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crashed process left an incomplete run of these bytes: after it shows no progress for
    STALE_AFTER_S it is removed and the upload is saved anew."""
    monkeypatch.setattr(runs, "WAIT_POLL_S", 0.02)
    monkeypatch.setattr(runs, "STALE_AFTER_S", 0.3)
    data = _rows_csv(30)
    _leave_incomplete_run(engine, store.sha256_bytes(data), rows=12)
    assert store.list_runs(engine) == [] and store.find_run_by_sha(engine, store.sha256_bytes(data)) is None
    start = time.monotonic()
    result = ingest.save_run(engine, data, "retry.csv")
    assert time.monotonic() - start >= 0.3  # it waited for the leftover to prove stale
    assert result.created and result.run.name == "retry"  # (SQLite may reuse the freed id)
    assert _all_runs_and_parts(engine) == (1, _part_count(engine, result.run.id))  # the leftover's parts are gone
    assert store.load_scored(engine, result.run.id)["question"].tolist() == [f"q{i}" for i in range(30)]


def test_old_abandoned_runs_are_removed_by_the_next_upload(engine: Engine) -> None:
    """An incomplete run of other bytes older than ABANDONED_AFTER is cleared by any upload."""
    old = _leave_incomplete_run(engine, "0" * 64, rows=5, age=runs.ABANDONED_AFTER + timedelta(minutes=1))
    recent = _leave_incomplete_run(engine, "1" * 64, rows=3)
    ingest.save_run(engine, BASE_CSV.encode(), "base.csv")
    with engine.connect() as conn:
        left = set(conn.execute(select(Run.id)).scalars())
    assert old not in left and recent in left  # a recent one may be a live upload elsewhere
    assert _part_count(engine, old) == 0 and _part_count(engine, recent) > 0


def test_a_save_declared_stale_stops_and_saves_again(
    engine: Engine, small_chunks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If another save declares ours stale (e.g. we were suspended) and removes it, we notice at
    the next chunk, and start over instead of completing a run with missing rows."""
    started = _hold_back(monkeypatch, 0.1)
    data = _rows_csv(50)
    results: list[ingest.SaveResult] = []
    saver = threading.Thread(target=lambda: results.append(ingest.save_run(engine, data, "x.csv")))
    saver.start()
    assert started.wait(30)
    with engine.connect() as conn:
        (first_id,) = conn.execute(select(Run.id)).scalars().all()
    runs._abandon(engine, first_id)  # what a concurrent save does to a run it finds stale
    saver.join(30)
    (result,) = results
    assert result.created and result.run.n_rows == 50
    assert _all_runs_and_parts(engine) == (1, _parts_of(data))
    assert store.load_scored(engine, result.run.id)["row_idx"].tolist() == list(range(50))


def _leave_incomplete_run(engine: Engine, sha: str, rows: int, age: timedelta = timedelta(0)) -> int:
    """What a process killed half-way through an upload leaves: a hidden run and some parts."""
    table = pl.DataFrame({"question": [f"left{i}" for i in range(rows)], "answer": "a", "Domain": "D", "response": "a"})
    parts = run_table.to_parts(run_table.scored_rows(table, [], row_languages(table).values))
    with engine.begin() as conn:
        run_id = conn.execute(
            insert(Run).values(name="left", sha256=sha, n_rows=rows * 2, complete=False, uploaded_at=utcnow() - age)
        ).inserted_primary_key[0]
        conn.execute(insert(RunPart), [{"run_id": run_id, "part": i, "data": d} for i, d in enumerate(parts)])
    return int(run_id)


def test_old_database_gets_the_complete_column_and_keeps_its_runs(tmp_path: Path) -> None:
    """A database made before ``runs.complete`` existed: opening it adds the column (existing
    runs complete), its runs stay listed, and new uploads work."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    old = ingest.save_run(engine, BASE_CSV.encode(), "old.csv").run
    engine.dispose()
    with sqlite3.connect(tmp_path / "old.db") as raw:
        raw.execute("ALTER TABLE runs DROP COLUMN complete")  # the table as it was created before
        raw.execute("DROP TABLE alembic_version")  # ... by code that had no migrations yet
        assert "complete" not in {row[1] for row in raw.execute("PRAGMA table_info(runs)")}
    raw.close()
    engine = make_engine(url)
    assert "complete" in {c["name"] for c in inspect(engine).get_columns("runs")}
    assert [r.id for r in store.list_runs(engine)] == [old.id]
    assert store.get_run(engine, old.id) == old
    assert store.count_runs(engine) == 1 and ingest.ensure_sample(engine) is None
    assert store.find_run_by_sha(engine, old.sha256) == old
    new = ingest.save_run(engine, CORRECTED_CSV.encode(), "new.csv").run
    assert [r.id for r in store.list_runs(engine)] == [new.id, old.id]
    make_engine(url).dispose()  # opening it again changes nothing
