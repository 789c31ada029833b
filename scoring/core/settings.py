"""Where settings are read: the environment first, then ``.streamlit/secrets.toml`` (read without
streamlit, so the command line and the dashboard agree). In :mod:`scoring.core` so the file
readers can take their limits from it without importing the database layer."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def read_secrets(root: Path = PROJECT_ROOT) -> dict:
    """``.streamlit/secrets.toml`` as a dict, or empty when absent (read without streamlit)."""
    path = root / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return tomllib.load(fh)


def setting(name: str, root: Path | None = None) -> str | None:
    """A setting's raw value: the environment variable, else the top-level secrets key (under
    ``root``, by default :data:`PROJECT_ROOT`), else None."""
    raw = os.environ.get(name)
    if raw not in (None, ""):
        return raw
    found = read_secrets(root or PROJECT_ROOT).get(name)
    return None if found in (None, "") else str(found)
