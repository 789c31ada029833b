"""Every setting the code reads, with its default and meaning (:data:`SETTINGS`), and the one rule
that reads them: the environment variable when set and not empty, else the top-level key of
``.streamlit/secrets.toml`` (read without streamlit, so the command line and the dashboard agree),
else the default. Two are read from the environment only, as they always were
(:attr:`Setting.secrets` is False): the SQLite lock wait, read on every new connection, and the
folder of the Unicode tables' cache.

Each reader keeps its own way of turning the value into a number, a list or a yes/no (and of
answering a value that is not one), documented where it is read; this module only finds the
value. The getters here have no side effects: they read, never create a file or folder.

Not settings in this sense: Streamlit's own ``[auth]`` table (sign-in, :mod:`scoring.review.roles`)
and the optional ``[judge]`` table of judge settings by field name (:mod:`scoring.judge.judge_settings`).
``.streamlit/secrets.toml.example`` shows every setting below, its meaning and its default
(``tests/test_settings_example.py`` keeps the two in step). In :mod:`scoring.core` so the file
readers can take their limits from it without importing the database layer.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Setting:
    """One setting: its name (the environment variable and the top-level secrets key), its default
    (None: unset, and :attr:`unset` says what that means), its kind and its meaning in one line."""

    name: str
    default: object
    kind: str  #: text, URL, list, yes/no, whole number, number or folder
    meaning: str
    read_by: str  #: the module that reads it
    unset: str = ""  #: what happens when a setting without a default is not set
    example: str = ""  #: a TOML value the example file shows for a setting without a default
    secrets: bool = True  #: also read from ``.streamlit/secrets.toml`` (else the environment only)

    @property
    def shown_default(self) -> str:
        """The default as the example file says it: a TOML value, or what unset means."""
        return self.unset if self.default is None else toml_value(self.default)

    @property
    def shown_value(self) -> str:
        """The value of the example file's commented-out line: the default, else an example."""
        return self.example if self.default is None else toml_value(self.default)

    @property
    def comment(self) -> str:
        """The example file's line above :attr:`shown_value`: the meaning, the default, and where
        the setting may be given."""
        where = "" if self.secrets else " Environment only: this file is not read for it."
        return f"{self.meaning} Default: {self.shown_default}.{where}"


