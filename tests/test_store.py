"""Unit tests of scoring/store.py (runs, dedupe, item keys), scoring/db.py (URL) and highlighting."""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import Engine, func, select

from scoring import store
from scoring.db import ENV_VAR, database_url, default_sqlite_path, make_engine
from scoring.errors import InputError
from scoring.highlight import highlight_golden, highlight_response, text_block
from scoring.items import item_key
from scoring.models import RunRow
from scoring.report import score_frame

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


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    """A fresh schema in a temporary SQLite file."""
    return make_engine(f"sqlite:///{tmp_path / 'store.db'}")


def _row_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(RunRow)).scalar_one())


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
    assert store.guess_model_language(filename) == (model, language)


def test_save_run_records_name_model_language_sha(engine: Engine) -> None:
    """A new upload becomes a run named after the file, with guessed model and language."""
    data = BASE_CSV.encode()
    result = store.save_run(engine, data, "my_model_hindi.csv")
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


def test_save_run_explicit_meta_and_update(engine: Engine) -> None:
    """Explicit name/model/language win over the guess; update_run_meta edits them."""
    run = store.save_run(engine, BASE_CSV.encode(), "x_hindi.csv", name="N", model="M", language="").run
    assert (run.name, run.model, run.language) == ("N", "M", "")
    store.update_run_meta(engine, run.id, "Renamed", "m2", "Tamil")
    again = store.get_run(engine, run.id)
    assert again is not None
    assert (again.name, again.model, again.language) == ("Renamed", "m2", "Tamil")


def test_identical_bytes_open_the_existing_run(engine: Engine) -> None:
    """Dedupe by sha256: the same bytes under another name give the same run, created=False."""
    first = store.save_run(engine, BASE_CSV.encode(), "a_hindi.csv")
    second = store.save_run(engine, BASE_CSV.encode(), "renamed_copy.csv")
    assert second.created is False
    assert second.run.id == first.run.id
    assert second.run.name == "a_hindi"
    assert store.count_runs(engine) == 1
    assert _row_count(engine) == 4


def test_different_bytes_make_a_new_run(engine: Engine) -> None:
    """One changed byte is a different file and a different run; list_runs is newest first."""
    first = store.save_run(engine, BASE_CSV.encode(), "a.csv")
    second = store.save_run(engine, BASE_CSV.encode() + b"\n", "a.csv")
    assert second.created is True
    assert second.run.id != first.run.id
    assert [r.id for r in store.list_runs(engine)] == [second.run.id, first.run.id]
    assert store.find_run_by_sha(engine, first.run.sha256) == first.run


# --- item keys ---------------------------------------------------------------------------------


def test_item_keys_are_content_hashes_stable_across_uploads(engine: Engine) -> None:
    """Identical rows in different runs share a key; a changed row gets a new key."""
    base = store.save_run(engine, BASE_CSV.encode(), "base.csv").run
    corrected = store.save_run(engine, CORRECTED_CSV.encode(), "corrected.csv").run
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
    run = store.save_run(engine, BASE_CSV.encode(), "base.csv").run
    frame = store.load_scored(engine, run.id)
    assert frame["row_idx"].tolist() == [0, 1, 2, 3]
    assert frame["question"].tolist() == [
        "Capital of France?", "Largest planet?", "Author of Gitanjali?", "Blank one?",
    ]  # fmt: skip
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
    a = store.save_run(engine, BASE_CSV.encode(), "a.csv").run
    b = store.save_run(engine, CORRECTED_CSV.encode(), "b.csv").run
    assert len(store.load_scored(engine, a.id)) == 4
    assert len(store.load_scored(engine, b.id)) == 5


def test_sample_verdicts_match_scoring_core(engine: Engine) -> None:
    """The sample's stored verdicts equal a fresh score of the file."""
    run = store.ensure_sample(engine)
    assert run is not None
    stored = store.load_scored(engine, run.id)
    raw = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    fresh = score_frame(raw)
    assert stored["bucket"].tolist() == fresh["bucket"].tolist()
    assert stored["response"].tolist() == raw["response"].tolist()


# --- ensure_sample -----------------------------------------------------------------------------


def test_ensure_sample_only_on_an_empty_database(engine: Engine) -> None:
    """The bundled sample is loaded once, and never into a database that already has runs."""
    run = store.ensure_sample(engine)
    assert run is not None
    assert run.name == "Sample run"
    assert run.n_rows == 40
    assert store.ensure_sample(engine) is None
    assert store.count_runs(engine) == 1


def test_ensure_sample_skipped_when_a_run_exists(engine: Engine) -> None:
    """A database with a user's run gets no sample."""
    store.save_run(engine, BASE_CSV.encode(), "mine.csv")
    assert store.ensure_sample(engine) is None
    assert [r.name for r in store.list_runs(engine)] == ["mine"]


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
        store.save_run(engine, data, "bad_hindi.csv")
    assert fragment in str(info.value)
    assert store.count_runs(engine) == 0
    assert store.list_runs(engine) == []
    assert _row_count(engine) == 0


def test_bad_input_after_good_run_leaves_it_alone(engine: Engine) -> None:
    """A failed upload does not disturb existing runs."""
    good = store.save_run(engine, BASE_CSV.encode(), "good.csv").run
    with pytest.raises(InputError):
        store.save_run(engine, b"question,answer\nq,a\n", "bad.csv")
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
    """With neither, a SQLite file in root/data, whose folder is created."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    url = database_url(tmp_path)
    assert url == f"sqlite:///{tmp_path / 'data' / 'review.db'}"
    assert default_sqlite_path(tmp_path) == tmp_path / "data" / "review.db"
    assert (tmp_path / "data").is_dir()
    engine = make_engine(url)
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

    first = store.save_run(engine, data, "a.csv")
    monkeypatch.setattr(store, "find_run_by_sha", find_late)
    second = store.save_run(engine, data, "a.csv")
    assert first.created and not second.created
    assert second.run.id == first.run.id
    assert len(store.list_runs(engine)) == 1
