"""``.streamlit/secrets.toml.example`` is where a user learns what can be set: every setting the
code reads is listed there, with a default that matches the code's."""

from __future__ import annotations

import re
from pathlib import Path

from scoring.core import limits
from scoring.judge.settings import ENV_NAMES, JudgeSettings
from scoring.review import identity
from scoring.store import engine

EXAMPLE = Path(__file__).resolve().parents[1] / ".streamlit" / "secrets.toml.example"
ROOT = Path(__file__).resolve().parents[1]


def _listed() -> dict[str, str]:
    """Every commented-out ``KEY = value`` line of the example."""
    found = re.findall(r"^# ([A-Z][A-Z0-9_]+) = (.+)$", EXAMPLE.read_text(encoding="utf-8"), re.M)
    return dict(found)


def _read_by_code() -> set[str]:
    """Every setting name the code defines as a constant or a judge setting."""
    names = {value for module in (identity, limits, engine) for key, value in vars(module).items()
             if key.endswith(("_SETTING", "ENV_VAR")) and isinstance(value, str)}  # fmt: skip
    names |= set(ENV_NAMES.values())
    state = (ROOT / "ui" / "state.py").read_text(encoding="utf-8")  # ui/ imports streamlit: read it as text
    names |= set(re.findall(r'^CACHE_SETTING = "([A-Z_]+)"', state, re.M))
    return names


def test_every_setting_the_code_reads_is_in_the_example() -> None:
    read = _read_by_code()
    assert {"REVIEW_TRUSTED_HEADER", "REVIEW_ADJUDICATORS", "REVIEW_REVIEWERS", "REVIEW_CACHE_MB",
            "JUDGE_CONCURRENCY"} <= read  # fmt: skip
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