def toml_value(value: object) -> str:
    """``value`` written as TOML writes it (true, 0.0, "text", [...])."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


_DB, _LIMITS = "scoring.store.engine", "scoring.core.limits"
_IDENTITY, _JUDGE = "scoring.review.roles", "scoring.judge.judge_settings"
_MATCH = "scoring.match.settings"
_ALL = [
    Setting(
        "REVIEW_DB_URL",
        None,
        "URL",
        "The database, as a SQLAlchemy URL; PostgreSQL needs its driver installed.",
        _DB,
        unset="the SQLite file data/review.db",
        example='"postgresql+psycopg://reviewer@localhost/review"',
    ),
    Setting(
        "REVIEW_SAMPLES",
        None,
        "yes/no",
        "Load the bundled sample runs into a database that has never held a run, for a first look (true), or "
        "never (false).",
        "scoring.store.samples",
        unset="the embedded default data/review.db only: a database named by REVIEW_DB_URL starts empty",
        example="false",
    ),
    Setting(
        "REVIEW_DB_LOCK_WAIT_MS",
        30_000,
        "whole number",
        "How long a writer waits for SQLite's write lock, in milliseconds.",
        _DB,
        secrets=False,
    ),
    Setting(
        "REVIEW_CACHE_MB",
        1024,
        "number",
        "Memory the dashboard may use to keep runs open (rows, verdicts, search indexes), in MiB; least "
        "recently used runs are dropped first.",
        "ui.state",
    ),
    Setting(
        "UPLOAD_MAX_ROWS", 2_000_000, "whole number", "The most rows a file (upload or command) may have.", _LIMITS
    ),
    Setting("UPLOAD_MAX_COLUMNS", 1_000, "whole number", "The most columns a file may have.", _LIMITS),
    Setting(
        "UPLOAD_MAX_UNPACKED_MB",
        2048,
        "number",
        "The most a file may unpack to (gzip, Parquet, .eval zips), in MiB.",
        _LIMITS,
    ),
    Setting(
        "REVIEW_TRUSTED_HEADER",
        None,
        "text",
        "The request header in which a reverse proxy names the reviewer (only safe behind a proxy that "
        "strips it from clients' requests).",
        _IDENTITY,
        unset="unset (with [auth], the signed-in account; else a name typed in the sidebar)",
        example='"X-Forwarded-Email"',
    ),
    Setting(
        "REVIEW_ADJUDICATORS",
        None,
        "list",
        "Who may adjudicate conflicts (comma-separated, or a TOML list).",
        _IDENTITY,
        unset="unset (everyone may)",
        example='["lead@example.org"]',
    ),
    Setting(
        "REVIEW_REVIEWERS",
        None,
        "list",
        "Who may mark at all; adjudicators always may.",
        _IDENTITY,
        unset="unset (everyone may)",
        example='["asha@example.org", "bina@example.org"]',
    ),
    Setting(
        "REVIEW_ADJUDICATE_OWN",
        True,
        "yes/no",
        "May an adjudicator decide a row they marked themselves (the card warns them)? Any value but true, "
        "yes, on or 1 forbids it.",
        _IDENTITY,
    ),
    Setting(
        "REVIEW_BLIND_AUDIT",
        True,
        "yes/no",
        "Review the random sample blind (without the metrics' verdicts, their highlighting or the judge's "
        "label)? Only false, no, off or 0 turns it off.",
        _IDENTITY,
    ),
    Setting(
        "REVIEW_MIN_SHOWN_MS",
        150,
        "whole number",
        "A verdict key or button pressed on a row shown for less than this many milliseconds saves nothing "
        "(the card asks to press again): faster than anyone can react to a new row, so a double tap never "
        "marks the next row unseen. 0 turns it off.",
        "scoring.review.loop",
    ),
    Setting(
        "OPENAI_BASE_URL",
        None,
        "URL",
        "The judge's OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio).",
        _JUDGE,
        unset="unset (no judge runs)",
        example='"http://localhost:8000/v1"',
    ),
    Setting(
        "OPENAI_API_KEY",
        None,
        "text",
        "The judge endpoint's API key (never shown or stored).",
        _JUDGE,
        unset="unset (no key sent)",
        example='"sk-..."',
    ),
    Setting(
        "JUDGE_MODEL",
        None,
        "text",
        "The judge's model name.",
        _JUDGE,
        unset="unset (no judge runs)",
        example='"my-judge-model"',
    ),
    Setting("JUDGE_TEMPERATURE", 0.0, "number", "The judge's sampling temperature.", _JUDGE),
    Setting("JUDGE_SEED", 0, "whole number", "The judge's sampling seed.", _JUDGE),
    Setting("JUDGE_MAX_TOKENS", 512, "whole number", "The most tokens a judge reply may have.", _JUDGE),
    Setting("JUDGE_TIMEOUT", 60.0, "number", "Seconds a judge request may take.", _JUDGE),
    Setting("JUDGE_CONCURRENCY", 8, "whole number", "Judge requests at once.", _JUDGE),
    Setting("JUDGE_MAX_RETRIES", 2, "whole number", "Retries of a failed judge request.", _JUDGE),
    Setting(
        "JUDGE_STRUCTURED",
        True,
        "yes/no",
        "Ask the judge for JSON-schema output (plain text where the server refuses it).",
        _JUDGE,
    ),
    Setting(
        "JUDGE_PRICE_IN_PER_M",
        None,
        "number",
        "Price per million input tokens, for a judge run's cost line.",
        _JUDGE,
        unset="unset (no cost shown)",
        example="0.15",
    ),
    Setting(
        "JUDGE_PRICE_OUT_PER_M",
        None,
        "number",
        "Price per million output tokens, for a judge run's cost line.",
        _JUDGE,
        unset="unset (no cost shown)",
        example="0.60",
    ),
    Setting(
        "MATCH_CHRF_THRESHOLD",
        30.0,
        "number",
        "The chrF score (0-100, sacrebleu's default chrF) from which the optional chrF matcher calls a row correct.",
        _MATCH,
    ),
    Setting(
        "MATCH_TARGET_PRECISION",
        0.95,
        "number",
        "The precision (a share) a matcher must reach against people for the matchers report to recommend it.",
        _MATCH,
    ),
    Setting(
        "SCORING_CACHE_DIR",
        None,
        "folder",
        "The folder the metrics' Unicode tables are cached in.",
        "scoring.core.unicode_tables",
        unset="$XDG_CACHE_HOME/answer-review, else answer-review in the temp folder",
        example='"/var/cache/answer-review"',
        secrets=False,
    ),
]
#: Every setting by name, in the order ``.streamlit/secrets.toml.example`` shows them.
SETTINGS: dict[str, Setting] = {s.name: s for s in _ALL}


def default_of(name: str) -> Any:
    """The default of the setting ``name`` (None: unset)."""
    return SETTINGS[name].default


def read_secrets(root: Path = PROJECT_ROOT) -> dict:
    """``.streamlit/secrets.toml`` as a dict, or empty when absent (read without streamlit)."""
    path = root / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return tomllib.load(fh)


def lookup(
    name: str, secrets: Mapping | None = None, environ: Mapping[str, str] | None = None, root: Path | None = None
) -> object:
    """The value of the registered setting ``name`` as given, or None when it is not given: the
    environment variable when set and not empty, else the top-level secrets key as TOML typed it
    (a list, a bool, a number; an empty string counts as unset), unless the setting is read from
    the environment only. ``secrets``: the file already read (else it is read under ``root``, by
    default :data:`PROJECT_ROOT`); ``environ``: by default :data:`os.environ`. An unregistered
    name is a KeyError: every setting is listed in :data:`SETTINGS`."""
    spec = SETTINGS[name]
    raw = (os.environ if environ is None else environ).get(name)
    if raw not in (None, ""):
        return raw
    if not spec.secrets:
        return None
    found = (read_secrets(root or PROJECT_ROOT) if secrets is None else secrets).get(name)
    return None if found is None or found == "" else found


def setting(name: str, root: Path | None = None) -> str | None:
    """A setting's raw value as text (:func:`lookup`: the environment variable, else the top-level
    secrets key under ``root``, by default :data:`PROJECT_ROOT`), else None."""
    found = lookup(name, root=root)
    return None if found is None else str(found)
