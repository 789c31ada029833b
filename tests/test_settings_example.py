"""``.streamlit/secrets.toml.example`` is where a user learns what can be set: every setting the
code reads is listed there, with a default that matches the code's. The list is the registry,
:data:`scoring.core.settings.SETTINGS`: the example shows each of its settings with its meaning and
default as a comment, and every setting name a reader defines is registered."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from scoring.core import limits, unicode_tables
from scoring.core.settings import SETTINGS
from scoring.judge.judge_settings import ENV_NAMES, JudgeSettings
from scoring.match import settings as match_settings
from scoring.review import loop
from scoring.review import roles as identity
from scoring.store import engine, samples

EXAMPLE = Path(__file__).resolve().parents[1] / ".streamlit" / "secrets.toml.example"
ROOT = Path(__file__).resolve().parents[1]


def _listed() -> dict[str, str]:
    """Every commented-out ``KEY = value`` line of the example."""
    found = re.findall(r"^# ([A-Z][A-Z0-9_]+) = (.+)$", EXAMPLE.read_text(encoding="utf-8"), re.M)
    return dict(found)


def _read_by_code() -> set[str]:
    """Every setting the code reads: the registry."""
    return set(SETTINGS)


def _named_by_readers() -> set[str]:
    """Every setting name the readers define as a constant or a judge setting."""
    names = {
        value
        for module in (identity, loop, limits, engine, samples, match_settings)
        for key, value in vars(module).items()
        if key.endswith(("_SETTING", "ENV_VAR")) and isinstance(value, str)
    }
    names |= set(ENV_NAMES.values()) | {unicode_tables.CACHE_ENV}
    state = (ROOT / "ui" / "state.py").read_text(encoding="utf-8")  # ui/ imports streamlit: read it as text
    names |= set(re.findall(r'^CACHE_SETTING = "([A-Z_]+)"', state, re.M))
    return names


def test_every_setting_the_code_reads_is_in_the_example() -> None:
    read = _read_by_code()
    assert {
        "REVIEW_TRUSTED_HEADER",
        "REVIEW_ADJUDICATORS",
        "REVIEW_REVIEWERS",
        "REVIEW_CACHE_MB",
        "JUDGE_CONCURRENCY",
    } <= read
    missing = sorted(read - set(_listed()))
    assert not missing, f"settings missing from {EXAMPLE.name}: {missing}"


def test_the_example_names_no_setting_the_code_does_not_read() -> None:
    stale = sorted(set(_listed()) - _read_by_code())
    assert not stale, f"{EXAMPLE.name} lists settings nothing reads: {stale}"


def test_the_judge_defaults_shown_are_the_code_defaults() -> None:
    listed = _listed()
    defaults = JudgeSettings()
    for field, name in ENV_NAMES.items():
        if field in ("base_url", "api_key", "model", "price_in_per_m", "price_out_per_m"):
            continue  # examples of values a user supplies, not defaults
        shown = listed[name].strip().strip('"')
        assert str(getattr(defaults, field)).lower() == shown.lower(), (name, shown)


def test_every_setting_a_reader_names_is_registered() -> None:
    named = _named_by_readers()
    assert {"REVIEW_DB_URL", "REVIEW_DB_LOCK_WAIT_MS", "UPLOAD_MAX_ROWS", "SCORING_CACHE_DIR"} <= named
    assert not sorted(named - set(SETTINGS)), "settings read but not in scoring.core.settings.SETTINGS"
    unread = {s.name for s in SETTINGS.values() if s.name not in named}
    assert not unread, f"registered settings no reader names: {sorted(unread)}"


def test_each_setting_is_shown_once_with_its_meaning_and_default_above_it() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    for name, spec in SETTINGS.items():
        at = [i for i, line in enumerate(lines) if line.startswith(f"# {name} = ")]
        assert len(at) == 1, (name, at)
        assert lines[at[0] - 1] == f"# {spec.comment}", name  # meaning, default, where it is read
        shown = lines[at[0]].split(" = ", 1)[1]
        assert shown == spec.shown_value, name
        value = tomllib.loads(f"x = {shown}")["x"]  # the line works once uncommented
        if spec.default is not None:
            assert value == spec.default and type(value) is type(spec.default), (name, value)


def test_the_example_is_valid_toml_once_its_settings_are_uncommented() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    body = "\n".join(line[2:] for line in text.splitlines() if re.match(r"^# [A-Z][A-Z0-9_]+ = ", line))
    assert set(tomllib.loads(body)) == set(SETTINGS)
