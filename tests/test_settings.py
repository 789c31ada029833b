"""One registry of settings (issue 28): each with its default and meaning, read by one rule (the
environment, then ``.streamlit/secrets.toml``, then the default), by getters that create nothing.
The registry's defaults are the readers' own; the example file is checked in
test_settings_example.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.core import limits, memo, unicode_tables
from scoring.core.settings import SETTINGS, default_of, lookup, read_secrets, setting
from scoring.judge.judge_settings import ENV_NAMES, JudgeSettings
from scoring.review import roles as identity
from scoring.store import ENV_VAR, database_url, default_sqlite_path, make_engine
from scoring.store.engine import BUSY_TIMEOUT_MS, LOCK_WAIT_SETTING, lock_wait_ms


def _secrets(root: Path, text: str) -> Path:
    (root / ".streamlit").mkdir(exist_ok=True)
    (root / ".streamlit" / "secrets.toml").write_text(text, encoding="utf-8")
    return root


def _tree(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


def test_every_setting_has_a_meaning_a_kind_and_a_reader() -> None:
    assert len(SETTINGS) >= 18
    for name, spec in SETTINGS.items():
        assert spec.name == name and name.isupper()
        assert spec.meaning.endswith((".", "?")) and "\n" not in spec.meaning, name
        assert spec.kind in ("text", "URL", "list", "yes/no", "whole number", "number", "folder"), name
        assert spec.read_by.startswith(("scoring.", "ui.")), name
        assert spec.default is not None or (spec.unset and spec.example), f"{name}: say what unset means"


def test_the_environment_wins_then_secrets_then_nothing(tmp_path: Path) -> None:
    root = _secrets(tmp_path, 'REVIEW_CACHE_MB = 64\nREVIEW_ADJUDICATORS = ["a", "b"]\nJUDGE_MODEL = ""\n')
    assert lookup("REVIEW_CACHE_MB", environ={"REVIEW_CACHE_MB": "32"}, root=root) == "32"
    assert lookup("REVIEW_CACHE_MB", environ={"REVIEW_CACHE_MB": ""}, root=root) == 64  # empty: unset
    assert lookup("REVIEW_ADJUDICATORS", environ={}, root=root) == ["a", "b"]  # as TOML typed it
    assert lookup("JUDGE_MODEL", environ={}, root=root) is None  # an empty key counts as unset
    assert lookup("REVIEW_REVIEWERS", environ={}, root=root) is None
    assert lookup("REVIEW_CACHE_MB", {"REVIEW_CACHE_MB": 8}, {}) == 8  # secrets already read
    with pytest.raises(KeyError):
        lookup("REVIEW_NOT_A_SETTING", environ={}, root=root)


def test_the_text_getter_keeps_its_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _secrets(tmp_path, "UPLOAD_MAX_ROWS = 10\n")
    monkeypatch.delenv("UPLOAD_MAX_ROWS", raising=False)
    assert setting("UPLOAD_MAX_ROWS", root) == "10"
    monkeypatch.setenv("UPLOAD_MAX_ROWS", "20")
    assert setting("UPLOAD_MAX_ROWS", root) == "20"
    monkeypatch.delenv("UPLOAD_MAX_COLUMNS", raising=False)
    assert setting("UPLOAD_MAX_COLUMNS", tmp_path / "nowhere") is None


def test_environment_only_settings_ignore_the_file(tmp_path: Path) -> None:
    root = _secrets(tmp_path, f'{LOCK_WAIT_SETTING} = 5\nSCORING_CACHE_DIR = "/x"\n')
    assert {s.name for s in SETTINGS.values() if not s.secrets} == {LOCK_WAIT_SETTING, "SCORING_CACHE_DIR"}
    assert lookup(LOCK_WAIT_SETTING, environ={}, root=root) is None
    assert lookup(LOCK_WAIT_SETTING, environ={LOCK_WAIT_SETTING: "5"}, root=root) == "5"
    assert lookup("SCORING_CACHE_DIR", environ={}, root=root) is None


def test_the_registry_defaults_are_the_readers_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = JudgeSettings()
    for field, name in ENV_NAMES.items():
        expected = getattr(judge, field)
        assert default_of(name) == (None if expected == "" else expected), name
    assert (limits.Limits().rows, limits.Limits().columns) == (
        default_of("UPLOAD_MAX_ROWS"),
        default_of("UPLOAD_MAX_COLUMNS"),
    )
    assert limits.Limits().unpacked_bytes == default_of("UPLOAD_MAX_UNPACKED_MB") * 2**20
    assert memo.DEFAULT_BUDGET == default_of("REVIEW_CACHE_MB") * 2**20
    assert BUSY_TIMEOUT_MS == default_of(LOCK_WAIT_SETTING)
    monkeypatch.delenv(LOCK_WAIT_SETTING, raising=False)
    assert lock_wait_ms() == BUSY_TIMEOUT_MS
    unset = identity.identity({}, {})
    assert unset.adjudicate_own is default_of(identity.ADJUDICATE_OWN_SETTING)
    assert unset.blind_audit is default_of(identity.BLIND_AUDIT_SETTING)
    assert unset.mode == "typed" and unset.adjudicators is None and unset.reviewers is None


def test_finding_the_database_url_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    before = _tree(tmp_path)
    url = database_url(tmp_path)
    assert url == f"sqlite:///{default_sqlite_path(tmp_path)}"
    assert _tree(tmp_path) == before and not (tmp_path / "data").exists()
    engine = make_engine(url)  # the folder is made where the engine is
    try:
        assert (tmp_path / "data" / "review.db").is_file()
    finally:
        engine.dispose()


def test_the_other_getters_create_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_CACHE_DIR", str(tmp_path / "cache"))
    before = _tree(tmp_path)
    assert read_secrets(tmp_path) == {}
    assert unicode_tables.cache_path().parent == tmp_path / "cache"
    JudgeSettings.from_env(environ={}, root=tmp_path)
    limits.current()
    lock_wait_ms()
    identity.identity(read_secrets(tmp_path), {})
    assert _tree(tmp_path) == before
