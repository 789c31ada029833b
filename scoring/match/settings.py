"""The matchers' two settings: the chrF threshold and the precision the recommendation must reach.

Read with :func:`scoring.core.settings.lookup` (environment, else ``.streamlit/secrets.toml``, else
the default); a value that is not a number in range is an :class:`~scoring.core.errors.InputError`
naming the setting.
"""

from __future__ import annotations

from scoring.core.errors import InputError
from scoring.core.settings import default_of, lookup

CHRF_THRESHOLD_SETTING = "MATCH_CHRF_THRESHOLD"
TARGET_PRECISION_SETTING = "MATCH_TARGET_PRECISION"


def _number(name: str, low: float, high: float) -> float:
    raw = lookup(name)
    if raw is None:
        return float(default_of(name))
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InputError(f"The setting {name} must be a number, not {raw!r}.") from None
    if not low <= value <= high:
        raise InputError(f"The setting {name} must be between {low:g} and {high:g}, not {value:g}.")
    return value


def chrf_threshold() -> float:
    """The chrF score (0-100) from which the chrF matcher calls a row correct."""
    return _number(CHRF_THRESHOLD_SETTING, 0.0, 100.0)


def target_precision() -> float:
    """The precision (a share) a matcher must reach for the recommendation to pick it."""
    return _number(TARGET_PRECISION_SETTING, 0.0, 1.0)
